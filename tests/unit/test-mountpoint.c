/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * km_is_mount_point() and km_mount_info_of() on paths any user can see.
 * Built twice: as test-mountpoint with the kernel's new APIs, and with
 * KM_TEST_DISABLE_FEATURES as test-mountpoint-fallback, where every
 * new-API path is forced to its old-kernel fallback.  Both must give the
 * same answers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mount-identity.h"
#include "test-helpers.h"

struct fixture {
        char *dir;  /* fresh temp dir, not a mount point */
        char *file; /* regular file inside it */
        char *link; /* symlink to "/" inside it */
};

static int setup_group(void **state) {
#if KM_TEST_DISABLE_FEATURES
        km_features_disable(KM_FEATURE_ALL);
#endif
        return 0;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        int fd;

        assert_non_null(f);
        f->dir = test_mkdtemp();
        assert_true(asprintf(&f->file, "%s/file", f->dir) > 0);
        assert_true(asprintf(&f->link, "%s/link-to-root", f->dir) > 0);
        fd = open(f->file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(symlink("/", f->link), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        unlink(f->link);
        unlink(f->file);
        rmdir(f->dir);
        free(f->link);
        free(f->file);
        free(f->dir);
        free(f);
        return 0;
}

static bool proc_is_mounted(void) {
        return access("/proc/self/mountinfo", R_OK) == 0;
}

static void test_features_as_configured(void **state) {
#if KM_TEST_DISABLE_FEATURES
        assert_int_equal(km_features_enabled(), 0);
#else
        if (getenv("KUBEMOUNT_COMPAT"))
                skip();
        assert_int_equal(km_features_enabled(), KM_FEATURE_ALL);
#endif
}

static void test_root_is_a_mount_point(void **state) {
        struct km_error err = {};

        assert_int_equal(km_is_mount_point(NULL, "/", &err), 1);
        assert_int_equal(km_is_mount_point(NULL, "//", &err), 1);
        assert_int_equal(km_is_mount_point(NULL, "/.", NULL), 1);
}

static void test_proc_is_a_mount_point(void **state) {
        struct km_error err = {};

        if (!proc_is_mounted())
                skip();
        assert_int_equal(km_is_mount_point(NULL, "/proc", &err), 1);
        assert_int_equal(km_is_mount_point(NULL, "/proc/", &err), 1);
        assert_int_equal(km_is_mount_point(NULL, "/proc/self", &err), 0);
        assert_int_equal(km_is_mount_point(NULL, "/proc/self/fd", &err), 0);
}

static void test_fresh_temp_dir_is_not_a_mount_point(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};

        assert_int_equal(km_is_mount_point(NULL, f->dir, &err), 0);
}

static void test_regular_file_is_not_a_mount_point(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};
        int r = km_is_mount_point(NULL, f->file, &err);

        if (r < 0)
                fail_msg("%s: %d %s", f->file, r, err.message);
        assert_int_equal(r, 0);
}

static void test_symlink_to_root_is_followed(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};

        assert_int_equal(km_is_mount_point(NULL, f->link, &err), 1);
}

static void test_missing_path_is_enoent(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};
        char *missing = NULL;

        assert_true(asprintf(&missing, "%s/missing", f->dir) > 0);
        assert_int_equal(km_is_mount_point(NULL, missing, &err), -ENOENT);
        assert_int_equal(err.code, -ENOENT);
        assert_non_null(strstr(err.message, missing));
        assert_int_equal(km_is_mount_point(NULL, missing, NULL), -ENOENT);
        free(missing);
}

static void test_path_through_a_file_is_enotdir(void **state) {
        struct fixture *f = *state;
        char *below = NULL;

        assert_true(asprintf(&below, "%s/sub", f->file) > 0);
        assert_int_equal(km_is_mount_point(NULL, below, NULL), -ENOTDIR);
        free(below);
}

static void test_empty_path_is_einval(void **state) {
        struct km_error err = {};

        assert_int_equal(km_is_mount_point(NULL, "", &err), -EINVAL);
        assert_int_equal(km_is_mount_point(NULL, NULL, &err), -EINVAL);
}

static void test_corrupted_mount_errors(void **state) {
        static const int corrupted[] = { ENOTCONN, ESTALE, EIO, EACCES, EHOSTDOWN, EWOULDBLOCK, ENODEV };
        static const int healthy[] = { 0, 1, ENOENT, EINVAL, ENOTDIR, EPERM, ENOMEM, EBUSY };

        for (size_t i = 0; i < sizeof(corrupted) / sizeof(corrupted[0]); i++)
                assert_true(km_error_is_corrupted_mount(-corrupted[i]));
        for (size_t i = 0; i < sizeof(healthy) / sizeof(healthy[0]); i++)
                assert_false(km_error_is_corrupted_mount(-healthy[i]));
}

/* ---- which mount a record names (mount-identity.h) ---- */

/* A mount gone and its ID given again to another (the kernel reuses mountinfo's IDs) is not the one recorded. */
static void test_mount_ident_same(void **state) {
        const struct mount_ident made = { 5, 1000 };

        assert_false(mount_ident_same(&made, &(struct mount_ident){ 5, 2000 }));
        assert_true(mount_ident_same(&made, &(struct mount_ident){ 5, 1000 }));
        assert_true(mount_ident_same(&made, &(struct mount_ident){ 6, 1000 }));
        /* One side without a unique ID: mountinfo's decides. */
        assert_true(mount_ident_same(&made, &(struct mount_ident){ 5, 0 }));
        assert_false(mount_ident_same(&made, &(struct mount_ident){ 6, 0 }));
        assert_true(mount_ident_same(&(struct mount_ident){ 5, 0 }, &(struct mount_ident){ 5, 2000 }));
        assert_false(mount_ident_same(&(struct mount_ident){ 5, 0 }, &(struct mount_ident){ 6, 2000 }));
        /* An older agent's record, with neither: it cannot tell. */
        assert_true(mount_ident_same(&(struct mount_ident){}, &(struct mount_ident){ 6, 2000 }));
}

