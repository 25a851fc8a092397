/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.json: spec_parse/spec_from_json on a realistic document and on hostile ones (one broken field each;
 * the message must name the field), the mount option table and the limits; spec_generate_vcs in
 * test-spec-generate.c.  Run under ASan for leaks.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "seccomp-filter.h"
#include "spec.h"
#include "test-helpers.h"

/* A malloc'ed copy of s with ' turned into ", so that JSON in C strings stays readable. */
static char *q(const char *s) {
        char *r = strdup(s);

        assert_non_null(r);
        for (char *c = r; *c; c++)
                if (*c == '\'')
                        *c = '"';
        return r;
}

static json_t *load(const char *text) {
        char *t = q(text);
        json_error_t je;
        json_t *j = json_loads(t, JSON_DECODE_ANY, &je);

        if (!j)
                fail_msg("test JSON '%s': %s", t, je.text);
        free(t);
        return j;
}

static const char base_doc[] =
        "{'ociVersion': '1.0.2',"
        " 'process': {'terminal': true, 'user': {'uid': 1000, 'gid': 100, 'additionalGids': [5, 6]},"
        "  'args': ['/usr/bin/sshfs', '-f', 'h:/x', '/mnt'], 'env': ['PATH=/bin', 'HOME=/root'], 'cwd': '/var//lib/',"
        "  'capabilities': {'bounding': ['CAP_SYS_ADMIN', 'CAP_CHOWN'], 'effective': ['CAP_SYS_ADMIN'],"
        "   'inheritable': [], 'permitted': ['CAP_SYS_ADMIN', 'CAP_CHOWN'], 'ambient': []},"
        "  'rlimits': [{'type': 'RLIMIT_NOFILE', 'soft': 1024, 'hard': 4096}, {'type': 'RLIMIT_CORE', 'soft': 0,"
        "   'hard': 0}], 'noNewPrivileges': true, 'apparmorProfile': 'ignored', 'oomScoreAdj': 5},"
        " 'root': {'path': 'rootfs', 'readonly': true}, 'hostname': 'vcs',"
        " 'mounts': [{'destination': '/proc', 'type': 'proc', 'source': 'proc'},"
        "  {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
        "   'options': ['nosuid', 'strictatime', 'mode=755', 'size=65536k']},"
        "  {'destination': '/data', 'type': 'bind', 'source': '/host/data', 'options': ['rbind', 'rshared', 'ro']}],"
        " 'linux': {'namespaces': [{'type': 'pid'}, {'type': 'mount'}, {'type': 'ipc'}, {'type': 'uts'},"
        "  {'type': 'network', 'path': '/run/netns/x'}, {'type': 'cgroup'}],"
        "  'devices': [{'path': '/dev/fuse', 'type': 'c', 'major': 10, 'minor': 229, 'fileMode': 438, 'uid': 0,"
        "   'gid': 0}, {'path': '/dev/sda', 'type': 'b', 'major': 8, 'minor': 0}, {'path': '/dev/fifo', 'type': 'p'}],"
        "  'maskedPaths': ['/proc/kcore', '/sys//firmware'], 'readonlyPaths': ['/proc/sys'],"
        "  'rootfsPropagation': 'rprivate', 'seccomp': {'defaultAction': 'SCMP_ACT_ERRNO'},"
        "  'resources': {'memory': {'limit': 1}}, 'sysctl': {}, 'cgroupsPath': '/x'},"
        " 'hooks': {'prestart': []}, 'annotations': {'a': 'b'}}";

/* Parses doc through its text (json_dumps + spec_parse), the way a bundle is read. */
static int parse_doc(json_t *doc, struct container_spec **ret, struct km_error *err) {
        char *text = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
        int r;

        assert_non_null(text);
        r = spec_parse(text, strlen(text), ret, err);
        free(text);
        return r;
}

/* Sets (value, stolen) or deletes (NULL) the member at path ("mounts.2.options.0") of doc. */
static void doc_put(json_t *doc, const char *path, json_t *value) {
        char buf[256], *seg, *save = NULL, *next;
        json_t *parent = doc;

        snprintf(buf, sizeof(buf), "%s", path);
        for (seg = strtok_r(buf, ".", &save); (next = strtok_r(NULL, ".", &save)); seg = next) {
                parent = json_is_array(parent) ? json_array_get(parent, atoi(seg)) : json_object_get(parent, seg);
                if (!parent)
                        fail_msg("no %s in %s", seg, path);
        }
        if (json_is_array(parent))
                assert_int_equal(value ? json_array_set_new(parent, atoi(seg), value)
                                       : json_array_remove(parent, atoi(seg)),
                                 0);
        else if (value)
                assert_int_equal(json_object_set_new(parent, seg, value), 0);
        else
                json_object_del(parent, seg);
}

