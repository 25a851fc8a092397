/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * km_mount_table_load() on mountinfo fixtures: escapes, optional fields,
 * "(deleted)" mount points, long lines, a 20,000-line table and malformed
 * input, which must give -EBADMSG naming the file and the line.
 */
#include <errno.h>
#include <libmount.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test-helpers.h"

#define ROOT_LINE "1 0 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"

/* ---- escapes ---- */

static void test_escaped_space_in_target_and_root(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/escapes.mountinfo");
        const struct km_mount *m = test_find(t, "/mnt/with space");

        assert_int_equal(km_mount_id(m), 20);
        assert_string_equal(km_mount_root(m), "/src dir");
        assert_null(km_mount_table_find_target(t, "/mnt/with\\040space"));
        km_mount_table_free(t);
}

static void test_escaped_tab_newline_backslash_in_target(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/escapes.mountinfo");

        assert_int_equal(km_mount_id(test_find(t, "/mnt/with\ttab")), 21);
        assert_int_equal(km_mount_id(test_find(t, "/mnt/with\nnewline")), 22);
        assert_int_equal(km_mount_id(test_find(t, "/mnt/with\\backslash")), 23);
        km_mount_table_free(t);
}

static void test_all_escapes_in_one_path_and_in_source(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/escapes.mountinfo");
        const struct km_mount *m = test_find(t, "/mnt/all \t\n\\four");

        assert_int_equal(km_mount_id(m), 24);
        assert_string_equal(km_mount_source(m), "user@host:/remote share");
        assert_string_equal(km_mount_fstype(m), "fuse.sshfs");
        assert_string_equal(km_mount_fs_options(m), "rw,user_id=0,group_id=0");
        km_mount_table_free(t);
}

/* ---- optional fields ---- */

struct optional_case {
        const char *target;
        unsigned propagation, peer_group, master;
        const char *name;
};

static void test_optional_fields(void **state) {
        static const struct optional_case cases[] = {
                { "/none", KM_PROPAGATION_PRIVATE, 0, 0, "private" },
                { "/shared", KM_PROPAGATION_SHARED, 7, 0, "shared" },
                { "/slave", KM_PROPAGATION_SLAVE, 0, 8, "private,slave" },
                { "/shared-slave", KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE, 9, 10, "shared,slave" },
                { "/slave-propagate-from", KM_PROPAGATION_SLAVE, 0, 11, "private,slave" },
                { "/unbindable", KM_PROPAGATION_UNBINDABLE, 0, 0, "private,unbindable" },
                { "/shared-slave-propagate-from", KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE, 13, 14,
                  "shared,slave" },
                { "/big-ids", KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE, 4294967295u, 4000000000u, "shared,slave" },
        };
        struct km_mount_table *t = test_load_fixture("mountinfo/optional-fields.mountinfo");

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct km_mount *m = test_find(t, cases[i].target);
                test_note("%s", cases[i].target);
                assert_int_equal(km_mount_propagation(m), cases[i].propagation);
                assert_int_equal(km_mount_peer_group(m), cases[i].peer_group);
                assert_int_equal(km_mount_master(m), cases[i].master);
                assert_string_equal(km_propagation_name(km_mount_propagation(m)), cases[i].name);
                assert_string_equal(km_mount_fstype(m), "tmpfs");
                assert_string_equal(km_mount_vfs_options(m), "rw,relatime");
        }
        km_mount_table_free(t);
}

static void test_optional_fields_do_not_leak_into_options(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/optional-fields.mountinfo");
        const struct km_mount *m = test_find(t, "/shared-slave-propagate-from");

        assert_string_equal(km_mount_vfs_options(m), "rw,relatime");
        assert_string_equal(km_mount_fs_options(m), "rw");
        assert_string_equal(km_mount_source(m), "tmpfs");
        km_mount_table_free(t);
}

/* ---- (deleted) ---- */

