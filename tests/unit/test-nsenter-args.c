/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsenter_args_parse against util-linux 2.38.1 nsenter's grammar: optional
 * namespace files (attached or after '=' only), the ordered open events,
 * number parsing with strtoul's leniency, -w/-W exclusion, help/version,
 * the end of options, getopt's abbreviations and errors.  getopt's own
 * messages are not printed (print_getopt_errors=false).  The expectations
 * were checked against the real nsenter 2.38.1.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nsenter-args.h"
#include "test-helpers.h"

#define ARGV(...) ((const char *const[]){ "nsenter", __VA_ARGS__, NULL })
#define ARGV0 ((const char *const[]){ "nsenter", NULL })

/* Parses argv and checks what holds for every result. */
static int parse(const char *const *argv, struct nsenter_args *a) {
        int argc = test_argc(argv);
        int r = nsenter_args_parse(argc, (char *const *)argv, false, a);

        test_note("parse: %d failed=%d try_help=%d '%s'", r, a->failed, a->try_help, a->err.message);
        assert_true(r == 0 || r == -EINVAL);
        assert_int_equal(r < 0, a->failed);
        if (!a->failed) {
                assert_string_equal(a->err.message, "");
                assert_false(a->try_help);
                assert_in_range(a->program, 1, argc);
        } else
                /* getopt's errors are its own message; the parser's are set. */
                assert_true(a->try_help ? a->err.message[0] == '\0' : a->err.message[0] != '\0');
        assert_true(a->n_events == 0 || a->events);
        for (size_t i = 0; i < a->n_events; i++) {
                const char *p = a->events[i].path;
                bool inside = false;
                /* Paths point into argv's words (after "--mount=" or "-m"). */
                for (int k = 1; k < argc; k++)
                        if (p >= argv[k] && p <= argv[k] + strlen(argv[k]))
                                inside = true;
                assert_true(inside);
        }
        return r;
}

static void expect_ok(const char *const *argv, struct nsenter_args *a) {
        assert_int_equal(parse(argv, a), 0);
}

/* A failure with the parser's own message (no "Try --help"). */
static void expect_error(const char *const *argv, const char *message) {
        struct nsenter_args a;

        assert_int_equal(parse(argv, &a), -EINVAL);
        assert_true(a.failed);
        assert_false(a.try_help);
        assert_string_equal(a.err.message, message);
        nsenter_args_done(&a);
}

/* A failure that getopt reports ("unrecognized option", "requires an argument"). */
static void expect_usage_error(const char *const *argv) {
        struct nsenter_args a;

        assert_int_equal(parse(argv, &a), -EINVAL);
        assert_true(a.failed);
        assert_true(a.try_help);
        assert_string_equal(a.err.message, "");
        nsenter_args_done(&a);
}

static void expect_event(const struct nsenter_args *a, size_t i, enum ns_event_kind kind, enum ns_kind ns,
                         const char *path) {
        assert_true(i < a->n_events);
        assert_int_equal(a->events[i].kind, kind);
        if (kind == EV_OPEN_NS)
                assert_int_equal(a->events[i].ns, ns);
        assert_string_equal(a->events[i].path, path);
}

/* Nothing set apart from what the test then checks. */
static void expect_defaults_except_program(const struct nsenter_args *a) {
        assert_int_equal(a->target_pid, 0);
        assert_int_equal(a->namespaces, 0);
        assert_int_equal(a->n_events, 0);
        assert_false(a->all || a->do_root || a->do_wd || a->no_fork || a->preserve_credentials || a->follow_context ||
                     a->force_uid || a->force_gid || a->help || a->version || a->failed);
        assert_null(a->wdns);
}

/* ---- namespaces ---- */

static const struct {
        char letter;
        const char *name;
        enum ns_kind ns;
        int flag;
} namespaces[] = {
        { 'm', "mount", NS_MNT, CLONE_NEWNS },         { 'u', "uts", NS_UTS, CLONE_NEWUTS },
        { 'i', "ipc", NS_IPC, CLONE_NEWIPC },          { 'n', "net", NS_NET, CLONE_NEWNET },
        { 'p', "pid", NS_PID, CLONE_NEWPID },          { 'U', "user", NS_USER, CLONE_NEWUSER },
        { 'C', "cgroup", NS_CGROUP, CLONE_NEWCGROUP }, { 'T', "time", NS_TIME, CLONE_NEWTIME },
};