static void doc_set(json_t *doc, const char *path, const char *value_json) {
        doc_put(doc, path, value_json ? load(value_json) : NULL);
}

/* The base document with path set to value (NULL: removed) is refused with code and "config.json: msg...". */
static void expect_reject(const char *path, const char *value, int code, const char *msg) {
        json_t *doc = load(base_doc);
        char want[512];
        struct container_spec *s = NULL;
        struct km_error err = {};
        int r;

        doc_set(doc, path, value);
        r = parse_doc(doc, &s, &err);
        test_note("%s = %s -> %d '%s'", path, value ? value : "(removed)", r, err.message);
        assert_int_equal(r, code);
        assert_int_equal(err.code, code);
        assert_null(s);
        snprintf(want, sizeof(want), "config.json: %s", msg);
        if (strncmp(err.message, want, strlen(want)) != 0)
                fail_msg("message '%s' does not start with '%s'", err.message, want);
        json_decref(doc);
}

static struct container_spec *expect_accept(const char *path, const char *value) {
        json_t *doc = load(base_doc);
        struct container_spec *s = NULL;
        struct km_error err = {};

        if (path)
                doc_set(doc, path, value);
        if (parse_doc(doc, &s, &err) < 0)
                fail_msg("%s = %s: %s", path ? path : "base", value ? value : "(removed)", err.message);
        json_decref(doc);
        return s;
}

static void test_parse_realistic_document(void **state) {
        struct container_spec *s = expect_accept(NULL, NULL);

        assert_string_equal(s->args[3], "/mnt");
        assert_null(s->args[4]);
        assert_string_equal(s->env[1], "HOME=/root");
        assert_null(s->env[2]);
        assert_string_equal(s->cwd, "/var/lib"); /* simplified */
        assert_true(s->uid == 1000 && s->gid == 100 && s->n_additional_gids == 2 && s->additional_gids[1] == 6);
        assert_true(s->terminal && s->no_new_privileges);
        assert_true(s->cap_bounding == ((1ULL << CAP_SYS_ADMIN) | (1ULL << CAP_CHOWN)));
        assert_true(s->cap_effective == 1ULL << CAP_SYS_ADMIN && s->cap_permitted == s->cap_bounding);
        assert_true(s->cap_inheritable == 0 && s->cap_ambient == 0);
        assert_true(s->n_rlimits == 2 && s->rlimits[1].resource == RLIMIT_CORE);
        assert_true(s->rlimits[0].resource == RLIMIT_NOFILE && s->rlimits[0].soft == 1024 && s->rlimits[0].hard > 4000);
        assert_string_equal(s->root_path, "rootfs"); /* relative: left as given */
        assert_true(s->root_readonly);
        assert_string_equal(s->hostname, "vcs");
        assert_int_equal(s->n_mounts, 3);
        assert_null(s->mounts[0].data);
        assert_int_equal(s->mounts[1].flags, MS_NOSUID | MS_STRICTATIME);
        assert_string_equal(s->mounts[1].data, "mode=755,size=65536k");
        assert_string_equal(s->mounts[2].source, "/host/data");
        assert_int_equal(s->mounts[2].flags, MS_BIND | MS_REC | MS_RDONLY);
        assert_int_equal(s->mounts[2].propagation, MS_SHARED | MS_REC);
        assert_int_equal(s->namespaces, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP);
        assert_string_equal(s->netns_path, "/run/netns/x");
        assert_int_equal(s->n_devices, 3);
        assert_true(s->devices[0].type == 'c' && s->devices[0].major == 10 && s->devices[0].minor == 229);
        assert_true(s->devices[0].mode == 0666 && s->devices[1].mode == 0666); /* given, and the default */
        assert_true(s->devices[2].type == 'p' && s->devices[2].major == 0);
        assert_string_equal(s->masked_paths[1], "/sys/firmware");
        assert_null(s->masked_paths[2]);
        assert_string_equal(s->readonly_paths[0], "/proc/sys");
        assert_int_equal(s->rootfs_propagation, MS_PRIVATE | MS_REC);
        assert_non_null(s->seccomp);
        assert_string_equal(json_string_value(json_object_get(s->seccomp, "defaultAction")), "SCMP_ACT_ERRNO");
        spec_free(s);
}

