/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Routing's decisions (src/lib/route/route.c): who mounts a type under each
 * policy and source, and the names of the containers that serve targets.
 * The host here is the test's own namespace, whose kernel knows tmpfs and
 * has no helper for the made-up kmtest* types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "route-internal.h"
#include "route-statd.h"
#include "test-helpers.h"

struct fixture {
        char *dir;
        struct km_router *r;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->dir = test_mkdtemp();
        assert_int_equal(setenv("KUBEMOUNT_VCS_DIR", f->dir, 1), 0);
        assert_int_equal(unsetenv("KUBEMOUNT_VCS_CONFIGMAP"), 0);
        assert_int_equal(km_router_new(NULL, &f->r), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        km_router_free(f->r);
        test_rm_rf(f->dir);
        free(f);
        return 0;
}

static void put_mappings(struct fixture *f, const char *json) {
        char *path = test_join(f->dir, "10-test.json");
        FILE *fp = fopen(path, "we");

        assert_non_null(fp);
        assert_int_equal(fputs(json, fp) >= 0, 1);
        assert_int_equal(fclose(fp), 0);
        free(path);
}

static void expect(struct fixture *f, const char *type, enum route_kind route, enum vcs_policy policy,
                   const char *reason) {
        struct route_decision d;
        struct km_error err = {};

        assert_int_equal(route_decide(f->r, type, &d, &err), 0);
        if (d.route != route || d.policy != policy || !strstr(d.reason, reason))
                fail_msg("%s: route %s, policy %s, reason \"%s\"; expected %s, %s, \"%s\"", type,
                         route_kind_to_string(d.route), vcs_policy_to_string(d.policy), d.reason,
                         route_kind_to_string(route), vcs_policy_to_string(policy), reason);
}

static void test_policies(void **state) {
        struct fixture *f = *state;

        put_mappings(f,
                     "{\"mappings\": ["
                     "{\"types\": [\"kmtest-auto\", \"fuse.kmtest\", \"tmpfs\"], \"image\": \"x/auto:1\"},"
                     "{\"types\": [\"kmtest-host\"], \"policy\": \"host\"},"
                     "{\"types\": [\"kmtest-ctr\", \"nfs\"], \"image\": \"x/ctr:1\", \"policy\": \"container\"}]}");
        assert_int_equal(km_router_add_vcs_image(f->r, "kmtest-cli=x/cli:1"), 0);

        expect(f, NULL, ROUTE_HOST, VCS_POLICY_AUTO, "no type");
        expect(f, "kmtest-nobody", ROUTE_HOST, VCS_POLICY_AUTO, "no VCS image is mapped for kmtest-nobody");
        /* auto: the host has no mount.kmtest-auto, no mount.fuse.kmtest and no kmtest program */
        expect(f, "kmtest-auto", ROUTE_CONTAINER, VCS_POLICY_AUTO, "the host has no mount.kmtest-auto");
        expect(f, "fuse.kmtest", ROUTE_CONTAINER, VCS_POLICY_AUTO, "no kmtest");
        /* auto: the kernel mounts tmpfs without a helper */
        expect(f, "tmpfs", ROUTE_HOST, VCS_POLICY_AUTO, "kernel mounts tmpfs");
        expect(f, "kmtest-host", ROUTE_HOST, VCS_POLICY_HOST, "policy host");
        expect(f, "kmtest-ctr", ROUTE_CONTAINER, VCS_POLICY_CONTAINER, "policy container");
        /* The command line's entry: policy container. */
        expect(f, "kmtest-cli", ROUTE_CONTAINER, VCS_POLICY_CONTAINER, "command line");
        /* The table is built at the first decision: no more command-line entries after it. */
        assert_int_equal(km_router_add_vcs_image(f->r, "kmtest-late=x/late:1"), -EINVAL);
}

static void test_explain(void **state) {
        struct fixture *f = *state;
        char *json = NULL;
        struct km_error err = {};

        put_mappings(f, "{\"mappings\": [{\"types\": [\"kmtest\"], \"image\": \"x/y:1\", \"options\": \"nolock\"}]}");
        assert_int_equal(km_route_explain(f->r, "kmtest", &json, &err), 0);
        assert_non_null(strstr(json, "\"route\": \"container\""));
        assert_non_null(strstr(json, "\"options\": \"nolock\""));
        assert_non_null(strstr(json, "\"daemon\": false"));
        assert_non_null(strstr(json, "\"privileged\": false"));
        free(json);
}

static void test_explain_privileged(void **state) {
        struct fixture *f = *state;
        char *json = NULL;
        struct km_error err = {};

        put_mappings(f,
                     "{\"mappings\": [{\"types\": [\"kmtest\"], \"image\": "
                     "\"x/y@sha256:abababababababababababababababababababababababababababababababab\", \"privileged\": "
                     "true}]}");
        assert_int_equal(km_route_explain(f->r, "kmtest", &json, &err), 0);
        assert_non_null(strstr(json, "\"privileged\": true"));
        free(json);
}

/* What the broker may mount for a container that serves a type. */
static void test_mount_types(void **state) {
        static const struct {
                const char *type, *expect[4];
        } cases[] = {
                { "nfs", { "nfs", "fuse.nfs", "nfs4", NULL } },
                { "nfs4", { "nfs4", "fuse.nfs4", "nfs", NULL } },
                { "cifs", { "cifs", "fuse.cifs", "smb3", NULL } },
                { "glusterfs", { "glusterfs", "fuse.glusterfs", NULL } },
                { "fuse.sshfs", { "fuse.sshfs", "fuse", NULL } },
                { "fuse", { "fuse", NULL } },
                { "fuseblk.ntfs", { "fuseblk.ntfs", "fuseblk", NULL } },
                { "fuseblk", { "fuseblk", NULL } },
                { "fusex", { "fusex", "fuse.fusex", NULL } },
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char **types = NULL;
                size_t n = 0;

                assert_int_equal(route_mount_types(cases[i].type, &types), 0);
                for (; types[n]; n++) {
                        assert_true(n < 3);
                        assert_non_null(cases[i].expect[n]);
                        assert_string_equal(types[n], cases[i].expect[n]);
                }
                assert_null(cases[i].expect[n]);
                km_strv_free(types);
        }
}

static void test_bad_command_line(void **state) {
        struct fixture *f = *state;
        struct route_decision d;
        struct km_error err = {};

        assert_int_equal(km_router_add_vcs_image(f->r, "kmtest"), 0); /* checked when the table is built */
        assert_int_equal(route_decide(f->r, "kmtest", &d, &err), -EINVAL);
        assert_non_null(strstr(err.message, "kmtest"));
}

static void test_container_names(void **state) {
        char a[ROUTE_NAME_MAX], b[ROUTE_NAME_MAX], c[ROUTE_NAME_MAX], path[PATH_MAX];

        (void)state;
        route_container_name("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~glusterfs/data", a);
        route_container_name("/var/lib/kubelet/pods/u2/volumes/kubernetes.io~glusterfs/data", b);
        route_container_name("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~glusterfs/data", c);
        assert_true(strncmp(a, "mount-data-", 11) == 0);
        assert_int_equal(strlen(a), strlen("mount-data-") + 16);
        assert_string_not_equal(a, b); /* same last component, other path */
        assert_string_equal(a, c);     /* stable: umount finds it again */

        /* Hostile last components: only [A-Za-z0-9_.-] reach the name, at most 40 of them. */
        route_container_name("/k/a b/$(reboot);\n\t..\xff", a);
        for (const char *p = a; *p; p++)
                assert_non_null(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p));
        memset(path, 'x', sizeof(path) - 1);
        path[0] = '/';
        path[sizeof(path) - 1] = '\0';
        route_container_name(path, a);
        assert_true(strlen(a) < ROUTE_NAME_MAX);
        assert_int_equal(strlen(a), strlen("mount-") + 40 + 1 + 16);
        route_container_name("/", a);
        assert_int_equal(strlen(a), strlen("mount-") + 16);
}