static void test_ns_table_matches_kinds(void **state) {
        assert_int_equal(ELEMENTSOF(namespaces), NS_KINDS);
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                char name[32];
                snprintf(name, sizeof(name), "ns/%s", namespaces[i].ns == NS_MNT ? "mnt" : namespaces[i].name);
                assert_int_equal(ns_table[namespaces[i].ns].clone_flag, namespaces[i].flag);
                assert_string_equal(ns_table[namespaces[i].ns].name, name);
        }
}

static void test_mount_forms(void **state) {
        struct nsenter_args a;

        /* -m: the target's namespace, no open yet. */
        expect_ok(ARGV("-m"), &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        /* -mFILE and --mount=FILE: open FILE while parsing. */
        expect_ok(ARGV("-m/proc/1/ns/mnt"), &a);
        assert_int_equal(a.namespaces, 0);
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/proc/1/ns/mnt");
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        expect_ok(ARGV("--mount=/proc/1/ns/mnt"), &a);
        assert_int_equal(a.namespaces, 0);
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/proc/1/ns/mnt");
        nsenter_args_done(&a);

        /* An empty file name is still a file (nsenter: "cannot open : ..."). */
        expect_ok(ARGV("--mount="), &a);
        assert_int_equal(a.namespaces, 0);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "");
        nsenter_args_done(&a);
}

static void test_mount_separate_word_is_the_program(void **state) {
        const char *const *argv = ARGV("--mount", "/proc/1/ns/mnt", "ls");
        struct nsenter_args a;

        expect_ok(argv, &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 2);
        assert_ptr_equal(argv[a.program], argv[2]);
        assert_string_equal(argv[a.program], "/proc/1/ns/mnt");
        nsenter_args_done(&a);

        argv = ARGV("-m", "FILE");
        expect_ok(argv, &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.n_events, 0);
        assert_string_equal(argv[a.program], "FILE");
        nsenter_args_done(&a);
}

static void test_every_namespace_with_and_without_file(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                struct nsenter_args a;
                char shortopt[8], shortfile[32], longopt[32], longfile[48];

                test_note("namespace %c / --%s", namespaces[i].letter, namespaces[i].name);
                snprintf(shortopt, sizeof(shortopt), "-%c", namespaces[i].letter);
                snprintf(shortfile, sizeof(shortfile), "-%c/f", namespaces[i].letter);
                snprintf(longopt, sizeof(longopt), "--%s", namespaces[i].name);
                snprintf(longfile, sizeof(longfile), "--%s=/g", namespaces[i].name);

                expect_ok(ARGV(shortopt), &a);
                assert_int_equal(a.namespaces, namespaces[i].flag);
                assert_int_equal(a.n_events, 0);
                nsenter_args_done(&a);

                expect_ok(ARGV(longopt), &a);
                assert_int_equal(a.namespaces, namespaces[i].flag);
                assert_int_equal(a.n_events, 0);
                nsenter_args_done(&a);

                expect_ok(ARGV(shortfile, longfile), &a);
                assert_int_equal(a.namespaces, 0);
                assert_int_equal(a.n_events, 2);
                expect_event(&a, 0, EV_OPEN_NS, namespaces[i].ns, "/f");
                expect_event(&a, 1, EV_OPEN_NS, namespaces[i].ns, "/g");
                assert_int_equal(a.program, 3);
                nsenter_args_done(&a);
        }
}

static void test_all_namespace_flags_together(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "true"), &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID |
                                               CLONE_NEWUSER | CLONE_NEWCGROUP | CLONE_NEWTIME);
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 9);
        nsenter_args_done(&a);

        /* A flag and a file for the same namespace: both are kept. */
        expect_ok(ARGV("-m", "-m/x"), &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/x");
        nsenter_args_done(&a);
}