static void test_parse_minimal_document(void **state) {
        const char *text =
                "{\"ociVersion\": \"1.2.0\", \"process\": {\"user\": {\"uid\": 0, \"gid\": 0}, "
                "\"args\": [\"sh\"], \"cwd\": \"/\"}, \"root\": {\"path\": \"/r\"}, "
                "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}";
        struct container_spec *s = NULL;
        struct km_error err = {};

        assert_int_equal(spec_parse(text, strlen(text), &s, &err), 0);
        assert_true(!s->env[0] && !s->masked_paths[0] && !s->readonly_paths[0] && !s->hostname && !s->seccomp);
        assert_false(s->terminal || s->no_new_privileges || s->root_readonly);
        assert_true(s->n_mounts == 0 && s->n_devices == 0 && s->n_rlimits == 0 && s->rootfs_propagation == 0);
        assert_int_equal(s->namespaces, CLONE_NEWNS);
        spec_free(s);
}

static void test_mount_option_table(void **state) {
        static const struct {
                const char *options; /* a JSON array */
                unsigned long flags, propagation;
                const char *data;
        } cases[] = {
                { "['ro']", MS_RDONLY, 0, NULL },
                { "['ro', 'rw']", 0, 0, NULL },
                { "['rw', 'ro']", MS_RDONLY, 0, NULL },
                { "['sync']", MS_SYNCHRONOUS, 0, NULL },
                { "['nosuid', 'nodev', 'noexec']", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0, NULL },
                { "['nosuid', 'suid', 'nodev', 'dev', 'noexec', 'exec']", 0, 0, NULL },
                { "['sync', 'async']", 0, 0, NULL },
                { "['dirsync', 'remount']", MS_DIRSYNC | MS_REMOUNT, 0 },
                { "['mand']", MS_MANDLOCK, 0, NULL },
                { "['mand', 'nomand']", 0, 0, NULL },
                { "['noatime']", MS_NOATIME, 0, NULL },
                { "['noatime', 'atime']", 0, 0, NULL },
                { "['relatime']", MS_RELATIME, 0, NULL },
                { "['relatime', 'norelatime']", 0, 0, NULL },
                { "['strictatime']", MS_STRICTATIME, 0, NULL },
                { "['strictatime', 'nostrictatime']", 0, 0, NULL },
                { "['nodiratime']", MS_NODIRATIME, 0, NULL },
                { "['nodiratime', 'diratime']", 0, 0, NULL },
                { "['nosymfollow']", MS_NOSYMFOLLOW, 0, NULL },
                { "['nosymfollow', 'symfollow']", 0, 0, NULL },
                { "['defaults']", 0, 0, NULL },
                { "[]", 0, 0, NULL },
                { "['bind']", MS_BIND, 0, NULL },
                { "['rbind']", MS_BIND | MS_REC, 0, NULL },
                { "['private']", 0, MS_PRIVATE, NULL },
                { "['rprivate']", 0, MS_PRIVATE | MS_REC, NULL },
                { "['shared']", 0, MS_SHARED, NULL },
                { "['rshared']", 0, MS_SHARED | MS_REC, NULL },
                { "['slave']", 0, MS_SLAVE, NULL },
                { "['rslave']", 0, MS_SLAVE | MS_REC, NULL },
                { "['unbindable']", 0, MS_UNBINDABLE, NULL },
                { "['runbindable']", 0, MS_UNBINDABLE | MS_REC },
                { "['rshared', 'rslave']", 0, MS_SLAVE | MS_REC, NULL }, /* in order: the last wins */
                { "['mode=755']", 0, 0, "mode=755" },
                { "['nosuid', 'size=64k', 'noexec', 'mode=1777']", MS_NOSUID | MS_NOEXEC, 0, "size=64k,mode=1777" },
                { "['newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5']", 0, 0,
                  "newinstance,ptmxmode=0666,mode=0620,gid=5" },
                { "['vers=4.2', 'context=\\'system_u:object_r:x:s0\\'']", 0, 0,
                  "vers=4.2,context=\"system_u:object_r:x:s0\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct container_spec *s;

                test_note("options %s", cases[i].options);
                s = expect_accept("mounts.0.options", cases[i].options);
                assert_int_equal(s->mounts[0].flags, cases[i].flags);
                assert_int_equal(s->mounts[0].propagation, cases[i].propagation);
                if (cases[i].data)
                        assert_string_equal(s->mounts[0].data, cases[i].data);
                else
                        assert_null(s->mounts[0].data);
                spec_free(s);
        }
}

static void test_reject_each_field(void **state) {
        /* top level */
        expect_reject("ociVersion", NULL, -EINVAL, "ociVersion: is required");
        expect_reject("ociVersion", "'2.0.0'", -EINVAL, "ociVersion: must start with \"1.\"");
        expect_reject("hooks", "{'prestart': [{'path': '/bin/evil'}]}", -EOPNOTSUPP,
                      "hooks: not supported by the embedded launcher");
        expect_reject("hooks", "{'createRuntime': 'x'}", -EOPNOTSUPP, "hooks: not supported");
        expect_reject("process", NULL, -EINVAL, "process: is required");
        expect_reject("root", NULL, -EINVAL, "root: is required");
        expect_reject("root.path", NULL, -EINVAL, "root.path: is required");
        expect_reject("root.path", "''", -EINVAL, "root.path: is empty");
        expect_reject("annotations", "[]", -EINVAL, "annotations: must be an object");
        expect_reject("annotations", "{'io.kubemount.rootfs-layer': 'aufs'}", -EINVAL,
                      "annotations.io.kubemount.rootfs-layer: must be \"overlay\"");
        expect_reject("annotations", "{'io.kubemount.rootfs-layer': true}", -EINVAL,
                      "annotations.io.kubemount.rootfs-layer: must be a string");
        /* process */
        expect_reject("process.args", NULL, -EINVAL, "process.args: must hold a non-empty command");
        expect_reject("process.args", "['']", -EINVAL, "process.args: must hold a non-empty command");
        expect_reject("process.args.1", "7", -EINVAL, "process.args[1]: must be a string");
        expect_reject("process.env.1", "'HOME'", -EINVAL, "process.env[1]: must be KEY=VALUE");
        expect_reject("process.env.0", "'=x'", -EINVAL, "process.env[0]: must be KEY=VALUE");
        expect_reject("process.cwd", NULL, -EINVAL, "process.cwd: is required");
        expect_reject("process.cwd", "'var/lib'", -EINVAL, "process.cwd: must be absolute");
        expect_reject("process.cwd", "'/var/../etc'", -EINVAL, "process.cwd: must not contain \"..\"");
        expect_reject("process.cwd", "'/proc/self/fd/7'", -EINVAL, "process.cwd: must not be below /proc");
        expect_reject("process.user", NULL, -EINVAL, "process.user: is required");
        expect_reject("process.user.uid", NULL, -EINVAL, "process.user.uid: is required");
        expect_reject("process.user.uid", "-1", -ERANGE, "process.user.uid: must be between 0 and 4294967294");
        expect_reject("process.user.uid", "4294967295", -ERANGE, "process.user.uid: must be between");
        expect_reject("process.user.gid", "1.0", -EINVAL, "process.user.gid: must be an integer");
        expect_reject("process.user.additionalGids.1", "4294967295", -ERANGE, "process.user.additionalGids[1]:");
        expect_reject("process.capabilities.bounding.1", "'CAP_FROB'", -EINVAL,
                      "process.capabilities.bounding[1]: unknown capability 'CAP_FROB'");
        expect_reject("process.capabilities.ambient", "['CAP_SYS_ADMIN\\n']", -EINVAL,
                      "process.capabilities.ambient[0]: unknown capability 'CAP_SYS_ADMIN?'");
        expect_reject("process.rlimits.0.type", "'RLIMIT_FROB'", -EINVAL,
                      "process.rlimits[0].type: unknown rlimit 'RLIMIT_FROB'");
        expect_reject("process.rlimits.0.soft", "8192", -EINVAL, "process.rlimits[0]: soft limit above the hard limit");
        expect_reject("process.rlimits.1.type", "'RLIMIT_NOFILE'", -EINVAL,
                      "process.rlimits[1].type: 'RLIMIT_NOFILE' given twice");
        expect_reject("process.rlimits.0.hard", NULL, -EINVAL, "process.rlimits[0].hard: is required");
        expect_reject("process.rlimits.0.hard", "-5", -ERANGE, "process.rlimits[0].hard: must be between");
        expect_reject("process.noNewPrivileges", "'yes'", -EINVAL, "process.noNewPrivileges: must be a boolean");
        expect_reject("process.terminal", "1", -EINVAL, "process.terminal: must be a boolean");
        /* mounts */
        expect_reject("mounts.1.options.0", "'a,b'", -EINVAL, "mounts[1].options[0]: is empty or contains ','");
        expect_reject("mounts.1.options.0", "'mode=755\\n'", -EINVAL, "mounts[1].options[0]:");
        expect_reject("mounts.1.options.0", "'\\u001b[31m'", -EINVAL, "mounts[1].options[0]:");
        expect_reject("mounts.1.options.0", "'del\\u007f'", -EINVAL, "mounts[1].options[0]:");
        expect_reject("mounts.1.options.0", "''", -EINVAL, "mounts[1].options[0]: is empty");
        expect_reject("mounts.1.options.0", "5", -EINVAL, "mounts[1].options[0]: must be a string");
        expect_reject("mounts.1.options", "'nosuid'", -EINVAL, "mounts[1].options: must be an array");
        /* Recursive attributes and id mapping would be ignored as bind-mount data: refused. */
        expect_reject("mounts.2.options.2", "'rro'", -EOPNOTSUPP, "mounts[2].options[2]: 'rro' is not supported");
        expect_reject("mounts.2.options.2", "'rnosuid'", -EOPNOTSUPP,
                      "mounts[2].options[2]: 'rnosuid' is not supported");
        expect_reject("mounts.2.options.2", "'idmap'", -EOPNOTSUPP, "mounts[2].options[2]: 'idmap' is not supported");
        expect_reject("mounts.2.options.2", "'tmpcopyup'", -EOPNOTSUPP,
                      "mounts[2].options[2]: 'tmpcopyup' is not supported");
        expect_reject("mounts.2.destination", "'data'", -EINVAL, "mounts[2].destination: must be absolute");
        expect_reject("mounts.2.destination", "'/a/../../etc'", -EINVAL, "mounts[2].destination: must not contain");
        expect_reject("mounts.2.destination", "'/..'", -EINVAL, "mounts[2].destination: must not contain");
        expect_reject("mounts.2.destination", NULL, -EINVAL, "mounts[2].destination: is required");
        expect_reject("mounts.2.type", "'nfs,ro'", -EINVAL, "mounts[2].type: is not a filesystem");
        expect_reject("mounts.2.source", "[]", -EINVAL, "mounts[2].source: must be a string");
        expect_reject("mounts.1", "'tmpfs'", -EINVAL, "mounts[1]: must be an object");
        /* linux */
        /* A user namespace needs its id map: one range from 0, host root not in it. */
        expect_reject("linux.namespaces.4", "{'type': 'user'}", -EINVAL, "linux.uidMappings: is required");
        expect_reject("linux.namespaces.4", "{'type': 'time'}", -EOPNOTSUPP,
                      "linux.namespaces[4]: time namespaces are not supported");
        expect_reject("linux.namespaces.0.path", "'/proc/1/ns/pid'", -EOPNOTSUPP,
                      "linux.namespaces[0].path: joining a pid namespace is not supported");
        expect_reject("linux.namespaces.4.path", "'run/netns/x'", -EINVAL,
                      "linux.namespaces[4].path: must be absolute");
        expect_reject("linux.namespaces.2", "{'type': 'pid'}", -EINVAL, "linux.namespaces[2].type: 'pid' given twice");
        expect_reject("linux.namespaces.2", "{'type': 'frob'}", -EINVAL, "linux.namespaces[2].type: unknown namespace");
        expect_reject("linux.namespaces.1", "{'type': 'network'}", -EINVAL,
                      "linux.namespaces[4].type: 'network' given twice");
        expect_reject("linux.namespaces.1", NULL, -EOPNOTSUPP, "linux.namespaces: must include \"mount\"");
        expect_reject("linux", NULL, -EOPNOTSUPP, "linux.namespaces: must include \"mount\"");
        expect_reject("linux.namespaces.3", NULL, -EINVAL, "hostname: needs a \"uts\" namespace");
        expect_reject("linux.devices.0.path", "'/etc/passwd'", -EINVAL, "linux.devices[0].path: must be below /dev");
        expect_reject("linux.devices.0.path", "'/dev'", -EINVAL, "linux.devices[0].path: must be below /dev");
        expect_reject("linux.devices.0.path", "'/dev/../etc/x'", -EINVAL, "linux.devices[0].path: must not contain");
        expect_reject("linux.devices.0.path", "'dev/fuse'", -EINVAL, "linux.devices[0].path: must be absolute");
        expect_reject("linux.devices.1.path", "'/dev//fuse'", -EINVAL, "linux.devices[1].path: given twice");
        expect_reject("linux.devices.0.type", "'x'", -EINVAL, "linux.devices[0].type: must be \"c\"");
        expect_reject("linux.devices.0.major", NULL, -EINVAL, "linux.devices[0].major: is required");
        expect_reject("linux.devices.1.minor", NULL, -EINVAL, "linux.devices[1].minor: is required");
        expect_reject("linux.devices.0.major", "4096", -ERANGE, "linux.devices[0].major: must be between 0 and 4095");
        expect_reject("linux.devices.0.fileMode", "2048", -ERANGE,
                      "linux.devices[0].fileMode: must be between 0 and 511");
        expect_reject("linux.devices.0.uid", "4294967295", -ERANGE, "linux.devices[0].uid:");
        expect_reject("linux.maskedPaths.0", "'proc/kcore'", -EINVAL, "linux.maskedPaths[0]: must be absolute");
        expect_reject("linux.readonlyPaths.0", "'/proc/../etc'", -EINVAL, "linux.readonlyPaths[0]: must not contain");
        expect_reject("linux.rootfsPropagation", "'rfrob'", -EINVAL,
                      "linux.rootfsPropagation: unknown propagation 'rfrob'");
        expect_reject("linux.sysctl", "{'net.ipv4.ip_forward': '1'}", -EOPNOTSUPP,
                      "linux.sysctl: not supported by the embedded launcher");
        expect_reject("linux.seccomp", "'unconfined'", -EINVAL, "linux.seccomp: must be an object");
        /* hostname */
        expect_reject("hostname", "'a/b'", -EINVAL, "hostname: contains '/' or a control character");
        expect_reject("hostname", "'a\\nb'", -EINVAL, "hostname: contains");
        expect_reject("hostname", "''", -EINVAL, "hostname: must be 1 to 64 bytes");
        expect_reject("hostname", "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'", -EINVAL,
                      "hostname: must be 1 to 64 bytes");
}

static void test_accept_variants(void **state) {
        struct container_spec *s;

        s = expect_accept("mounts.2.options", "['rprivate']"); /* type "bind" is a bind mount */
        assert_int_equal(s->mounts[2].flags, MS_BIND);
        spec_free(s);
        s = expect_accept("linux.rootfsPropagation", "'shared'");
        assert_int_equal(s->rootfs_propagation, MS_SHARED);
        spec_free(s);
        s = expect_accept("linux.namespaces.4", "{'type': 'network'}");
        assert_null(s->netns_path);
        assert_true(s->namespaces & CLONE_NEWNET);
        spec_free(s);
        s = expect_accept("process.capabilities.bounding.0", "'cap_net_admin'"); /* libcap's names are case-blind */
        assert_true(s->cap_bounding & (1ULL << CAP_NET_ADMIN));
        spec_free(s);
        s = expect_accept("hooks", "{}");
        spec_free(s);
        s = expect_accept("process.user.uid", "4294967294");
        assert_int_equal(s->uid, 4294967294U);
        spec_free(s);
        s = expect_accept("hostname", NULL);
        spec_free(s);
        s = expect_accept("mounts.2.destination", "'/a/..b/c.../'"); /* ".." only as a whole component */
        assert_string_equal(s->mounts[2].destination, "/a/..b/c...");
        spec_free(s);
}

/* "mounts.0.options" as messages name it: "mounts[0].options". */
static const char *bracketed(const char *path, char *buf, size_t size) {
        size_t n = 0;

        for (const char *p = path; *p && n + 3 < size; p++)
                if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
                        buf[n++] = '[';
                        while (p[1] >= '0' && p[1] <= '9' && n + 3 < size)
                                buf[n++] = *++p;
                        buf[n++] = ']';
                } else
                        buf[n++] = *p;
        buf[n] = '\0';
        return buf;
}

