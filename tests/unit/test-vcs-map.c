/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filesystem type -> VCS image table (route/vcs-map.c): precedence of
 * every pair of sources, a ConfigMap read through one resolution of its
 * ..data link, and each hostile input of THREATS.md's parser rules (bad
 * JSON, huge files, symlinks, control characters, "..", empty strings,
 * duplicates, unknown policies): a one-line warning naming the file and the
 * cause, that source dropped, every other source kept.
 */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fileio.h"
#include "test-helpers.h"
#include "vcs-map.h"

static void put(const char *dir, const char *name, const char *text) {
        char *p = test_join(dir, name);
        FILE *f = fopen(p, "we");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        free(p);
}

static char *subdir(const char *tmp, const char *name) {
        char *p = test_join(tmp, name);

        assert_int_equal(mkdir(p, 0755), 0);
        return p;
}

/* A fresh temp dir with an empty vcs.d and configmap below it. */
struct fixture {
        char *tmp, *dir, *cm;
        struct vcs_map *m;
        struct km_error err;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        f->tmp = test_mkdtemp();
        f->dir = subdir(f->tmp, "vcs.d");
        f->cm = subdir(f->tmp, "cm");
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        vcs_map_free(f->m);
        free(f->dir);
        free(f->cm);
        test_rm_rf(f->tmp);
        free(f);
        return 0;
}

/* Loads f's sources (the configmap only when asked) and the command line argv. */
static int load(struct fixture *f, bool defaults, bool configmap, const char *const *argv) {
        struct vcs_map_sources s = {
                .command_line = (char *const *)argv,
                .n_command_line = argv ? (size_t)test_argc(argv) : 0,
                .configmap_dir = configmap ? f->cm : NULL,
                .config_dir = f->dir,
                .config_dir_named = true,
                .no_defaults = !defaults,
        };

        vcs_map_free(f->m);
        f->m = NULL;
        f->err = (struct km_error){};
        int r = vcs_map_load(&s, &f->m, &f->err);
        for (size_t i = 0; r == 0 && i < f->m->n_warnings; i++)
                test_note("warning: %s", f->m->warnings[i]);
        if (r < 0)
                test_note("error: %s", f->err.message);
        return r;
}

static void expect_entry(struct fixture *f, const char *type, const char *image, enum vcs_policy policy, bool daemon,
                         const char *source) {
        const struct vcs_entry *e = vcs_map_find(f->m, type);

        assert_non_null(e);
        if (image)
                assert_string_equal(e->image, image);
        else
                assert_null(e->image);
        assert_int_equal(e->policy, policy);
        assert_int_equal(e->daemon, daemon);
        assert_string_equal(e->source, source);
}

/* The only warning, which must hold each of the given fragments. */
static void expect_warning(struct fixture *f, const char *a, const char *b) {
        assert_int_equal(f->m->n_warnings, 1);
        assert_null(strchr(f->m->warnings[0], '\n'));
        assert_non_null(strstr(f->m->warnings[0], a));
        if (b)
                assert_non_null(strstr(f->m->warnings[0], b));
}

