/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount(8)/umount(8) command lines kubelets send: mount_args_parse,
 * umount_args_parse, parse_timeout_ms, and the path helpers path_is_below
 * and path_simplify.
 */
#include <errno.h>
#include <libmount.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* The spec's body, to check what the parser put into it. */
#include "mount-spec.h"

#include "mountargs.h"
#include "test-helpers.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int parse_mount(const char *const *argv, struct mount_args *a) {
        int r = mount_args_parse(test_argc(argv), (char *const *)argv, a);

        test_note("mount parse: %d '%s'", r, a->error);
        assert_true(r == 0 || r == -EINVAL);
        assert_int_equal(r == 0, a->error[0] == '\0');
        return r;
}

/*
 * mount(8) takes options after the operands ("mount SRC DST -o ro"): GNU
 * getopt permutes argv for that, which must happen on a copy, never on the
 * caller's array (the nsenter shim passes its own argv on).
 */
static void test_mount_options_after_operands_leave_argv_alone(void **state) {
        const char *words[] = { "mount", "/src", "/dst", "-o", "ro", "-t", "ext4", NULL };
        const char *before[ELEMENTSOF(words)];
        struct mount_args a;

        (void)state;
        memcpy(before, words, sizeof(words));
        assert_int_equal(parse_mount(words, &a), 0);
        assert_string_equal(a.spec->source, "/src");
        assert_string_equal(a.spec->target, "/dst");
        assert_string_equal(a.spec->options, "ro");
        assert_string_equal(a.spec->fstype, "ext4");
        mount_args_done(&a);
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                assert_ptr_equal(words[i], before[i]);
}

static void expect_mount_error(const char *const *argv, const char *message) {
        struct mount_args a;

        assert_int_equal(parse_mount(argv, &a), -EINVAL);
        assert_string_equal(a.error, message);
        mount_args_done(&a);
}

/* The shown form of the spec ("-t T -o O SOURCE"), compared and freed. */
static void expect_described(const struct mount_args *a, const char *expected) {
        char *d = km_mount_spec_describe(a->spec);

        assert_non_null(d);
        assert_string_equal(d, expected);
        free(d);
}

/* ---- mount: what kubelets send ---- */

static void test_mount_nfs_with_type_and_options(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-t", "nfs", "-o", "ro,vers=4", "srv:/x", "/t"), &a), 0);
        assert_string_equal(a.spec->fstype, "nfs");
        assert_string_equal(a.spec->options, "ro,vers=4");
        assert_string_equal(a.spec->source, "srv:/x");
        assert_string_equal(a.spec->target, "/t");
        assert_int_equal(a.spec->flags, 0);
        assert_false(a.spec->has_propagation);
        assert_null(a.spec->sensitive);
        assert_int_equal(a.sensitive_fd, -1);
        assert_null(a.sensitive_file);
        assert_false(a.help);
        assert_false(a.version);
        expect_described(&a, "-t nfs -o ro,vers=4 srv:/x");
        mount_args_done(&a);
        assert_null(a.spec);
}

static void test_mount_bind_as_option(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-o", "bind", "/a", "/b"), &a), 0);
        assert_null(a.spec->fstype);
        assert_string_equal(a.spec->options, "bind");
        assert_string_equal(a.spec->source, "/a");
        assert_string_equal(a.spec->target, "/b");
        assert_int_equal(a.spec->flags, 0);
        mount_args_done(&a);
}

static void test_mount_bind_remount_read_only(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-o", "bind,remount,ro", "/a", "/b"), &a), 0);
        assert_string_equal(a.spec->options, "bind,remount,ro");
        assert_string_equal(a.spec->source, "/a");
        assert_string_equal(a.spec->target, "/b");
        mount_args_done(&a);
}

static void test_mount_bind_long_option(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--bind", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_BIND);
        assert_null(a.spec->options);
        assert_string_equal(a.spec->source, "/a");
        assert_string_equal(a.spec->target, "/b");
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "-B", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_BIND);
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "--rbind", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_RBIND);
        mount_args_done(&a);
}