/* An optional argument swallows the rest of a cluster: -mu is -m with file "u". */
static void test_optional_argument_swallows_cluster(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-mu", "true"), &a);
        assert_int_equal(a.namespaces, 0);
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "u");
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        expect_ok(ARGV("-Fam", "true"), &a);
        assert_true(a.no_fork);
        assert_true(a.all);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);
}

static void test_events_keep_argv_order(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("--mount=/a", "--net=/b", "-r/c", "-w/d"), &a);
        assert_int_equal(a.n_events, 4);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/a");
        expect_event(&a, 1, EV_OPEN_NS, NS_NET, "/b");
        expect_event(&a, 2, EV_OPEN_ROOT, 0, "/c");
        expect_event(&a, 3, EV_OPEN_WD, 0, "/d");
        assert_false(a.do_root);
        assert_false(a.do_wd);
        assert_int_equal(a.program, 5);
        nsenter_args_done(&a);

        /* Not util-linux's setns order (user first): argv's. */
        expect_ok(ARGV("-w/1", "--user=/2", "-m/3", "--root=/4", "-U/5", "--wd=/6"), &a);
        assert_int_equal(a.n_events, 6);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/1");
        expect_event(&a, 1, EV_OPEN_NS, NS_USER, "/2");
        expect_event(&a, 2, EV_OPEN_NS, NS_MNT, "/3");
        expect_event(&a, 3, EV_OPEN_ROOT, 0, "/4");
        expect_event(&a, 4, EV_OPEN_NS, NS_USER, "/5");
        expect_event(&a, 5, EV_OPEN_WD, 0, "/6");
        nsenter_args_done(&a);
}

/* ---- -t, -S, -G ---- */

static void test_target_pid(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-t", "123", "-m"), &a);
        assert_int_equal(a.target_pid, 123);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_int_equal(a.program, 4);
        nsenter_args_done(&a);

        expect_ok(ARGV("--target=123"), &a);
        assert_int_equal(a.target_pid, 123);
        nsenter_args_done(&a);

        expect_ok(ARGV("--target", "123"), &a);
        assert_int_equal(a.target_pid, 123);
        assert_int_equal(a.program, 3);
        nsenter_args_done(&a);

        expect_ok(ARGV("-t123"), &a);
        assert_int_equal(a.target_pid, 123);
        nsenter_args_done(&a);

        /* The last one counts. */
        expect_ok(ARGV("-t", "1", "-t", "2"), &a);
        assert_int_equal(a.target_pid, 2);
        nsenter_args_done(&a);
}