static void test_defaults(void **state) {
        struct fixture *f = *state;

        assert_int_equal(load(f, true, false, NULL), 0);
        assert_int_equal(f->m->n, 15);
        assert_int_equal(f->m->n_warnings, 0);
        for (size_t i = 1; i < f->m->n; i++)
                assert_true(strcmp(f->m->entries[i - 1].type, f->m->entries[i].type) < 0);
        expect_entry(f, "nfs", "nfs:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "nfs4", "nfs:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "glusterfs", "glusterfs:latest", VCS_POLICY_AUTO, true, "default");
        expect_entry(f, "ceph", "rbd:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "cifs", "cifs:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "smb3", "cifs:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "fuse.sshfs", "fuse-tools:latest", VCS_POLICY_AUTO, true, "default");
        /* The multi-call tools' types (vcs-tools.h). */
        expect_entry(f, "ext4", "fuse-tools:latest", VCS_POLICY_AUTO, false, "default");
        /* The host's: mkfs.xfs and xfs_growfs need CAP_SYS_ADMIN of the host, and a privileged default of
         * a mutable tag would be host root for whoever pushes it (a vcs.d entry pinned by digest opts in). */
        expect_entry(f, "xfs", NULL, VCS_POLICY_HOST, false, "default");
        /* iscsiadm's: iscsid needs NETLINK_ISCSI, CAP_SYS_ADMIN of the host; the same opt-in. */
        expect_entry(f, "iscsi", NULL, VCS_POLICY_HOST, false, "default");
        expect_entry(f, "block-tools", "fuse-tools:latest", VCS_POLICY_AUTO, false, "default");
        /* Unprivileged, every one. */
        for (size_t i = 0; i < f->m->n; i++)
                assert_false(f->m->entries[i].privileged);
        assert_null(vcs_map_find(f->m, "btrfs"));
}

/* Each pair of the four sources on a type of its own, and a later vcs.d file over an earlier one. */
static void test_precedence(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "nfs=cli/nfs:1", "cifs=cli/cifs:1", "--fuse.s3fs_mount_container=cli/s3:1", NULL };
        char *a = test_join(f->dir, "10-a.json"), *b = test_join(f->dir, "20-b.json"), *cm = NULL;

        put(f->dir, "10-a.json",
            "{\"mappings\": [{\"types\": [\"glusterfs\", \"fuse.s3fs\", \"ceph-fuse\", \"9p\"], \"image\": \"a/x:1\"},"
            " {\"types\": [\"cifs\"], \"image\": \"a/cifs:1\", \"policy\": \"container\"}]}");
        put(f->dir, "20-b.json", "{\"mappings\": [{\"types\": [\"9p\"], \"policy\": \"host\"}]}");
        put(f->dir, "README", "not JSON, not *.json: not read");
        put(f->cm, "volume-plugin", "nfs4\n");
        put(f->cm, "docker-container", "cm/nfs:1\n");
        put(f->cm, "mappings",
            "{\"mappings\": [{\"types\": [\"cifs\", \"ceph-fuse\"], \"image\": \"cm/x:1\", \"daemon\": true}]}");
        assert_true(asprintf(&cm, "configmap %s", f->cm) > 0);

        assert_int_equal(load(f, true, true, argv), 0);
        assert_int_equal(f->m->n_warnings, 0);
        /* command line over default, configmap, file */
        expect_entry(f, "nfs", "cli/nfs:1", VCS_POLICY_CONTAINER, false, "command line");
        expect_entry(f, "cifs", "cli/cifs:1", VCS_POLICY_CONTAINER, false, "command line");
        expect_entry(f, "fuse.s3fs", "cli/s3:1", VCS_POLICY_CONTAINER, true, "command line");
        /* configmap over default and file */
        expect_entry(f, "nfs4", "cm/nfs:1", VCS_POLICY_AUTO, false, cm);
        expect_entry(f, "ceph-fuse", "cm/x:1", VCS_POLICY_AUTO, true, cm);
        /* file over default; the later file over the earlier one, whole (no image kept) */
        expect_entry(f, "glusterfs", "a/x:1", VCS_POLICY_AUTO, true, a);
        expect_entry(f, "9p", NULL, VCS_POLICY_HOST, false, b);
        expect_entry(f, "ceph", "rbd:latest", VCS_POLICY_AUTO, false, "default");

        /* Without the higher sources, the lower ones show through. */
        assert_int_equal(load(f, true, false, NULL), 0);
        expect_entry(f, "nfs", "nfs:latest", VCS_POLICY_AUTO, false, "default");
        expect_entry(f, "cifs", "a/cifs:1", VCS_POLICY_CONTAINER, false, a);
        expect_entry(f, "ceph-fuse", "a/x:1", VCS_POLICY_AUTO, true, a);
        free(a);
        free(b);
        free(cm);
}

/* The kubelet's layout: keys are links into ..data, which points at a timestamped directory. */
static void configmap_version(struct fixture *f, const char *version, const char *image) {
        char *v = subdir(f->cm, version), *tmp_link = test_join(f->cm, "..data_tmp"),
             *data = test_join(f->cm, "..data");

        put(v, "volume-plugin", "nfs");
        put(v, "docker-container", image);
        assert_int_equal(symlink(version, tmp_link), 0);
        assert_int_equal(rename(tmp_link, data), 0);
        free(v);
        free(tmp_link);
        free(data);
}