static void test_mount_make_rshared_target_only(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--make-rshared", "/p"), &a), 0);
        assert_true(a.spec->has_propagation);
        assert_int_equal(a.spec->propagation, KM_MAKE_SHARED);
        assert_true(a.spec->propagation_recursive);
        assert_null(a.spec->source);
        assert_string_equal(a.spec->target, "/p");
        assert_null(a.spec->options);
        mount_args_done(&a);
}

static void test_mount_every_make_option(void **state) {
        static const struct {
                const char *arg;
                enum km_propagation_kind kind;
                bool recursive;
        } cases[] = {
                { "--make-shared", KM_MAKE_SHARED, false },         { "--make-rshared", KM_MAKE_SHARED, true },
                { "--make-slave", KM_MAKE_SLAVE, false },           { "--make-rslave", KM_MAKE_SLAVE, true },
                { "--make-private", KM_MAKE_PRIVATE, false },       { "--make-rprivate", KM_MAKE_PRIVATE, true },
                { "--make-unbindable", KM_MAKE_UNBINDABLE, false }, { "--make-runbindable", KM_MAKE_UNBINDABLE, true },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct mount_args a;
                test_note("%s", cases[i].arg);
                assert_int_equal(parse_mount(ARGV("mount", cases[i].arg, "/p"), &a), 0);
                assert_true(a.spec->has_propagation);
                assert_int_equal(a.spec->propagation, cases[i].kind);
                assert_int_equal(a.spec->propagation_recursive, cases[i].recursive);
                mount_args_done(&a);
        }
}

static void test_mount_unique_abbreviations(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--make-sl", "/p"), &a), 0);
        assert_int_equal(a.spec->propagation, KM_MAKE_SLAVE);
        assert_false(a.spec->propagation_recursive);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "--make-rsh", "/p"), &a), 0);
        assert_int_equal(a.spec->propagation, KM_MAKE_SHARED);
        assert_true(a.spec->propagation_recursive);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "--no-c", "--opt=ro", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_NO_CANONICALIZE);
        assert_string_equal(a.spec->options, "ro");
        mount_args_done(&a);
}

static void test_mount_flags(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--no-canonicalize", "-o", "bind", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_NO_CANONICALIZE);
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "-c", "-f", "-v", "-n", "-s", "-i", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_NO_CANONICALIZE | KM_MOUNT_FAKE | KM_MOUNT_VERBOSE);
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "--fake", "--verbose", "--no-mtab", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_FAKE | KM_MOUNT_VERBOSE);
        mount_args_done(&a);

        /* -r and -w: the last one wins. */
        assert_int_equal(parse_mount(ARGV("mount", "-w", "-r", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_READ_ONLY);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "--read-only", "--rw", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_READ_WRITE);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "-r", "--read-write", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_READ_WRITE);
        mount_args_done(&a);
}

static void test_mount_repeated_o_is_joined(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-o", "ro", "-o", "vers=4", "--options", "hard", "-o", "", "srv:/x",
                                          "/t"),
                                     &a),
                         0);
        assert_string_equal(a.spec->options, "ro,vers=4,hard");
        mount_args_done(&a);
}

static void test_mount_attached_short_arguments(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-tnfs4", "-oro,vers=4.1", "srv:/x", "/t"), &a), 0);
        assert_string_equal(a.spec->fstype, "nfs4");
        assert_string_equal(a.spec->options, "ro,vers=4.1");
        mount_args_done(&a);

        /* Clustered flags with an argument at the end. */
        assert_int_equal(parse_mount(ARGV("mount", "-rBo", "noexec", "/a", "/b"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_READ_ONLY | KM_MOUNT_BIND);
        assert_string_equal(a.spec->options, "noexec");
        mount_args_done(&a);
}

static void test_mount_long_options_with_equals(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--types=fuse.sshfs", "--options=ro,allow_other", "u@h:/x", "/t"),
                                     &a),
                         0);
        assert_string_equal(a.spec->fstype, "fuse.sshfs");
        assert_string_equal(a.spec->options, "ro,allow_other");
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "--types", "ext4", "--options", "rw", "/dev/sdb", "/t"), &a), 0);
        assert_string_equal(a.spec->fstype, "ext4");
        assert_string_equal(a.spec->options, "rw");
        mount_args_done(&a);
}