/* NFS v3 with locks wants a statd; v4, nolock, local_lock=all|posix and other types do not. */
static void test_statd_wanted(void **state _unused_) {
        assert_true(statd_wanted("nfs", "vers=3"));
        assert_true(statd_wanted("nfs", "rw,nfsvers=3,hard"));
        assert_true(statd_wanted("nfs", "vers=3.0"));
        assert_true(statd_wanted("nfs", "v3"));
        assert_true(statd_wanted("nfs", "vers=3,local_lock=flock")); /* fcntl locks still go to the server */
        assert_true(statd_wanted("nfs", "rw,vers=3,rsize=1048576,hard,proto=tcp,local_lock=none,addr=127.0.0.1"));
        assert_true(statd_wanted("nfs", "nolock,vers=3,lock"));
        assert_false(statd_wanted("nfs", "vers=3,nolock"));
        assert_false(statd_wanted("nfs", "vers=3,local_lock=all"));
        assert_false(statd_wanted("nfs", "vers=3,local_lock=posix"));
        assert_false(statd_wanted("nfs", "vers=4.2"));
        assert_false(statd_wanted("nfs", "vers=30"));
        assert_false(statd_wanted("nfs", "hard")); /* v4 first, as mount.nfs negotiates */
        assert_false(statd_wanted("nfs", NULL));
        assert_false(statd_wanted("nfs4", "vers=3"));
        assert_false(statd_wanted("cifs", "vers=3.0"));
        assert_false(statd_wanted(NULL, "vers=3"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_policies, setup, teardown),
                cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_explain_privileged, setup, teardown),
                cmocka_unit_test(test_mount_types),
                cmocka_unit_test_setup_teardown(test_bad_command_line, setup, teardown),
                cmocka_unit_test(test_container_names),
                cmocka_unit_test(test_statd_wanted),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