/* Every value we read, given every wrong type. */
static void test_wrong_types_everywhere(void **state) {
        static const struct {
                const char *path, *want;
        } fields[] = {
                { "process", "an object" },
                { "process.user", "an object" },
                { "process.args", "an array" },
                { "process.env", "an array" },
                { "process.capabilities", "an object" },
                { "process.capabilities.effective", "an array" },
                { "process.rlimits", "an array" },
                { "process.rlimits.0", "an object" },
                { "process.user.additionalGids", "an array" },
                { "root", "an object" },
                { "mounts", "an array" },
                { "mounts.0", "an object" },
                { "mounts.0.options", "an array" },
                { "linux", "an object" },
                { "linux.namespaces", "an array" },
                { "linux.namespaces.0", "an object" },
                { "linux.devices", "an array" },
                { "linux.devices.0", "an object" },
                { "linux.maskedPaths", "an array" },
                { "linux.readonlyPaths", "an array" },
                { "linux.seccomp", "an object" },
                { "linux.sysctl", "an object" },
                { "hooks", "an object" },
                { "ociVersion", "a string" },
                { "process.cwd", "a string" },
                { "root.path", "a string" },
                { "hostname", "a string" },
                { "linux.rootfsPropagation", "a string" },
                { "linux.namespaces.0.type", "a string" },
                { "linux.devices.0.path", "a string" },
                { "mounts.0.destination", "a string" },
                { "mounts.0.type", "a string" },
                { "process.user.uid", "an integer" },
                { "linux.devices.0.minor", "an integer" },
                { "process.rlimits.0.soft", "an integer" },
                { "root.readonly", "a boolean" },
        };
        static const char *const values[] = { "'s'", "1", "1.5", "true", "null", "[]", "{}", "[{}]" };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                for (size_t j = 0; j < ELEMENTSOF(values); j++) {
                        char msg[160], name[96];
                        json_t *v = load(values[j]);
                        bool same = streq(fields[i].want, "an object")    ? json_is_object(v)
                                    : streq(fields[i].want, "an array")   ? json_is_array(v)
                                    : streq(fields[i].want, "a string")   ? json_is_string(v)
                                    : streq(fields[i].want, "an integer") ? json_is_integer(v)
                                                                          : json_is_boolean(v);

                        json_decref(v);
                        if (same)
                                continue;
                        snprintf(msg, sizeof(msg), "%s: must be %s", bracketed(fields[i].path, name, sizeof(name)),
                                 fields[i].want);
                        expect_reject(fields[i].path, values[j], -EINVAL, msg);
                }
}