static void test_mount_options_after_operands(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "srv:/x", "/t", "-t", "nfs", "-o", "ro"), &a), 0);
        assert_string_equal(a.spec->source, "srv:/x");
        assert_string_equal(a.spec->target, "/t");
        assert_string_equal(a.spec->fstype, "nfs");
        mount_args_done(&a);
}

static void test_mount_quoted_context_stays_one_option(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-o", "context=\"system_u:object_r:x:s0:c460,c902\"", "-o", "ro",
                                          "/a", "/b"),
                                     &a),
                         0);
        assert_string_equal(a.spec->options, "context=\"system_u:object_r:x:s0:c460,c902\",ro");
        mount_args_done(&a);
}

static void test_mount_target_is_simplified(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "--bind", "/a//b/", "//t///x//"), &a), 0);
        assert_string_equal(a.spec->source, "/a//b/");
        assert_string_equal(a.spec->target, "/t/x");
        mount_args_done(&a);
}

static void test_mount_double_dash_before_dash_source(void **state) {
        struct mount_args a;
        struct km_error err = {};
        int excode = -1;

        /* Parsed as operands; km_mount's validation refuses them before any work. */
        assert_int_equal(parse_mount(ARGV("mount", "--", "-oro,--target=/etc", "/t"), &a), 0);
        assert_string_equal(a.spec->source, "-oro,--target=/etc");
        assert_string_equal(a.spec->target, "/t");
        assert_null(a.spec->options);
        assert_int_equal(km_mount(NULL, a.spec, &excode, &err), -EINVAL);
        assert_int_equal(excode, MNT_EX_USAGE);
        assert_non_null(strstr(err.message, "starts with '-'"));
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "-o", "bind", "--", "/a", "-t"), &a), 0);
        assert_string_equal(a.spec->target, "-t");
        assert_null(a.spec->fstype);
        assert_int_equal(km_mount(NULL, a.spec, &excode, &err), -EINVAL);
        assert_int_equal(excode, MNT_EX_USAGE);
        mount_args_done(&a);
}

static void test_mount_sensitive_options_fd_and_file(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-t", "cifs", "--sensitive-options-fd=3", "//s/x", "/t"), &a), 0);
        assert_int_equal(a.sensitive_fd, 3);
        assert_null(a.sensitive_file);
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "--sensitive-options-fd", "0", "//s/x", "/t"), &a), 0);
        assert_int_equal(a.sensitive_fd, 0);
        mount_args_done(&a);

        assert_int_equal(parse_mount(ARGV("mount", "--sensitive-options-file=/run/a", "--sensitive-options-file",
                                          "/run/b", "//s/x", "/t"),
                                     &a),
                         0);
        assert_string_equal(a.sensitive_file, "/run/b");
        mount_args_done(&a);
        assert_null(a.sensitive_file);
}

static void test_mount_bad_sensitive_options_fd(void **state) {
        expect_mount_error(ARGV("mount", "--sensitive-options-fd=x", "//s/x", "/t"), "bad file descriptor 'x'");
        expect_mount_error(ARGV("mount", "--sensitive-options-fd=", "//s/x", "/t"), "bad file descriptor ''");
        expect_mount_error(ARGV("mount", "--sensitive-options-fd=-1", "//s/x", "/t"), "bad file descriptor '-1'");
        expect_mount_error(ARGV("mount", "--sensitive-options-fd=3x", "//s/x", "/t"), "bad file descriptor '3x'");
        expect_mount_error(ARGV("mount", "--sensitive-options-fd=99999999999", "//s/x", "/t"),
                           "bad file descriptor '99999999999'");
}

static void test_mount_help_and_version(void **state) {
        struct mount_args a;

        assert_int_equal(parse_mount(ARGV("mount", "-h"), &a), 0);
        assert_true(a.help);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "--help", "too", "many", "args"), &a), 0);
        assert_true(a.help);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "-V"), &a), 0);
        assert_true(a.version);
        assert_false(a.help);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "--version"), &a), 0);
        assert_true(a.version);
        mount_args_done(&a);
}