/* strtoul's leniency, as in util-linux 2.38.1 (strtoul_or_err). */
static void test_target_pid_lenient_numbers(void **state) {
        static const struct {
                const char *arg;
                pid_t pid;
        } cases[] = {
                { "+5", 5 },
                { " 7", 7 },
                { "\t\n 8", 8 },
                { "007", 7 },
                { "-0", 0 },
                /* strtoul("-1") is ULONG_MAX without an error; pid_t cuts it to -1 (/proc/4294967295/...). */
                { "-1", -1 },
                { " -1", -1 },
                { "18446744073709551615", -1 },
                /* The cut to pid_t: 2^32 becomes 0, "no target pid", as with util-linux. */
                { "4294967296", 0 },
                { "4294967297", 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nsenter_args a;

                test_note("-t '%s'", cases[i].arg);
                expect_ok(ARGV("-t", cases[i].arg), &a);
                assert_int_equal(a.target_pid, cases[i].pid);
                nsenter_args_done(&a);
        }
}

static void test_target_pid_errors(void **state) {
        expect_error(ARGV("-t", "abc"), "failed to parse pid: 'abc'");
        expect_error(ARGV("--target=abc"), "failed to parse pid: 'abc'");
        expect_error(ARGV("-t", ""), "failed to parse pid: ''");
        expect_error(ARGV("--target="), "failed to parse pid: ''");
        expect_error(ARGV("-t", "999999999999999999999"),
                     "failed to parse pid: '999999999999999999999': Numerical result out of range");
        expect_error(ARGV("-t", "18446744073709551616"),
                     "failed to parse pid: '18446744073709551616': Numerical result out of range");
        expect_error(ARGV("-t", "7 "), "failed to parse pid: '7 '");
        expect_error(ARGV("-t", "0x10"), "failed to parse pid: '0x10'");
        expect_error(ARGV("-t", "12abc"), "failed to parse pid: '12abc'");
        expect_error(ARGV("-t", "-"), "failed to parse pid: '-'");
        expect_error(ARGV("-t", " "), "failed to parse pid: ' '");
        /* The next word is the argument even when it looks like an option. */
        expect_error(ARGV("-t", "-m"), "failed to parse pid: '-m'");
}

static void test_setuid_setgid(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-S", "0", "-G", "0"), &a);
        assert_true(a.force_uid);
        assert_true(a.force_gid);
        assert_int_equal(a.uid, 0);
        assert_int_equal(a.gid, 0);
        assert_int_equal(a.program, 5);
        nsenter_args_done(&a);

        expect_ok(ARGV("--setuid=1000", "--setgid", "2000", "id"), &a);
        assert_true(a.force_uid);
        assert_true(a.force_gid);
        assert_int_equal(a.uid, 1000);
        assert_int_equal(a.gid, 2000);
        assert_int_equal(a.program, 4);
        nsenter_args_done(&a);

        expect_ok(ARGV("-S65534"), &a);
        assert_true(a.force_uid);
        assert_false(a.force_gid);
        assert_int_equal(a.uid, 65534);
        nsenter_args_done(&a);

        expect_ok(ARGV("-G", "-1"), &a);
        assert_true(a.force_gid);
        assert_int_equal(a.gid, (gid_t)-1);
        nsenter_args_done(&a);

        expect_error(ARGV("-Sx"), "failed to parse uid: 'x'");
        expect_error(ARGV("-S", "x"), "failed to parse uid: 'x'");
        expect_error(ARGV("-G", "root"), "failed to parse gid: 'root'");
        expect_error(ARGV("--setgid=99999999999999999999999"),
                     "failed to parse gid: '99999999999999999999999': Numerical result out of range");
        expect_usage_error(ARGV("-S"));
        expect_usage_error(ARGV("--setgid"));
}

/* ---- the other options ---- */

static void test_flags(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("--preserve-credentials"), &a);
        assert_true(a.preserve_credentials);
        nsenter_args_done(&a);

        expect_ok(ARGV("-F"), &a);
        assert_true(a.no_fork);
        nsenter_args_done(&a);
        expect_ok(ARGV("--no-fork"), &a);
        assert_true(a.no_fork);
        nsenter_args_done(&a);

        expect_ok(ARGV("-Z"), &a);
        assert_true(a.follow_context);
        nsenter_args_done(&a);
        expect_ok(ARGV("--follow-context"), &a);
        assert_true(a.follow_context);
        nsenter_args_done(&a);

        expect_ok(ARGV("-a"), &a);
        assert_true(a.all);
        assert_int_equal(a.namespaces, 0);
        nsenter_args_done(&a);
        expect_ok(ARGV("--all", "-t", "1"), &a);
        assert_true(a.all);
        assert_int_equal(a.target_pid, 1);
        nsenter_args_done(&a);

        expect_ok(ARGV0, &a);
        expect_defaults_except_program(&a);
        assert_int_equal(a.program, 1);
        nsenter_args_done(&a);
}