static void test_top_level_not_an_object(void **state) {
        struct container_spec *s = NULL;
        struct km_error err = {};

        assert_int_equal(spec_parse("[]", 2, &s, &err), -EINVAL);
        assert_string_equal(err.message, "config.json: must be a JSON object");
        assert_int_equal(spec_parse("\"x\"", 3, &s, &err), -EINVAL); /* jansson wants an object or array */
        assert_int_equal(spec_parse("", 0, &s, &err), -EINVAL);
        assert_int_equal(spec_parse("{", 1, &s, &err), -EINVAL);
        assert_int_equal(spec_parse("{} x", 4, &s, &err), -EINVAL); /* trailing garbage */
        assert_non_null(strstr(err.message, "config.json: line 1"));
        assert_int_equal(spec_from_json(NULL, &s, &err), -EINVAL);
        assert_null(s);
}

static void test_duplicate_keys(void **state) {
        static const char *const docs[] = {
                "{'ociVersion': '1.0.2', 'ociVersion': '1.0.2'}",
                "{'ociVersion': '1.0.2', 'process': {'args': ['a'], 'args': ['b']}}",
                "{'ociVersion': '1.0.2', 'annotations': {'x': 1, 'x': 2}}",
        };

        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                struct container_spec *s = NULL;
                struct km_error err = {};
                char *t = q(docs[i]);

                assert_int_equal(spec_parse(t, strlen(t), &s, &err), -EINVAL);
                test_note("%s", err.message);
                assert_non_null(strstr(err.message, "duplicate"));
                free(t);
        }
}