static void test_mount_usage_errors(void **state) {
        expect_mount_error(ARGV("mount"), "no mount point given");
        expect_mount_error(ARGV("mount", "-t", "nfs", "-o", "ro"), "no mount point given");
        expect_mount_error(ARGV("mount", "/a", "/b", "/c"), "too many arguments ('/c' ...)");
        expect_mount_error(ARGV("mount", "-o", "bind", "/a", "/b", "/c", "/d"), "too many arguments ('/c' ...)");
        expect_mount_error(ARGV("mount", "-Z", "/a", "/b"), "unrecognized option '-Z'");
        expect_mount_error(ARGV("mount", "--bogus", "/a", "/b"), "unrecognized option '--bogus'");
        /* Inside a cluster getopt has not moved past the word yet: the option must still be named. */
        expect_mount_error(ARGV("mount", "-Zr", "/a", "/b"), "unrecognized option '-Z'");
        expect_mount_error(ARGV("mount", "--bind", "-rZv", "/a", "/b"), "unrecognized option '-Z'");
        expect_mount_error(ARGV("mount", "-:", "/a", "/b"), "unrecognized option '-:'");
        expect_mount_error(ARGV("mount", "--bind=x", "/a", "/b"), "unrecognized option '--bind=x'");
        expect_mount_error(ARGV("mount", "--make-shared=x", "/a"), "unrecognized option '--make-shared=x'");
        /* Ambiguous abbreviations are refused, not taken for the first match. */
        expect_mount_error(ARGV("mount", "--make-s", "/a"), "unrecognized option '--make-s'");
        expect_mount_error(ARGV("mount", "--make-r", "/a"), "unrecognized option '--make-r'");
        expect_mount_error(ARGV("mount", "--make-", "/a"), "unrecognized option '--make-'");
        expect_mount_error(ARGV("mount", "--make-rsomething", "/a"), "unrecognized option '--make-rsomething'");
        expect_mount_error(ARGV("mount", "/a", "-o"), "option '-o' requires an argument");
        expect_mount_error(ARGV("mount", "-t", "nfs", "/a", "/b", "-t"), "option '-t' requires an argument");
        expect_mount_error(ARGV("mount", "/a", "/b", "--options"), "option '--options' requires an argument");
        expect_mount_error(ARGV("mount", "/a", "--sensitive-options-fd"),
                           "option '--sensitive-options-fd' requires an argument");
}

static void test_mount_parses_again_after_an_error(void **state) {
        struct mount_args a;

        /* getopt state is global: an error in the middle of a cluster must not leak into the next parse. */
        assert_int_equal(parse_mount(ARGV("mount", "-rZv", "/a", "/b"), &a), -EINVAL);
        mount_args_done(&a);
        assert_int_equal(parse_mount(ARGV("mount", "-v", "/c", "/d"), &a), 0);
        assert_int_equal(a.spec->flags, KM_MOUNT_VERBOSE);
        assert_string_equal(a.spec->target, "/d");
        mount_args_done(&a);
}

/* ---- umount ---- */

static int parse_umount(const char *const *argv, struct umount_args *a) {
        int r = umount_args_parse(test_argc(argv), (char *const *)argv, a);

        test_note("umount parse: %d '%s'", r, a->error);
        assert_true(r == 0 || r == -EINVAL);
        assert_int_equal(r == 0, a->error[0] == '\0');
        return r;
}

static void expect_umount_error(const char *const *argv, const char *message) {
        struct umount_args a;

        assert_int_equal(parse_umount(argv, &a), -EINVAL);
        assert_string_equal(a.error, message);
}

static void test_umount_plain(void **state) {
        const char *const *argv = ARGV("umount", "/var/lib/kubelet/pods/x/volumes/v");
        struct umount_args a;

        assert_int_equal(parse_umount(argv, &a), 0);
        assert_ptr_equal(a.target, argv[1]);
        assert_int_equal(a.flags, 0);
        assert_int_equal(a.timeout_ms, 0);
        assert_false(a.verbose || a.help || a.version);
}

