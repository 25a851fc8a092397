/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Queries on a loaded mount table: accessors, km_mount_table_find_target()
 * on stacked mounts, km_mount_table_refs() (mount-utils' GetMountRefs and
 * SearchMountPoints, for mount points and other paths),
 * km_propagation_name() and masked options.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test-helpers.h"

#define NODE "mountinfo/kubelet-node.mountinfo"
#define GLOBALMOUNT "/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/abc/globalmount"
#define POD_A_PVC "/var/lib/kubelet/pods/pod-a/volumes/kubernetes.io~csi/pvc-1/mount"
#define POD_B_PVC "/var/lib/kubelet/pods/pod-b/volumes/kubernetes.io~csi/pvc-1/mount"
#define POD_C_SUBPATH "/var/lib/kubelet/pods/pod-c/volume-subpaths/pvc-1/app/0"
#define POD_D_PVC "/var/lib/kubelet/pods/pod-d/volumes/kubernetes.io~csi/pvc-2/mount"
#define POD_E_NFS "/var/lib/kubelet/pods/pod-e/volumes/kubernetes.io~nfs/share"
#define POD_F_SMB "/var/lib/kubelet/pods/pod-f/volumes/kubernetes.io~csi/smb/mount"

static int load_node(void **state) {
        *state = test_load_fixture(NODE);
        return 0;
}

static int free_table(void **state) {
        km_mount_table_free(*state);
        return 0;
}

/* ---- accessors ---- */

static void test_accessors_of_an_nfs_mount(void **state) {
        const struct km_mount *m = test_find(*state, POD_E_NFS);

        assert_int_equal(km_mount_id(m), 220);
        assert_int_equal(km_mount_parent_id(m), 100);
        assert_string_equal(km_mount_target(m), POD_E_NFS);
        assert_string_equal(km_mount_source(m), "srv.example.com:/export");
        assert_string_equal(km_mount_fstype(m), "nfs4");
        assert_string_equal(km_mount_root(m), "/");
        assert_string_equal(km_mount_vfs_options(m), "rw,relatime");
        assert_string_equal(km_mount_fs_options(m),
                            "rw,vers=4.2,rsize=1048576,wsize=1048576,hard,proto=tcp,sec=sys,clientaddr=10.0.0.5");
        assert_int_equal(km_mount_propagation(m), KM_PROPAGATION_SHARED);
        assert_int_equal(km_mount_peer_group(m), 60);
        assert_int_equal(km_mount_master(m), 0);
}

static void test_accessors_of_a_bind_with_subdir_root(void **state) {
        const struct km_mount *m = test_find(*state, POD_C_SUBPATH);

        assert_int_equal(km_mount_id(m), 203);
        assert_string_equal(km_mount_root(m), "/data");
        assert_string_equal(km_mount_source(m), "/dev/nvme1n1");
        assert_string_equal(km_mount_fstype(m), "ext4");
}

static void test_table_order_and_bounds(void **state) {
        struct km_mount_table *t = *state;

        assert_int_equal(km_mount_table_size(t), 14);
        assert_int_equal(km_mount_id(km_mount_table_at(t, 0)), 22);
        assert_int_equal(km_mount_id(km_mount_table_at(t, 3)), 1);
        assert_int_equal(km_mount_id(km_mount_table_at(t, 13)), 230);
        assert_null(km_mount_table_at(t, 14));
        assert_null(km_mount_table_at(t, (size_t)-1));
        assert_null(km_mount_table_at(NULL, 0));
        assert_int_equal(km_mount_table_size(NULL), 0);
        km_mount_table_free(NULL);
}

static void test_options_masked_hides_password(void **state) {
        char *o = km_mount_options_masked(test_find(*state, POD_F_SMB));

        assert_non_null(o);
        assert_null(strstr(o, "hunter2"));
        assert_non_null(strstr(o, "password=<masked>"));
        assert_non_null(strstr(o, "username=svc"));
        assert_non_null(strstr(o, "relatime"));
        assert_non_null(strstr(o, "vers=3.1.1"));
        free(o);
}