/*
 * The kernel appends " (deleted)" to a mount point whose directory was
 * removed.  libmount up to 2.38 keeps the suffix in the target; later
 * versions strip it and flag the entry.  Either way the entry loads and the
 * original path is not found under its old name with 2.38.
 */
static void test_deleted_mount_point(void **state) {
        struct km_mount_table *t = test_load_fixture("mountinfo/deleted.mountinfo");
        const struct km_mount *m = km_mount_table_at(t, 1);
        int version = mnt_get_library_version(NULL);

        assert_int_equal(km_mount_table_size(t), 3);
        assert_int_equal(km_mount_id(m), 40);
        assert_string_equal(km_mount_root(m), "/var/lib/gone");
        if (version < 2390) {
                assert_string_equal(km_mount_target(m), "/mnt/gone (deleted)");
                assert_ptr_equal(km_mount_table_find_target(t, "/mnt/gone (deleted)"), m);
                assert_null(km_mount_table_find_target(t, "/mnt/gone"));
        } else {
                assert_true(strcmp(km_mount_target(m), "/mnt/gone") == 0 ||
                            strcmp(km_mount_target(m), "/mnt/gone (deleted)") == 0);
        }
        assert_int_equal(km_mount_id(test_find(t, "/mnt/kept")), 41);
        km_mount_table_free(t);
}

/* ---- long lines and a huge table ---- */

static char *long_path(size_t len) {
        char *p = malloc(len + 1);

        assert_non_null(p);
        p[0] = '/';
        for (size_t i = 1; i < len; i++)
                p[i] = (i % 256 == 0) ? '/' : 'a' + i % 26;
        p[len] = '\0';
        return p;
}

static void load_one_long_target(size_t len) {
        char *target = long_path(len), *text = NULL, *file;
        struct km_mount_table *t = NULL;
        struct km_error err = {};

        assert_true(asprintf(&text,
                             ROOT_LINE "2 1 8:1 / %s rw,relatime - ext4 /dev/sda1 rw\n"
                                       "3 1 8:1 / /after rw - ext4 /dev/sda1 rw\n",
                             target) > 0);
        file = test_write_temp_string(text);
        assert_int_equal(km_mount_table_load(NULL, file, &t, &err), 0);
        assert_int_equal(km_mount_table_size(t), 3);
        assert_int_equal(km_mount_id(test_find(t, target)), 2);
        assert_int_equal(strlen(km_mount_target(km_mount_table_at(t, 1))), len);
        assert_int_equal(km_mount_id(test_find(t, "/after")), 3);
        km_mount_table_free(t);
        test_unlink_and_free(file);
        free(text);
        free(target);
}

static void test_4000_char_path(void **state) {
        load_one_long_target(4000);
}

static void test_path_longer_than_any_line_buffer(void **state) {
        load_one_long_target(200000);
}

#define HUGE_TABLE_MOUNTS 20000

static void test_huge_table(void **state) {
        size_t size = 0;
        char *text = NULL, *file;
        FILE *f = open_memstream(&text, &size);
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        char **refs = NULL;

        assert_non_null(f);
        fputs(ROOT_LINE, f);
        /* Every pod mount binds one of 100 volumes: device 0:(100 + i % 100). */
        for (unsigned i = 0; i < HUGE_TABLE_MOUNTS; i++)
                fprintf(f,
                        "%u 1 0:%u / /var/lib/kubelet/pods/pod-%u/volumes/vol rw,relatime shared:%u - tmpfs tmpfs rw\n",
                        100 + i, 100 + i % 100, i, 2 + i % 100);
        assert_int_equal(fclose(f), 0);
        file = test_write_temp(text, size);

        assert_int_equal(km_mount_table_load(NULL, file, &t, &err), 0);
        assert_int_equal(km_mount_table_size(t), HUGE_TABLE_MOUNTS + 1);
        assert_int_equal(km_mount_id(km_mount_table_at(t, HUGE_TABLE_MOUNTS)), 100 + HUGE_TABLE_MOUNTS - 1);
        assert_null(km_mount_table_at(t, HUGE_TABLE_MOUNTS + 1));
        assert_int_equal(km_mount_id(test_find(t, "/var/lib/kubelet/pods/pod-19999/volumes/vol")), 20099);
        assert_int_equal(km_mount_peer_group(test_find(t, "/var/lib/kubelet/pods/pod-12345/volumes/vol")), 47);

        /* 200 pods share each device: pod-7 sees the 199 others. */
        assert_int_equal(km_mount_table_refs(t, "/var/lib/kubelet/pods/pod-7/volumes/vol", &refs, &err),
                         HUGE_TABLE_MOUNTS / 100 - 1);
        assert_string_equal(refs[0], "/var/lib/kubelet/pods/pod-107/volumes/vol");
        assert_null(refs[HUGE_TABLE_MOUNTS / 100 - 1]);
        km_strv_free(refs);

        km_mount_table_free(t);
        test_unlink_and_free(file);
        free(text);
}