static void test_umount_force_lazy_recursive(void **state) {
        struct umount_args a;

        assert_int_equal(parse_umount(ARGV("umount", "-f", "-l", "-R", "/t"), &a), 0);
        assert_int_equal(a.flags, KM_UMOUNT_FORCE | KM_UMOUNT_LAZY | KM_UMOUNT_RECURSIVE);
        assert_string_equal(a.target, "/t");

        assert_int_equal(parse_umount(ARGV("umount", "--force", "--lazy", "--recursive", "/t"), &a), 0);
        assert_int_equal(a.flags, KM_UMOUNT_FORCE | KM_UMOUNT_LAZY | KM_UMOUNT_RECURSIVE);

        assert_int_equal(parse_umount(ARGV("umount", "-fl", "/t", "-v", "-n", "-c", "-i"), &a), 0);
        assert_int_equal(a.flags, KM_UMOUNT_FORCE | KM_UMOUNT_LAZY);
        assert_true(a.verbose);
        assert_string_equal(a.target, "/t");
}

static void test_umount_timeouts(void **state) {
        static const struct {
                const char *arg;
                int ms;
        } cases[] = {
                { "--timeout=5", 5000 },    { "--timeout=500ms", 500 }, { "--timeout=2.5", 2500 },
                { "--timeout=2.5s", 2500 }, { "--timeout=0", 0 },
        };
        struct umount_args a;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                assert_int_equal(parse_umount(ARGV("umount", cases[i].arg, "/t"), &a), 0);
                assert_int_equal(a.timeout_ms, cases[i].ms);
        }
        assert_int_equal(parse_umount(ARGV("umount", "--timeout", "7", "/t"), &a), 0);
        assert_int_equal(a.timeout_ms, 7000);
}

static void test_umount_bad_timeouts(void **state) {
        expect_umount_error(ARGV("umount", "--timeout=-1", "/t"), "bad timeout '-1'");
        expect_umount_error(ARGV("umount", "--timeout=abc", "/t"), "bad timeout 'abc'");
        expect_umount_error(ARGV("umount", "--timeout=1e999", "/t"), "bad timeout '1e999'");
        expect_umount_error(ARGV("umount", "--timeout=5m", "/t"), "bad timeout '5m'");
        expect_umount_error(ARGV("umount", "--timeout=", "/t"), "bad timeout ''");
        expect_umount_error(ARGV("umount", "/t", "--timeout"), "option '--timeout' requires an argument");
}

static void test_umount_usage_errors(void **state) {
        struct umount_args a;

        expect_umount_error(ARGV("umount"), "no mount point given");
        expect_umount_error(ARGV("umount", "-l"), "no mount point given");
        expect_umount_error(ARGV("umount", "/a", "/b"), "too many arguments");
        expect_umount_error(ARGV("umount", "-x", "/a"), "unrecognized option '-x'");
        expect_umount_error(ARGV("umount", "--bogus", "/a"), "unrecognized option '--bogus'");
        expect_umount_error(ARGV("umount", "-xl", "/a"), "unrecognized option '-x'");
        expect_umount_error(ARGV("umount", "--lazy=1", "/a"), "unrecognized option '--lazy=1'");

        assert_int_equal(parse_umount(ARGV("umount", "-h"), &a), 0);
        assert_true(a.help);
        assert_int_equal(parse_umount(ARGV("umount", "--version"), &a), 0);
        assert_true(a.version);
        assert_int_equal(parse_umount(ARGV("umount", "--", "-t"), &a), 0);
        assert_string_equal(a.target, "-t");
}

/* ---- parse_timeout_ms ---- */

static void test_parse_timeout_ms(void **state) {
        static const struct {
                const char *s;
                int ms;
        } good[] = {
                { "5", 5000 },  { "500ms", 500 }, { "2.5", 2500 },       { "2.5s", 2500 },  { "0", 0 },
                { "0.001", 1 }, { "1ms", 1 },     { "86400", 86400000 }, { "1e3ms", 1000 },
        };
        static const char *const bad[] = {
                "-1", "abc", "1e999", "5m", "", "ms", "s", "5 s", "5sec", "nan", "inf", "-inf", "86401", "1h", "5ms ",
        };
        int ms;

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                ms = -1;
                test_note("timeout '%s'", good[i].s);
                assert_int_equal(parse_timeout_ms(good[i].s, &ms), 0);
                assert_int_equal(ms, good[i].ms);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ms = -1;
                test_note("bad timeout '%s'", bad[i]);
                assert_int_equal(parse_timeout_ms(bad[i], &ms), -EINVAL);
                assert_int_equal(ms, -1);
        }
        assert_int_equal(parse_timeout_ms(NULL, &ms), -EINVAL);
}