static void test_configmap_data_link(void **state) {
        struct fixture *f = *state;
        char *key1 = test_join(f->cm, "volume-plugin"), *key2 = test_join(f->cm, "docker-container"), *data = NULL;

        configmap_version(f, "..2026_11_26_10_00_00.1", "cm/nfs:1");
        assert_int_equal(symlink("..data/volume-plugin", key1), 0);
        assert_int_equal(symlink("..data/docker-container", key2), 0);
        assert_int_equal(load(f, false, true, NULL), 0);
        assert_int_equal(f->m->n_warnings, 0);
        assert_string_equal(vcs_map_find(f->m, "nfs")->image, "cm/nfs:1");

        /* The swap: new loads see the new version. */
        configmap_version(f, "..2026_11_26_10_05_00.2", "cm/nfs:2");
        assert_int_equal(load(f, false, true, NULL), 0);
        assert_int_equal(f->m->n_warnings, 0);
        assert_string_equal(vcs_map_find(f->m, "nfs")->image, "cm/nfs:2");

        /* ..data pointing out of the directory is not followed. */
        data = test_join(f->cm, "..data");
        assert_int_equal(unlink(data), 0);
        assert_int_equal(symlink("/etc", data), 0);
        assert_int_equal(load(f, false, true, NULL), 0);
        expect_warning(f, "..data: leads out of the directory", "ignored");
        assert_int_equal(f->m->n, 0);
        free(key1);
        free(key2);
        free(data);
}

static void test_configmap_plain(void **state) {
        struct fixture *f = *state;
        char *link = test_join(f->cm, "docker-container");

        /* A plain directory: the files themselves; a key that is a symlink is refused. */
        put(f->cm, "volume-plugin", "glusterfs");
        assert_int_equal(symlink("/etc/hostname", link), 0);
        assert_int_equal(load(f, true, true, NULL), 0);
        expect_warning(f, "docker-container: not a regular file", "ignored");
        expect_entry(f, "glusterfs", "glusterfs:latest", VCS_POLICY_AUTO, true, "default");

        /* One key without the other. */
        assert_int_equal(unlink(link), 0);
        assert_int_equal(load(f, true, true, NULL), 0);
        expect_warning(f, "volume-plugin without docker-container", NULL);

        /* The same type in the single entry and in mappings. */
        put(f->cm, "docker-container", "gl:1");
        put(f->cm, "mappings", "{\"mappings\": [{\"types\": [\"glusterfs\"], \"image\": \"gl:2\"}]}");
        assert_int_equal(load(f, true, true, NULL), 0);
        expect_warning(f, "mapped twice", "volume-plugin");
        expect_entry(f, "glusterfs", "glusterfs:latest", VCS_POLICY_AUTO, true, "default");

        /* A missing ConfigMap directory: a warning, the rest kept. */
        test_rm_rf(f->cm);
        f->cm = test_join(f->tmp, "cm");
        assert_int_equal(load(f, true, true, NULL), 0);
        expect_warning(f, "cannot open", NULL);
        assert_int_equal(f->m->n, 15); /* the defaults */
        free(link);
}

/* One bad file in vcs.d: the warning names it and why; the file alone is dropped. */
static void expect_bad_file(struct fixture *f, const char *text, const char *why) {
        char *path = test_join(f->dir, "50-bad.json");
        const struct vcs_entry *good;

        if (text)
                put(f->dir, "50-bad.json", text);
        assert_int_equal(load(f, true, true, NULL), 0);
        expect_warning(f, path, why);
        good = vcs_map_find(f->m, "cifs");
        assert_non_null(good);
        assert_string_equal(good->image, "good/cifs:1");
        assert_non_null(strstr(good->source, "10-good.json"));
        /* The bad file's types keep what the lower and higher sources say. */
        expect_entry(f, "ceph", "rbd:latest", VCS_POLICY_AUTO, false, "default");
        assert_string_equal(vcs_map_find(f->m, "nfs")->image, "cm/nfs:1");
        assert_int_equal(unlink(path), 0);
        free(path);
}