/* ---- malformed input ---- */

/* Loads path, expects -EBADMSG and a message that names path and "line N". */
static void expect_bad_line(const char *path, int line) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        char want[32];
        int r = km_mount_table_load(NULL, path, &t, &err);

        test_note("%s: %d %s", path, r, err.message);
        assert_int_equal(r, -EBADMSG);
        assert_int_equal(err.code, -EBADMSG);
        assert_null(t);
        assert_non_null(strstr(err.message, path));
        snprintf(want, sizeof(want), "line %d ", line);
        assert_non_null(strstr(err.message, want));
}

static void expect_bad_fixture(const char *name, int line) {
        expect_bad_line(test_data_path(name), line);
}

static void test_missing_separator(void **state) {
        expect_bad_fixture("mountinfo/malformed/missing-separator.mountinfo", 3);
}

static void test_non_numeric_mount_id(void **state) {
        expect_bad_fixture("mountinfo/malformed/non-numeric-id.mountinfo", 2);
}

static void test_non_numeric_parent_id(void **state) {
        expect_bad_fixture("mountinfo/malformed/non-numeric-parent.mountinfo", 2);
}

static void test_bad_device_number(void **state) {
        expect_bad_fixture("mountinfo/malformed/bad-device-number.mountinfo", 2);
}

static void test_truncated_line(void **state) {
        expect_bad_fixture("mountinfo/malformed/truncated-line.mountinfo", 3);
}

static void test_truncated_after_separator(void **state) {
        expect_bad_fixture("mountinfo/malformed/truncated-after-separator.mountinfo", 2);
}

static void test_binary_garbage(void **state) {
        expect_bad_fixture("mountinfo/malformed/binary-garbage.mountinfo", 2);
}

static void test_nul_byte_inside_a_line(void **state) {
        static const char text[] = ROOT_LINE "2 1 8:1 / /a\0b rw - ext4 /dev/sda1 rw\n";
        char *file = test_write_temp(text, sizeof(text) - 1);

        expect_bad_line(file, 2);
        test_unlink_and_free(file);
}

static void test_bad_line_number_counts_blank_lines(void **state) {
        char *file = test_write_temp_string(ROOT_LINE "\n\n2 1 8:1 / /b rw ext4 /dev/sda1 rw\n");

        expect_bad_line(file, 4);
        test_unlink_and_free(file);
}

/* A mount table always has the namespace's root: no entries means a bad file. */
static void expect_no_mounts_error(const char *path) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        int r = km_mount_table_load(NULL, path, &t, &err);

        test_note("%s: %d %s", path, r, err.message);
        assert_int_equal(r, -EBADMSG);
        assert_null(t);
        assert_non_null(strstr(err.message, path));
}

static void test_empty_file(void **state) {
        expect_no_mounts_error(test_data_path("mountinfo/malformed/empty.mountinfo"));
}