static void test_root_and_wd(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-r"), &a);
        assert_true(a.do_root);
        assert_int_equal(a.n_events, 0);
        nsenter_args_done(&a);

        expect_ok(ARGV("-r/dir"), &a);
        assert_false(a.do_root);
        expect_event(&a, 0, EV_OPEN_ROOT, 0, "/dir");
        nsenter_args_done(&a);

        expect_ok(ARGV("--root=/dir"), &a);
        expect_event(&a, 0, EV_OPEN_ROOT, 0, "/dir");
        nsenter_args_done(&a);

        /* As for namespaces: a separate word is the program. */
        expect_ok(ARGV("-r", "/dir"), &a);
        assert_true(a.do_root);
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        expect_ok(ARGV("-w"), &a);
        assert_true(a.do_wd);
        assert_int_equal(a.n_events, 0);
        nsenter_args_done(&a);

        expect_ok(ARGV("-w/dir"), &a);
        assert_false(a.do_wd);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/dir");
        nsenter_args_done(&a);

        expect_ok(ARGV("--wd=/dir"), &a);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/dir");
        nsenter_args_done(&a);

        /* -W takes its argument in the next word; --wdns only after '='. */
        expect_ok(ARGV("-W", "dir", "pwd"), &a);
        assert_string_equal(a.wdns, "dir");
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 3);
        nsenter_args_done(&a);

        expect_ok(ARGV("-W/dir"), &a);
        assert_string_equal(a.wdns, "/dir");
        nsenter_args_done(&a);

        expect_ok(ARGV("--wdns=/dir"), &a);
        assert_string_equal(a.wdns, "/dir");
        nsenter_args_done(&a);

        expect_ok(ARGV("--wdns", "pwd"), &a);
        assert_null(a.wdns);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        /* Repeating one of them is allowed: the last -W wins. */
        expect_ok(ARGV("-W", "x", "-W", "y"), &a);
        assert_string_equal(a.wdns, "y");
        nsenter_args_done(&a);
        expect_ok(ARGV("-w", "-w/x"), &a);
        assert_true(a.do_wd);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/x");
        nsenter_args_done(&a);

        expect_usage_error(ARGV("-W"));
}

static void test_wd_and_wdns_exclude_each_other(void **state) {
        struct nsenter_args a;

        expect_error(ARGV("-w", "-W", "x"), "mutually exclusive arguments: --wdns --wd");
        expect_error(ARGV("-W", "x", "-w"), "mutually exclusive arguments: --wdns --wd");
        expect_error(ARGV("--wd=/a", "--wdns=/b"), "mutually exclusive arguments: --wdns --wd");
        expect_error(ARGV("--wdns", "--wd"), "mutually exclusive arguments: --wdns --wd");

        /* The open of -w/a came first and is kept. */
        assert_int_equal(parse(ARGV("-w/a", "-W", "x"), &a), -EINVAL);
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/a");
        assert_null(a.wdns);
        nsenter_args_done(&a);
}

static void test_help_and_version_stop_parsing(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-h", "-t", "abc"), &a);
        assert_true(a.help);
        assert_false(a.version);
        assert_int_equal(a.target_pid, 0);
        nsenter_args_done(&a);

        expect_ok(ARGV("--help", "--bogus"), &a);
        assert_true(a.help);
        nsenter_args_done(&a);

        expect_ok(ARGV("-V", "-t", "abc"), &a);
        assert_true(a.version);
        assert_false(a.help);
        nsenter_args_done(&a);

        expect_ok(ARGV("--version"), &a);
        assert_true(a.version);
        nsenter_args_done(&a);

        /* What came before is parsed (and could fail first). */
        expect_ok(ARGV("-m/a", "-t", "5", "-V"), &a);
        assert_true(a.version);
        assert_int_equal(a.target_pid, 5);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/a");
        nsenter_args_done(&a);
        expect_error(ARGV("-t", "abc", "-h"), "failed to parse pid: 'abc'");

        /* Stopping inside a cluster ("-hF"): F is never looked at. */
        expect_ok(ARGV("-hF"), &a);
        assert_true(a.help);
        assert_false(a.no_fork);
        nsenter_args_done(&a);

        expect_usage_error(ARGV("--help=x"));
        expect_usage_error(ARGV("--version=x"));
}