static void test_hostile_files(void **state) {
        struct fixture *f = *state;
        char big[64];
        char *path = test_join(f->dir, "50-bad.json");
        FILE *fp;

        put(f->dir, "10-good.json", "{\"mappings\": [{\"types\": [\"cifs\"], \"image\": \"good/cifs:1\"}]}");
        put(f->cm, "volume-plugin", "nfs");
        put(f->cm, "docker-container", "cm/nfs:1");

        expect_bad_file(f, "{\"mappings\": [", "invalid JSON at line");
        expect_bad_file(f, "", "empty");
        expect_bad_file(f, "[]", "not a JSON object");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"policy\": \"sometimes\"}]}",
                        "mappings[0].policy: unknown policy \"sometimes\"");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\\n\"], \"image\": \"x:1\"}]}", "control character");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"fuse..x\"], \"image\": \"x:1\"}]}", "contains '..'");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"../ceph\"], \"image\": \"x:1\"}]}", "contains '..'");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"\"], \"image\": \"x:1\"}]}", "types[0]: type is empty");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"\"}]}", "image reference is empty");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\\u001b[2J\"}]}",
                        "image reference contains a control character");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x@sha256:../../x\"}]}",
                        "image reference");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"]}]}", "an image is required");
        expect_bad_file(f, "{\"mappings\": [{\"types\": []}]}", "names no type");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"fuse.sshfs\"], \"image\": \"x:1\", \"daemon\": false}]}",
                        "daemon cannot be false");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"imgae\": \"y\"}]}",
                        "unknown member \"imgae\" (types, image, policy, daemon, options, privileged)");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"privileged\": \"true\"}]}",
                        "mappings[0].privileged: must be a boolean, not a string");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"privileged\": 1}]}",
                        "mappings[0].privileged: must be a boolean, not an integer");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"privileged\": null}]}",
                        "mappings[0].privileged: must be a boolean, not null");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"nfs\"], \"image\": \"x:1\", \"options\": \"a\\nb\"}]}",
                        "mappings[0].types[0]: options: ");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"nfs\"], \"image\": \"x:1\", \"options\": 7}]}",
                        "mappings[0].options");
        expect_bad_file(f, "{\"mappings\": {}}", "mappings");
        expect_bad_file(f,
                        "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\"}, {\"types\": [\"ceph\"],"
                        " \"image\": \"y:1\"}]}",
                        "mappings[1].types[0]: type ceph is mapped twice in one source (also at ");
        expect_bad_file(f, "{\"mappings\": [{\"types\": [\"ceph\", \"ceph\"], \"image\": \"x:1\"}]}", "types[0])");

        /* Larger than the limit: refused before it is parsed. */
        fp = fopen(path, "we");
        assert_non_null(fp);
        fputs("{\"mappings\": [], \"pad\": \"", fp);
        memset(big, 'x', sizeof(big));
        for (size_t i = 0; i < (JSON_FILE_MAX / sizeof(big)) + 1; i++)
                fwrite(big, 1, sizeof(big), fp);
        fputs("\"}", fp);
        assert_int_equal(fclose(fp), 0);
        expect_bad_file(f, NULL, "larger than");

        /* A symlink, even to a good file; a FIFO must not hang the load. */
        assert_int_equal(symlink("10-good.json", path), 0);
        expect_bad_file(f, NULL, "symlink");
        assert_int_equal(mkfifo(path, 0600), 0);
        expect_bad_file(f, NULL, "not a regular file");
        free(path);
}

/* A warning names a file whose name holds a newline on one line. */
static void test_file_name_with_newline(void **state) {
        struct fixture *f = *state;

        put(f->dir, "bad\nname.json", "junk");
        assert_int_equal(load(f, false, false, NULL), 0);
        expect_warning(f, "bad?name.json", "invalid JSON");
        /* named once, not once by the loader and once by the reader */
        assert_null(strstr(strstr(f->m->warnings[0], "bad?name.json") + 1, "bad?name.json"));
}

static void test_hostile_command_line(void **state) {
        static const struct {
                const char *argv[3];
                const char *message;
        } cases[] = {
                { { "nfs", NULL }, "command line: --vcs-image nfs: expected TYPE=REF" },
                { { "=x:1", NULL }, "command line: --vcs-image =x:1: type is empty (\"\")" },
                { { "nfs=", NULL }, "command line: --vcs-image nfs=: image reference is empty" },
                { { "n\tfs=x:1", NULL }, "command line: --vcs-image n?fs=x:1: type contains a control character" },
                { { "nfs=x:1\n", NULL }, "command line: --vcs-image nfs=x:1?: image reference contains a control" },
                { { "../x=x:1", NULL }, "command line: --vcs-image ../x=x:1: type contains '..'" },
                { { "nfs=x:1", "--nfs_mount_container=y:1" },
                  "command line: --nfs_mount_container=y:1: type nfs is mapped twice in one source (also at "
                  "command line: --vcs-image nfs=x:1)" },
                { { "--nfs_mount_container", NULL }, "command line: --nfs_mount_container: needs =REF" },
                { { "--_mount_container=x:1", NULL }, "command line: --vcs-image --_mount_container=x:1: type must" },
        };
        struct fixture *f = *state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                assert_int_equal(load(f, true, false, cases[i].argv), -EINVAL);
                assert_null(f->m);
                assert_int_equal(strncmp(f->err.message, cases[i].message, strlen(cases[i].message)), 0);
        }
        assert_true(vcs_map_is_container_option("--nfs_mount_container=x"));
        assert_true(vcs_map_is_container_option("--fuse.sshfs_mount_container"));
        assert_false(vcs_map_is_container_option("--_mount_container=x"));
        assert_false(vcs_map_is_container_option("--vcs-image"));
        assert_false(vcs_map_is_container_option("nfs_mount_container=x"));
        assert_false(vcs_map_is_container_option("--x=a_mount_container"));
}