static void test_options_masked_keeps_plain_options(void **state) {
        char *o = km_mount_options_masked(test_find(*state, POD_E_NFS));

        assert_non_null(o);
        assert_null(strstr(o, "<masked>"));
        assert_non_null(strstr(o, "relatime"));
        assert_non_null(strstr(o, "vers=4.2"));
        assert_non_null(strstr(o, "clientaddr=10.0.0.5"));
        free(o);
}

/* ---- find_target ---- */

static void test_find_target_returns_topmost_of_stacked_mounts(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/stacked.mountinfo");
        const struct km_mount *m = test_find(t, "/mnt/stack");

        assert_int_equal(km_mount_id(m), 53);
        assert_string_equal(km_mount_source(m), "third");
        assert_string_equal(km_mount_fs_options(m), "rw,size=1024k");
        assert_int_equal(km_mount_id(test_find(t, "/mnt/stack/inner")), 52);
        km_mount_table_free(t);
}

static void test_find_target_is_exact_not_prefix(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/stacked.mountinfo");

        assert_int_equal(km_mount_id(test_find(t, "/mnt/stackless")), 54);
        assert_null(km_mount_table_find_target(t, "/mnt/stac"));
        assert_null(km_mount_table_find_target(t, "/mnt/stack/"));
        assert_null(km_mount_table_find_target(t, "/mnt"));
        assert_null(km_mount_table_find_target(t, ""));
        km_mount_table_free(t);
}

/* ---- refs ---- */

static int refs_of(const struct km_mount_table *t, const char *path, char ***ret) {
        struct km_error err = {};
        int r = km_mount_table_refs(t, path, ret, &err);

        if (r < 0)
                fail_msg("refs %s: %d %s", path, r, err.message);
        for (int i = 0; i < r; i++)
                test_note("ref %s -> %s", path, (*ret)[i]);
        assert_null((*ret)[r]);
        return r;
}

static bool strv_contains(char **strv, const char *s) {
        for (; strv && *strv; strv++)
                if (strcmp(*strv, s) == 0)
                        return true;
        return false;
}

static void test_refs_of_global_mount_are_the_pod_binds(void **state) {
        char **refs = NULL;

        /* pod-b is mounted twice (a leaked stacked bind): both entries count. */
        assert_int_equal(refs_of(*state, GLOBALMOUNT, &refs), 3);
        assert_string_equal(refs[0], POD_A_PVC);
        assert_string_equal(refs[1], POD_B_PVC);
        assert_string_equal(refs[2], POD_B_PVC);
        km_strv_free(refs);
}

static void test_refs_exclude_the_holding_mount_only(void **state) {
        char **refs = NULL;

        assert_int_equal(refs_of(*state, POD_A_PVC, &refs), 3);
        assert_false(strv_contains(refs, POD_A_PVC));
        assert_true(strv_contains(refs, GLOBALMOUNT));
        assert_true(strv_contains(refs, POD_B_PVC));
        km_strv_free(refs);

        /*
         * As mount-utils: the topmost mount at the path (205) is left out by
         * its id; the leaked one under it (202) shows the same and counts.
         */
        assert_int_equal(refs_of(*state, POD_B_PVC, &refs), 3);
        assert_string_equal(refs[0], GLOBALMOUNT);
        assert_string_equal(refs[1], POD_A_PVC);
        assert_string_equal(refs[2], POD_B_PVC);
        km_strv_free(refs);
}

static void test_refs_need_same_root(void **state) {
        char **refs = NULL;

        /* The subPath bind shows /data of the same device: not a reference. */
        assert_false(refs_of(*state, GLOBALMOUNT, &refs) < 0);
        assert_false(strv_contains(refs, POD_C_SUBPATH));
        km_strv_free(refs);
        assert_int_equal(refs_of(*state, POD_C_SUBPATH, &refs), 0);
        km_strv_free(refs);
}