static void test_blank_lines_and_comments_only(void **state) {
        expect_no_mounts_error(test_data_path("mountinfo/malformed/blank-lines-only.mountinfo"));
}

/* libmount guesses the format from the first line; fstab syntax is not mountinfo. */
static void test_fstab_syntax_is_not_mountinfo(void **state) {
        expect_no_mounts_error(test_data_path("mountinfo/fstab-syntax.mountinfo"));
}

static void test_random_bytes_never_crash(void **state) {
        unsigned seed = 12345;

        for (int round = 0; round < 200; round++) {
                unsigned char buf[512];
                size_t n = 1 + (seed = seed * 1103515245 + 12345) % sizeof(buf);
                struct km_mount_table *t = NULL;
                struct km_error err = {};
                char *file;
                int r;

                for (size_t i = 0; i < n; i++)
                        buf[i] = (seed = seed * 1103515245 + 12345) >> 16;
                file = test_write_temp(buf, n);
                r = km_mount_table_load(NULL, file, &t, &err);
                if (r < 0) {
                        assert_null(t);
                        assert_int_equal(err.code, r);
                        assert_non_null(strstr(err.message, file));
                } else {
                        km_mount_table_free(t);
                }
                test_unlink_and_free(file);
        }
}

static void test_missing_file(void **state) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        const char *path = test_data_path("mountinfo/does-not-exist");

        assert_int_equal(km_mount_table_load(NULL, path, &t, &err), -ENOENT);
        assert_null(t);
        assert_non_null(strstr(err.message, path));
}

static void test_error_object_is_optional(void **state) {
        struct km_mount_table *t = NULL;

        assert_int_equal(km_mount_table_load(NULL, test_data_path("mountinfo/malformed/truncated-line.mountinfo"), &t,
                                             NULL),
                         -EBADMSG);
        assert_null(t);
        assert_int_equal(km_mount_table_load(NULL, test_data_path("mountinfo/escapes.mountinfo"), &t, NULL), 0);
        km_mount_table_free(t);
}

static void test_null_path_reads_own_mountinfo(void **state) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};

        if (access("/proc/self/mountinfo", R_OK) < 0)
                skip();
        assert_int_equal(km_mount_table_load(NULL, NULL, &t, &err), 0);
        assert_true(km_mount_table_size(t) > 0);
        assert_non_null(km_mount_table_find_target(t, "/"));
        km_mount_table_free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escaped_space_in_target_and_root),
                cmocka_unit_test(test_escaped_tab_newline_backslash_in_target),
                cmocka_unit_test(test_all_escapes_in_one_path_and_in_source),
                cmocka_unit_test(test_optional_fields),
                cmocka_unit_test(test_optional_fields_do_not_leak_into_options),
                cmocka_unit_test(test_deleted_mount_point),
                cmocka_unit_test(test_4000_char_path),
                cmocka_unit_test(test_path_longer_than_any_line_buffer),
                cmocka_unit_test(test_huge_table),
                cmocka_unit_test(test_missing_separator),
                cmocka_unit_test(test_non_numeric_mount_id),
                cmocka_unit_test(test_non_numeric_parent_id),
                cmocka_unit_test(test_bad_device_number),
                cmocka_unit_test(test_truncated_line),
                cmocka_unit_test(test_truncated_after_separator),
                cmocka_unit_test(test_binary_garbage),
                cmocka_unit_test(test_nul_byte_inside_a_line),
                cmocka_unit_test(test_bad_line_number_counts_blank_lines),
                cmocka_unit_test(test_empty_file),
                cmocka_unit_test(test_blank_lines_and_comments_only),
                cmocka_unit_test(test_fstab_syntax_is_not_mountinfo),
                cmocka_unit_test(test_random_bytes_never_crash),
                cmocka_unit_test(test_missing_file),
                cmocka_unit_test(test_error_object_is_optional),
                cmocka_unit_test(test_null_path_reads_own_mountinfo),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