/* A lower source's bad file does not hide a higher source's good entry, nor the reverse. */
static void test_bad_lower_and_higher(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "ceph=cli/ceph:1", NULL };

        put(f->dir, "10-bad.json", "{\"mappings\": [{\"types\": [\"ceph\"], \"image\": \"x:1\", \"policy\": \"?\"}]}");
        put(f->dir, "20-good.json", "{\"mappings\": [{\"types\": [\"nfs\"], \"image\": \"file/nfs:1\"}]}");
        put(f->cm, "volume-plugin", "nfs");
        put(f->cm, "docker-container", "BAD REF");
        assert_int_equal(load(f, true, true, argv), 0);
        assert_int_equal(f->m->n_warnings, 2);
        expect_entry(f, "ceph", "cli/ceph:1", VCS_POLICY_CONTAINER, false, "command line");
        assert_string_equal(vcs_map_find(f->m, "nfs")->image, "file/nfs:1");
}

/*
 * "privileged": false by default, per entry, from a file, shown whole by the higher source; a ConfigMap's
 * entry that asks for it is ignored with a warning naming it (whoever may edit one ConfigMap would get host
 * root on every node), the rest of the ConfigMap applies.
 */
static void test_privileged(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "fuse.kmcli=cli/x:1", NULL };
        const struct vcs_entry *e;

        put(f->dir, "10-a.json",
            "{\"mappings\": [{\"types\": [\"kmiscsi\", \"kmraw\"], \"image\": "
            "\"a/iscsi@sha256:abababababababababababababababababababababababababababababababab\", \"privileged\": "
            "true},"
            " {\"types\": [\"kmplain\"], \"image\": \"a/plain:1\", \"privileged\": false},"
            " {\"types\": [\"kmdefault\", \"fuse.kmcli\"], \"image\": "
            "\"a/d@sha256:abababababababababababababababababababababababababababababababab\", \"privileged\": true}]}");
        put(f->cm, "mappings",
            "{\"mappings\": [{\"types\": [\"kmraw\"], \"image\": \"cm/raw:1\"},"
            " {\"types\": [\"kmplain\"], \"image\": \"cm/plain:1\", \"privileged\": true}]}");
        assert_int_equal(load(f, false, true, argv), 0);
        expect_warning(f, "mappings[1]: \"privileged\" is taken only from /etc/kubemount/vcs.d and the command line",
                       "never from a ConfigMap; entry ignored");
        assert_non_null(strstr(f->m->warnings[0], f->cm));
        assert_true(vcs_map_find(f->m, "kmiscsi")->privileged);
        assert_true(vcs_map_find(f->m, "kmdefault")->privileged);
        /* The highest source gives the whole entry: the ConfigMap's says nothing, so unprivileged. */
        e = vcs_map_find(f->m, "kmraw");
        assert_string_equal(e->image, "cm/raw:1");
        assert_false(e->privileged);
        /* The ConfigMap's privileged kmplain is not taken: the file's unprivileged one is. */
        e = vcs_map_find(f->m, "kmplain");
        assert_string_equal(e->image, "a/plain:1");
        assert_false(e->privileged);
        /* The command line maps unprivileged entries only. */
        e = vcs_map_find(f->m, "fuse.kmcli");
        assert_string_equal(e->source, "command line");
        assert_false(e->privileged);

        /* A privileged entry's image by a tag (mutable: whoever pushes it is host root): the file is dropped. */
        put(f->dir, "10-a.json",
            "{\"mappings\": [{\"types\": [\"kmiscsi\"], \"image\": \"a/iscsi:1\", \"privileged\": true}]}");
        assert_int_equal(load(f, false, false, NULL), 0);
        expect_warning(f, "a privileged entry must pin its image by digest (NAME@sha256:...)", "ignored");
        assert_null(vcs_map_find(f->m, "kmiscsi"));
}