static void test_refs_need_same_device(void **state) {
        char **refs = NULL;

        assert_int_equal(refs_of(*state, POD_D_PVC, &refs), 0);
        assert_non_null(refs);
        assert_null(refs[0]);
        km_strv_free(refs);
}

static void test_refs_of_root_and_of_a_bind_with_other_root(void **state) {
        char **refs = NULL;

        /* "/" shows "/" of the disk, /var/lib/kubelet shows /var/lib/kubelet. */
        assert_int_equal(refs_of(*state, "/", &refs), 0);
        km_strv_free(refs);
        assert_int_equal(refs_of(*state, "/var/lib/kubelet", &refs), 0);
        km_strv_free(refs);
}

/* A directory inside a mount: the binds of that directory (a subPath source), as mount-utils finds them. */
static void test_refs_of_a_directory_inside_a_mount_are_its_binds(void **state) {
        char **refs = NULL;

        assert_int_equal(refs_of(*state, GLOBALMOUNT "/data", &refs), 1);
        assert_string_equal(refs[0], POD_C_SUBPATH);
        km_strv_free(refs);
        /* Through another bind of the same filesystem: the same directory. */
        assert_int_equal(refs_of(*state, POD_A_PVC "/data", &refs), 1);
        assert_string_equal(refs[0], POD_C_SUBPATH);
        km_strv_free(refs);
        /* A sibling, a deeper directory, a prefix that is not a directory boundary: none. */
        assert_int_equal(refs_of(*state, GLOBALMOUNT "/other", &refs), 0);
        km_strv_free(refs);
        assert_int_equal(refs_of(*state, GLOBALMOUNT "/data/deeper", &refs), 0);
        km_strv_free(refs);
        assert_int_equal(refs_of(*state, GLOBALMOUNT "/dat", &refs), 0);
        km_strv_free(refs);
}

/* A plain directory (held by the kubelet dir's bind, root /var/lib/kubelet): no refs, no error. */
static void test_refs_of_a_plain_directory_are_empty(void **state) {
        char **refs = NULL;

        assert_int_equal(refs_of(*state, "/var/lib/kubelet/pods/pod-a/volumes", &refs), 0);
        assert_non_null(refs);
        km_strv_free(refs);
        /* Held by "/": root "/" + the path. */
        assert_int_equal(refs_of(*state, "/nowhere", &refs), 0);
        km_strv_free(refs);
}

/* /var/lib/kubelet/x on the root filesystem is what the kubelet dir's bind (root /var/lib/kubelet) shows as x. */
static void test_refs_compare_root_plus_rest_of_path(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/refs.mountinfo");
        char **refs = NULL;

        /* Below /srv (root "/" of 8:1): /srv/vol of 8:1, which /mnt/vol (root /srv/vol) shows. */
        assert_int_equal(refs_of(t, "/srv/vol", &refs), 1);
        assert_string_equal(refs[0], "/mnt/vol");
        km_strv_free(refs);
        /* And back: /mnt/vol is held by its own bind; /srv/vol is not a mount: no ref. */
        assert_int_equal(refs_of(t, "/mnt/vol", &refs), 0);
        km_strv_free(refs);
        /* A directory below the bind: root /srv/vol/sub, which /mnt/sub shows. */
        assert_int_equal(refs_of(t, "/mnt/vol/sub", &refs), 1);
        assert_string_equal(refs[0], "/mnt/sub");
        km_strv_free(refs);
        km_mount_table_free(t);
}