static void test_nul_bytes(void **state) {
        static const char text[] = "{\"ociVersion\": \"1.0.2\"}\0garbage";
        static const char escaped[] = "{\"ociVersion\": \"1.\\u00000\"}";
        json_t *doc = load(base_doc);
        struct container_spec *s = NULL;
        struct km_error err = {};

        assert_int_equal(spec_parse(text, sizeof(text) - 1, &s, &err), -EINVAL);
        assert_string_equal(err.message, "config.json: contains a NUL byte");
        assert_int_equal(spec_parse(escaped, strlen(escaped), &s, &err), -EINVAL);
        /* Built in memory, a string can carry one: spec_from_json refuses it. */
        json_array_set_new(json_object_get(json_object_get(doc, "process"), "args"), 0, json_stringn("/bin/sh\0x", 9));
        assert_int_equal(spec_from_json(doc, &s, &err), -EINVAL);
        assert_string_equal(err.message, "config.json: process.args[0]: contains a NUL byte");
        assert_null(s);
        json_decref(doc);
}

static void test_deep_nesting(void **state) {
        size_t depth = 100000, n = 0;
        char *text = malloc(2 * depth + 64);
        struct container_spec *s = NULL;
        struct km_error err = {};

        assert_non_null(text);
        n += sprintf(text, "{\"ociVersion\": \"1.0.2\", \"annotations\": ");
        memset(text + n, '[', depth);
        memset(text + n + depth, ']', depth);
        n += 2 * depth;
        text[n++] = '}';
        assert_int_equal(spec_parse(text, n, &s, &err), -EINVAL);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "depth"));
        free(text);
}