static void test_end_of_options(void **state) {
        const char *const *argv;
        struct nsenter_args a;

        argv = ARGV("--", "-t", "abc");
        expect_ok(argv, &a);
        assert_int_equal(a.program, 2);
        assert_string_equal(argv[a.program], "-t");
        assert_int_equal(a.target_pid, 0);
        nsenter_args_done(&a);

        argv = ARGV("-m", "--", "ls");
        expect_ok(argv, &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_string_equal(argv[a.program], "ls");
        nsenter_args_done(&a);

        /* "--" alone: no program (nsenter then runs $SHELL). */
        argv = ARGV("-m", "--");
        expect_ok(argv, &a);
        assert_int_equal(a.program, 3);
        nsenter_args_done(&a);

        /* The first non-option ends the options ('+' in the optstring). */
        argv = ARGV("-m", "ls", "-l");
        expect_ok(argv, &a);
        assert_int_equal(a.program, 2);
        assert_string_equal(argv[a.program], "ls");
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        nsenter_args_done(&a);

        argv = ARGV("-t", "1", "-m", "-u", "umount", "-t", "abc", "--bogus", "/x");
        expect_ok(argv, &a);
        assert_int_equal(a.program, 5);
        assert_string_equal(argv[a.program], "umount");
        assert_int_equal(a.target_pid, 1);
        nsenter_args_done(&a);

        /* A lone "-" is a program name, not an option. */
        argv = ARGV("-", "-m");
        expect_ok(argv, &a);
        assert_int_equal(a.program, 1);
        assert_int_equal(a.namespaces, 0);
        nsenter_args_done(&a);

        /* The kubelet's form. */
        argv = ARGV("--mount=/rootfs/proc/1/ns/mnt", "--", "findmnt", "-o", "target,fstype", "--noheadings",
                    "--first-only", "--target", "/var/lib/kubelet");
        expect_ok(argv, &a);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/rootfs/proc/1/ns/mnt");
        assert_int_equal(a.program, 3);
        assert_string_equal(argv[a.program], "findmnt");
        nsenter_args_done(&a);
}

static void test_usage_errors(void **state) {
        expect_usage_error(ARGV("-x"));
        expect_usage_error(ARGV("--bogus"));
        expect_usage_error(ARGV("--bogus=1"));
        expect_usage_error(ARGV("-t"));
        expect_usage_error(ARGV("--target"));
        expect_usage_error(ARGV("--no-fork=x"));
        expect_usage_error(ARGV("--preserve-credentials=x"));
        expect_usage_error(ARGV("--all=1"));
        expect_usage_error(ARGV("-m", "-Fq", "ls"));
        /* -Z's long form exists; there is no "--selinux". */
        expect_usage_error(ARGV("--selinux"));
}

static void test_abbreviations(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("--mou=/x"), &a);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/x");
        nsenter_args_done(&a);

        expect_ok(ARGV("--m"), &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        nsenter_args_done(&a);

        expect_ok(ARGV("--pre"), &a);
        assert_true(a.preserve_credentials);
        nsenter_args_done(&a);

        expect_ok(ARGV("--ta", "9", "--r", "--wdn=/w", "--setu=3", "--c=/cg", "--ti"), &a);
        assert_int_equal(a.target_pid, 9);
        assert_true(a.do_root);
        assert_string_equal(a.wdns, "/w");
        assert_int_equal(a.uid, 3);
        expect_event(&a, 0, EV_OPEN_NS, NS_CGROUP, "/cg");
        assert_int_equal(a.namespaces, CLONE_NEWTIME);
        nsenter_args_done(&a);

        /* An exact name wins over a longer one that it prefixes. */
        expect_ok(ARGV("--wd=/d"), &a);
        expect_event(&a, 0, EV_OPEN_WD, 0, "/d");
        assert_null(a.wdns);
        nsenter_args_done(&a);

        /* Ambiguous: --pid/--preserve-credentials, --uts/--user, --net/--no-fork, --wd/--wdns, --setuid/--setgid. */
        expect_usage_error(ARGV("--p"));
        expect_usage_error(ARGV("--u"));
        expect_usage_error(ARGV("--n"));
        expect_usage_error(ARGV("--w"));
        expect_usage_error(ARGV("--s", "0"));
        expect_usage_error(ARGV("--set=0"));
        expect_usage_error(ARGV("--t"));
}

static void test_events_before_an_error_are_kept(void **state) {
        struct nsenter_args a;

        assert_int_equal(parse(ARGV("--mount=/a", "-t", "abc"), &a), -EINVAL);
        assert_true(a.failed);
        assert_false(a.try_help);
        assert_string_equal(a.err.message, "failed to parse pid: 'abc'");
        assert_int_equal(a.n_events, 1);
        expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/a");
        nsenter_args_done(&a);

        assert_int_equal(parse(ARGV("-n/n", "-r/r", "--bogus", "-m/never"), &a), -EINVAL);
        assert_true(a.try_help);
        assert_int_equal(a.n_events, 2);
        expect_event(&a, 0, EV_OPEN_NS, NS_NET, "/n");
        expect_event(&a, 1, EV_OPEN_ROOT, 0, "/r");
        nsenter_args_done(&a);

        /* The error comes from the first bad option; later ones are never parsed. */
        assert_int_equal(parse(ARGV("-S", "x", "-t", "abc"), &a), -EINVAL);
        assert_string_equal(a.err.message, "failed to parse uid: 'x'");
        assert_int_equal(a.n_events, 0);
        nsenter_args_done(&a);
}

static void test_done_frees_and_resets(void **state) {
        struct nsenter_args a;

        expect_ok(ARGV("-m/a", "-u/b"), &a);
        assert_non_null(a.events);
        nsenter_args_done(&a);
        assert_null(a.events);
        assert_int_equal(a.n_events, 0);
        /* Twice is harmless. */
        nsenter_args_done(&a);

        /* After a failure too. */
        assert_int_equal(parse(ARGV("-m/a", "-x"), &a), -EINVAL);
        nsenter_args_done(&a);
        assert_null(a.events);
}

/* getopt's state is global: every parse starts afresh, whatever the last one left. */
static void test_parses_again(void **state) {
        const char *const *argv;
        struct nsenter_args a;

        for (int round = 0; round < 2; round++) {
                expect_ok(ARGV("-m/a", "-t", "3", "ls"), &a);
                assert_int_equal(a.program, 4);
                assert_int_equal(a.target_pid, 3);
                expect_event(&a, 0, EV_OPEN_NS, NS_MNT, "/a");
                nsenter_args_done(&a);
        }

        /* Stopped inside a cluster by -h, by an error, by -x. */
        expect_ok(ARGV("-hFm"), &a);
        nsenter_args_done(&a);
        argv = ARGV("-Fu", "true");
        expect_ok(argv, &a);
        assert_true(a.no_fork);
        assert_false(a.help);
        /* Nothing left of the cluster for -u: no file, and "true" is the program. */
        assert_int_equal(a.namespaces, CLONE_NEWUTS);
        assert_int_equal(a.n_events, 0);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        expect_usage_error(ARGV("-Fxm"));
        expect_ok(ARGV("-m"), &a);
        assert_int_equal(a.namespaces, CLONE_NEWNS);
        assert_false(a.no_fork);
        assert_int_equal(a.program, 2);
        nsenter_args_done(&a);

        /* A shorter argv after a longer one. */
        expect_ok(ARGV("-a", "-F", "-Z", "-r", "-w", "ls", "-l"), &a);
        assert_int_equal(a.program, 6);
        nsenter_args_done(&a);
        expect_ok(ARGV0, &a);
        expect_defaults_except_program(&a);
        assert_int_equal(a.program, 1);
        nsenter_args_done(&a);
}

/* The caller's argv is not reordered (getopt works on a copy). */
int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ns_table_matches_kinds),
                cmocka_unit_test(test_mount_forms),
                cmocka_unit_test(test_mount_separate_word_is_the_program),
                cmocka_unit_test(test_every_namespace_with_and_without_file),
                cmocka_unit_test(test_all_namespace_flags_together),
                cmocka_unit_test(test_optional_argument_swallows_cluster),
                cmocka_unit_test(test_events_keep_argv_order),
                cmocka_unit_test(test_target_pid),
                cmocka_unit_test(test_target_pid_lenient_numbers),
                cmocka_unit_test(test_target_pid_errors),
                cmocka_unit_test(test_setuid_setgid),
                cmocka_unit_test(test_flags),
                cmocka_unit_test(test_root_and_wd),
                cmocka_unit_test(test_wd_and_wdns_exclude_each_other),
                cmocka_unit_test(test_help_and_version_stop_parsing),
                cmocka_unit_test(test_end_of_options),
                cmocka_unit_test(test_usage_errors),
                cmocka_unit_test(test_abbreviations),
                cmocka_unit_test(test_events_before_an_error_are_kept),
                cmocka_unit_test(test_done_frees_and_resets),
                cmocka_unit_test(test_parses_again),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