/* vcs_map_add_json: the schema alone (what the fuzz target drives). */
static void test_add_json(void **state) {
        struct vcs_map *m = vcs_map_new();
        struct km_error err = {};
        json_t *doc = json_loads("{\"mappings\": [{\"types\": [\"b\", \"a\"], \"image\": \"x:1\"}]}", 0, NULL);

        assert_non_null(m);
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), 0);
        assert_int_equal(m->n, 2);
        assert_string_equal(m->entries[0].type, "a");
        assert_null(m->entries[0].options);
        json_decref(doc);
        doc = json_loads("{\"mappings\": [{\"types\": [\"nfs\"], \"image\": \"x:1\", \"options\": \"nolock,vers=3\"}]}",
                         0, NULL);
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), 0);
        assert_string_equal(vcs_map_find(m, "nfs")->options, "nolock,vers=3");
        assert_false(vcs_map_find(m, "nfs")->privileged);
        json_decref(doc);
        doc = json_loads(
                "{\"mappings\": [{\"types\": [\"iscsi\"], \"image\": "
                "\"x@sha256:abababababababababababababababababababababababababababababababab\", "
                "\"privileged\": true}]}",
                0, NULL);
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), 0);
        assert_true(vcs_map_find(m, "iscsi")->privileged);
        json_decref(doc);
        doc = json_loads("{\"mappings\": [{\"types\": [\"iscsi\"], \"image\": \"x:1\", \"privileged\": \"yes\"}]}", 0,
                         NULL);
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), -EINVAL);
        assert_string_equal(err.message, "doc: mappings[0].privileged: must be a boolean, not a string");
        assert_true(vcs_map_find(m, "iscsi")->privileged); /* all or nothing: the table is as it was */
        json_decref(doc);
        doc = json_loads("{}", 0, NULL);
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), -EINVAL);
        assert_string_equal(err.message, "doc: mappings: is required");
        assert_int_equal(m->n, 4);
        json_decref(doc);
        vcs_map_free(m);
}

static void test_images(void **state) {
        struct vcs_map *m = vcs_map_new();
        struct km_error err = {};
        char **refs = NULL;
        char *const some[] = { (char *)"c", (char *)"a", NULL }, *const bad[] = { (char *)"nope", NULL };
        json_t *doc = json_loads(
                "{\"mappings\": [{\"types\": [\"a\", \"b\"], \"image\": \"x:1\"},"
                "{\"types\": [\"c\"], \"image\": \"y:1\"},"
                "{\"types\": [\"d\"], \"policy\": \"host\"}]}",
                0, NULL);

        (void)state;
        assert_int_equal(vcs_map_add_json(m, doc, "doc", &err), 0);
        /* All: each image once, in the table's order; a host-only entry has none. */
        assert_int_equal(vcs_map_images(m, NULL, &refs, &err), 0);
        assert_string_equal(refs[0], "x:1");
        assert_string_equal(refs[1], "y:1");
        assert_null(refs[2]);
        km_strv_free(refs);
        assert_int_equal(vcs_map_images(m, some, &refs, &err), 0);
        assert_string_equal(refs[0], "x:1");
        assert_string_equal(refs[1], "y:1");
        assert_null(refs[2]);
        km_strv_free(refs);
        refs = NULL;
        assert_int_equal(vcs_map_images(m, bad, &refs, &err), -EINVAL);
        assert_string_equal(err.message, "no mapping for type 'nope' (see kubemount vcs list)");
        assert_null(refs);
        json_decref(doc);
        vcs_map_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
                cmocka_unit_test_setup_teardown(test_configmap_data_link, setup, teardown),
                cmocka_unit_test_setup_teardown(test_configmap_plain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hostile_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_name_with_newline, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hostile_command_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_lower_and_higher, setup, teardown),
                cmocka_unit_test_setup_teardown(test_privileged, setup, teardown),
                cmocka_unit_test(test_add_json),
                cmocka_unit_test(test_images),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