/* A document of exactly size bytes: the base one padded with spaces. */
static char *padded_doc(size_t size) {
        char *t = q(base_doc), *r = malloc(size);
        size_t n = strlen(t);

        assert_non_null(r);
        assert_true(n <= size);
        memcpy(r, t, n);
        memset(r + n, ' ', size - n);
        free(t);
        return r;
}

/* The base document with the array at path made of n copies of item. */
static int parse_with_array(const char *path, const char *item, size_t n, struct km_error *err) {
        json_t *doc = load(base_doc), *a = json_array(), *it = load(item);
        struct container_spec *s = NULL;
        int r;

        for (size_t i = 0; i < n; i++)
                assert_int_equal(json_array_append(a, it), 0);
        json_decref(it);
        doc_put(doc, path, a);
        r = parse_doc(doc, &s, err);
        spec_free(s);
        json_decref(doc);
        return r;
}

static void test_limits(void **state) {
        struct container_spec *s = NULL;
        struct km_error err = {};
        char *t, big[4098], item[4101];

        t = padded_doc(1024 * 1024);
        assert_int_equal(spec_parse(t, 1024 * 1024, &s, &err), 0);
        spec_free(s);
        free(t);
        t = padded_doc(1024 * 1024 + 1);
        s = NULL;
        assert_int_equal(spec_parse(t, 1024 * 1024 + 1, &s, &err), -EFBIG);
        assert_string_equal(err.message, "config.json: larger than 1048576 bytes");
        assert_null(s);
        free(t);

        assert_int_equal(parse_with_array("process.args", "'a'", 4096, &err), 0);
        assert_int_equal(parse_with_array("process.args", "'a'", 4097, &err), -E2BIG);
        assert_string_equal(err.message, "config.json: process.args: more than 4096 entries");
        assert_int_equal(parse_with_array("process.env", "'A=b'", 4096, &err), 0);
        assert_int_equal(parse_with_array("process.env", "'A=b'", 4097, &err), -E2BIG);
        assert_int_equal(parse_with_array("linux.maskedPaths", "'/proc/x'", 1025, &err), -E2BIG);
        assert_int_equal(parse_with_array("mounts", "{'destination': '/x', 'type': 'tmpfs'}", 1024, &err), 0);
        assert_int_equal(parse_with_array("mounts", "{'destination': '/x', 'type': 'tmpfs'}", 1025, &err), -E2BIG);
        assert_string_equal(err.message, "config.json: mounts: more than 1024 entries");
        assert_int_equal(parse_with_array("mounts.0.options", "'nosuid'", 1025, &err), -E2BIG);
        assert_int_equal(parse_with_array("linux.devices", "{'path': '/dev/x', 'type': 'p'}", 1025, &err), -E2BIG);
        assert_string_equal(err.message, "config.json: linux.devices: more than 1024 entries");
        /* Strings: 4096 bytes are fine, 4097 are not; mount data must fit in a page. */
        memset(big, 'a', sizeof(big));
        snprintf(item, sizeof(item), "'%.4096s'", big);
        assert_int_equal(parse_with_array("process.args", item, 1, &err), 0);
        snprintf(item, sizeof(item), "'%.4097s'", big);
        assert_int_equal(parse_with_array("process.args", item, 1, &err), -E2BIG);
        assert_string_equal(err.message, "config.json: process.args[0]: longer than 4096 bytes");
        snprintf(item, sizeof(item), "'%.1000s'", big);
        assert_int_equal(parse_with_array("mounts.1.options", item, 5, &err), -E2BIG);
        assert_string_equal(err.message, "config.json: mounts[1].options: longer than mount(2) takes");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_realistic_document),
                cmocka_unit_test(test_parse_minimal_document),
                cmocka_unit_test(test_mount_option_table),
                cmocka_unit_test(test_reject_each_field),
                cmocka_unit_test(test_accept_variants),
                cmocka_unit_test(test_wrong_types_everywhere),
                cmocka_unit_test(test_top_level_not_an_object),
                cmocka_unit_test(test_duplicate_keys),
                cmocka_unit_test(test_nul_bytes),
                cmocka_unit_test(test_deep_nesting),
                cmocka_unit_test(test_limits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