/* ---- path helpers ---- */

static void test_path_is_below(void **state) {
        assert_true(path_is_below("/a", "/a"));
        assert_true(path_is_below("/a/b", "/a"));
        assert_true(path_is_below("/a/b/c", "/a/b"));
        assert_true(path_is_below("/a/b", "/a/"));
        assert_true(path_is_below("/a", "/a//"));
        assert_true(path_is_below("/a/b", "/"));
        assert_true(path_is_below("/", "/"));
        assert_true(path_is_below("/", "//"));
        assert_true(path_is_below("/var/lib/kubelet/pods/x", "/var/lib/kubelet"));

        assert_false(path_is_below("/ab", "/a"));
        assert_false(path_is_below("/a", "/a/b"));
        assert_false(path_is_below("/b", "/a"));
        assert_false(path_is_below("/var/lib/kubelet-evil/x", "/var/lib/kubelet"));
        assert_false(path_is_below("relative", "/"));
        assert_false(path_is_below("", "/"));
        assert_false(path_is_below("", "/a"));
        /* Purely textual: callers resolve ".." first (km_mount refuses it below a confine dir). */
        assert_true(path_is_below("/a/../etc", "/a"));
}

static void expect_simplified(const char *in, const char *out) {
        char *p = strdup(in);

        assert_non_null(p);
        assert_ptr_equal(path_simplify(p), p);
        assert_string_equal(p, out);
        free(p);
}

static void test_path_simplify(void **state) {
        expect_simplified("/", "/");
        expect_simplified("//", "/");
        expect_simplified("/a", "/a");
        expect_simplified("/a/", "/a");
        expect_simplified("//a//b///c//", "/a/b/c");
        expect_simplified("a//b/", "a/b");
        expect_simplified("", "");
        /* No resolving. */
        expect_simplified("/a/./../b", "/a/./../b");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mount_nfs_with_type_and_options),
                cmocka_unit_test(test_mount_options_after_operands_leave_argv_alone),
                cmocka_unit_test(test_mount_bind_as_option),
                cmocka_unit_test(test_mount_bind_remount_read_only),
                cmocka_unit_test(test_mount_bind_long_option),
                cmocka_unit_test(test_mount_make_rshared_target_only),
                cmocka_unit_test(test_mount_every_make_option),
                cmocka_unit_test(test_mount_unique_abbreviations),
                cmocka_unit_test(test_mount_flags),
                cmocka_unit_test(test_mount_repeated_o_is_joined),
                cmocka_unit_test(test_mount_attached_short_arguments),
                cmocka_unit_test(test_mount_long_options_with_equals),
                cmocka_unit_test(test_mount_options_after_operands),
                cmocka_unit_test(test_mount_quoted_context_stays_one_option),
                cmocka_unit_test(test_mount_target_is_simplified),
                cmocka_unit_test(test_mount_double_dash_before_dash_source),
                cmocka_unit_test(test_mount_sensitive_options_fd_and_file),
                cmocka_unit_test(test_mount_bad_sensitive_options_fd),
                cmocka_unit_test(test_mount_help_and_version),
                cmocka_unit_test(test_mount_usage_errors),
                cmocka_unit_test(test_mount_parses_again_after_an_error),
                cmocka_unit_test(test_umount_plain),
                cmocka_unit_test(test_umount_force_lazy_recursive),
                cmocka_unit_test(test_umount_timeouts),
                cmocka_unit_test(test_umount_bad_timeouts),
                cmocka_unit_test(test_umount_usage_errors),
                cmocka_unit_test(test_parse_timeout_ms),
                cmocka_unit_test(test_path_is_below),
                cmocka_unit_test(test_path_simplify),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