static void test_refs_errors(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/refs.mountinfo");
        char **refs = (char **)1;
        struct km_error err = {};

        /* Relative: mount-utils would not match it either. */
        assert_int_equal(km_mount_table_refs(t, "srv/vol", &refs, &err), -EINVAL);
        assert_null(refs);
        assert_non_null(strstr(err.message, "srv/vol"));
        km_mount_table_free(t);

        /* A table without "/" (a chroot's view): nothing holds /elsewhere. */
        t = test_load_fixture("mountinfo/stacked.mountinfo");
        assert_int_equal(refs_of(t, "/mnt/stack/inner/x", &refs), 0);
        km_strv_free(refs);
        km_mount_table_free(t);
        t = test_load_fixture("mountinfo/no-root.mountinfo");
        assert_int_equal(km_mount_table_refs(t, "/elsewhere", &refs, &err), -ENOENT);
        assert_null(refs);
        assert_non_null(strstr(err.message, "/elsewhere"));
        km_mount_table_free(t);
}

/* A target with a trailing slash (mountinfo junk the fuzzer found) holds the path without it. */
static void test_refs_target_with_trailing_slash(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/trailing-slash.mountinfo");
        char **refs = NULL;

        assert_int_equal(refs_of(t, "/var/lib/kubelet", &refs), 0);
        km_strv_free(refs);
        assert_int_equal(refs_of(t, "/var/lib/kubelet/pods", &refs), 1);
        assert_string_equal(refs[0], "/mnt/pods");
        km_strv_free(refs);
        km_mount_table_free(t);
}

static void test_refs_of_stacked_target_use_topmost(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/stacked.mountinfo");
        char **refs = NULL;

        /* Topmost /mnt/stack is "third" (0:63): nothing else shows it. */
        assert_int_equal(refs_of(t, "/mnt/stack", &refs), 0);
        km_strv_free(refs);
        km_mount_table_free(t);
}

static void test_strv_free_accepts_null(void **state) {
        km_strv_free(NULL);
}

/* ---- propagation names ---- */

static void test_propagation_names_match_findmnt(void **state) {
        static const struct {
                unsigned p;
                const char *name;
        } cases[] = {
                { KM_PROPAGATION_PRIVATE, "private" },
                { KM_PROPAGATION_SHARED, "shared" },
                { KM_PROPAGATION_SLAVE, "private,slave" },
                { KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE, "shared,slave" },
                { KM_PROPAGATION_UNBINDABLE, "private,unbindable" },
                { KM_PROPAGATION_SLAVE | KM_PROPAGATION_UNBINDABLE, "private,slave,unbindable" },
                { KM_PROPAGATION_SHARED | KM_PROPAGATION_UNBINDABLE, "shared,unbindable" },
                { KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE | KM_PROPAGATION_UNBINDABLE, "shared,slave,unbindable" },
                /* Unknown bits are ignored. */
                { 0x100, "private" },
                { 0x100 | KM_PROPAGATION_SHARED, "shared" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                assert_string_equal(km_propagation_name(cases[i].p), cases[i].name);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_accessors_of_an_nfs_mount, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_accessors_of_a_bind_with_subdir_root, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_table_order_and_bounds, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_options_masked_hides_password, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_options_masked_keeps_plain_options, load_node, free_table),
                cmocka_unit_test(test_find_target_returns_topmost_of_stacked_mounts),
                cmocka_unit_test(test_find_target_is_exact_not_prefix),
                cmocka_unit_test_setup_teardown(test_refs_of_global_mount_are_the_pod_binds, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_refs_exclude_the_holding_mount_only, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_refs_need_same_root, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_refs_need_same_device, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_refs_of_root_and_of_a_bind_with_other_root, load_node, free_table),
                cmocka_unit_test_setup_teardown(test_refs_of_a_directory_inside_a_mount_are_its_binds, load_node,
                                                free_table),
                cmocka_unit_test_setup_teardown(test_refs_of_a_plain_directory_are_empty, load_node, free_table),
                cmocka_unit_test(test_refs_compare_root_plus_rest_of_path),
                cmocka_unit_test(test_refs_errors),
                cmocka_unit_test(test_refs_target_with_trailing_slash),
                cmocka_unit_test(test_refs_of_stacked_target_use_topmost),
                cmocka_unit_test(test_strv_free_accepts_null),
                cmocka_unit_test(test_propagation_names_match_findmnt),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