/* fd_mount_ident(): mountinfo's ID, and the unique one exactly where statx gives it and it is not disabled. */
static void test_fd_mount_ident_of_proc(void **state) {
        struct km_mount_info *info = NULL;
        struct mount_ident id = { 1, 1 };
        struct statx stx;
        int fd;

        if (!proc_is_mounted())
                skip();
        fd = open("/proc", O_PATH | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(fd_mount_ident(fd, &id), 0);
        assert_int_equal(km_mount_info_of(NULL, "/proc", &info, NULL), 0);
        assert_int_equal(id.id, km_mount_info_id(info));
        bool has_unique =
                statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0x4000U /* STATX_MNT_ID_UNIQUE */, &stx) == 0 &&
                (stx.stx_mask & 0x4000U);
        has_unique = has_unique && (km_features_enabled() & KM_FEATURE_STATMOUNT);
        if (has_unique)
                assert_int_equal(id.unique, stx.stx_mnt_id);
        else
                assert_int_equal(id.unique, 0);
        km_mount_info_free(info);
        close(fd);
}

/* ---- km_mount_info_of ---- */

static void test_mount_info_of_root(void **state) {
        struct km_mount_info *info = NULL;
        struct km_error err = {};

        if (!proc_is_mounted())
                skip();
        assert_int_equal(km_mount_info_of(NULL, "/", &info, &err), 0);
        assert_true(km_mount_info_is_mount_point(info));
        assert_string_equal(km_mount_info_target(info), "/");
        assert_true(km_mount_info_id(info) > 0);
        km_mount_info_free(info);
}

static void test_mount_info_of_proc_matches_mountinfo(void **state) {
        struct km_mount_info *info = NULL;
        struct km_mount_table *t = NULL;
        const struct km_mount *m;
        struct km_error err = {};

        if (!proc_is_mounted())
                skip();
        assert_int_equal(km_mount_info_of(NULL, "/proc", &info, &err), 0);
        assert_true(km_mount_info_is_mount_point(info));
        assert_string_equal(km_mount_info_target(info), "/proc");

        assert_int_equal(km_mount_table_load(NULL, NULL, &t, &err), 0);
        m = km_mount_table_find_target(t, "/proc");
        assert_non_null(m);
        assert_int_equal(km_mount_info_id(info), km_mount_id(m));
        assert_int_equal(km_mount_info_propagation(info), km_mount_propagation(m));
        assert_int_equal(km_mount_info_peer_group(info), km_mount_peer_group(m));
        assert_int_equal(km_mount_info_master(info), km_mount_master(m));
        km_mount_table_free(t);
        km_mount_info_free(info);
}

static void test_mount_info_of_temp_dir_names_its_mount(void **state) {
        struct fixture *f = *state;
        struct km_mount_info *info = NULL;
        struct km_error err = {};
        const char *target;

        if (!proc_is_mounted())
                skip();
        assert_int_equal(km_mount_info_of(NULL, f->dir, &info, &err), 0);
        assert_false(km_mount_info_is_mount_point(info));
        target = km_mount_info_target(info);
        assert_true(target[0] == '/');
        /* The holding mount is an ancestor of the directory. */
        assert_true(strcmp(target, "/") == 0 ||
                    (strncmp(f->dir, target, strlen(target)) == 0 && f->dir[strlen(target)] == '/'));
        km_mount_info_free(info);
        info = NULL;
        assert_int_equal(km_mount_info_of(NULL, f->file, &info, &err), 0);
        assert_false(km_mount_info_is_mount_point(info));
        km_mount_info_free(info);
}

static void test_mount_info_of_missing_path(void **state) {
        struct km_mount_info *info = NULL;
        struct km_error err = {};

        assert_int_equal(km_mount_info_of(NULL, "/nonexistent-kubemount-unit/x", &info, &err), -ENOENT);
        assert_non_null(strstr(err.message, "/nonexistent-kubemount-unit/x"));
        assert_null(info);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_features_as_configured),
                cmocka_unit_test(test_root_is_a_mount_point),
                cmocka_unit_test(test_proc_is_a_mount_point),
                cmocka_unit_test_setup_teardown(test_fresh_temp_dir_is_not_a_mount_point, setup, teardown),
                cmocka_unit_test_setup_teardown(test_regular_file_is_not_a_mount_point, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_to_root_is_followed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_path_is_enoent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_path_through_a_file_is_enotdir, setup, teardown),
                cmocka_unit_test(test_empty_path_is_einval),
                cmocka_unit_test(test_corrupted_mount_errors),
                cmocka_unit_test(test_mount_ident_same),
                cmocka_unit_test(test_fd_mount_ident_of_proc),
                cmocka_unit_test(test_mount_info_of_root),
                cmocka_unit_test(test_mount_info_of_proc_matches_mountinfo),
                cmocka_unit_test_setup_teardown(test_mount_info_of_temp_dir_names_its_mount, setup, teardown),
                cmocka_unit_test(test_mount_info_of_missing_path),
        };

        return cmocka_run_group_tests(tests, setup_group, NULL);
}
