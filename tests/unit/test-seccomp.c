/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seccomp_compile, seccomp_filter_load and seccomp_default_profile: the
 * default profile's lists, its effect in a forked child (loading a filter
 * needs only no_new_privs, so this runs unprivileged), argument conditions,
 * and the parser's refusal of malformed OCI "linux.seccomp" objects.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include <cmocka.h>

#include "seccomp-filter.h"
#include "test-helpers.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* ---- helpers ---- */

static json_t *parse(const char *text) {
        json_error_t jerr;
        json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);

        if (!j)
                fail_msg("bad test JSON (%s): %s", jerr.text, text);
        return j;
}

static void compile_ok(json_t *j, struct seccomp_program *ret) {
        struct km_error err = {};
        int r = seccomp_compile(j, ret, &err);

        if (r < 0)
                fail_msg("seccomp_compile: %d %s", r, err.message);
        assert_non_null(ret->prog.filter);
        assert_true(ret->prog.len > 0);
}

/* A check in the child: the failing line and what happened go to the parent. */
#define CHILD_CHECK(cond)                                                                                              \
        do {                                                                                                           \
                if (!(cond)) {                                                                                         \
                        dprintf(fd, "line %d: %s (errno %d %s)", __LINE__, #cond, errno, strerror(errno));             \
                        return 1;                                                                                      \
                }                                                                                                      \
        } while (0)

/*
 * Runs fn(fd, data) in a forked child under the program (after
 * PR_SET_NO_NEW_PRIVS); fn writes what went wrong to fd and returns
 * nonzero.  Returns the child's wait status.
 */
static int run_filtered(const struct seccomp_program *p, int (*fn)(int fd, void *data), void *data) {
        char msg[512] = "";
        int pipefd[2], status;
        ssize_t n;
        pid_t pid;

        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int r;

                close(pipefd[0]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                        dprintf(pipefd[1], "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
                        _exit(2);
                }
                r = seccomp_filter_load(p);
                if (r < 0) {
                        dprintf(pipefd[1], "seccomp_filter_load: %s", strerror(-r));
                        _exit(2);
                }
                _exit(fn(pipefd[1], data));
        }
        close(pipefd[1]);
        n = read(pipefd[0], msg, sizeof(msg) - 1);
        msg[n > 0 ? n : 0] = '\0';
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
                fail_msg("child: %s", msg);
        return status;
}

static void expect_exit_ok(int status) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("child did not exit cleanly (status 0x%x)", status);
}

/* ---- the default profile's lists ---- */

static json_t *rule_names(json_t *profile, size_t i) {
        json_t *rule = json_array_get(json_object_get(profile, "syscalls"), i);

        assert_non_null(rule);
        return json_object_get(rule, "names");
}

static bool names_contain(json_t *names, const char *name) {
        size_t i;
        json_t *v;

        json_array_foreach(names, i, v) {
                if (streq(json_string_value(v), name))
                        return true;
        }
        return false;
}

static void assert_sorted_unique(json_t *names) {
        for (size_t i = 1; i < json_array_size(names); i++) {
                const char *a = json_string_value(json_array_get(names, i - 1));
                const char *b = json_string_value(json_array_get(names, i));

                if (strcmp(a, b) >= 0)
                        fail_msg("not sorted or duplicated: %s, %s", a, b);
        }
}

static void test_default_profile_lists(void **state) {
        json_t *p = seccomp_default_profile();
        json_t *allowed, *denied;

        assert_non_null(p);
        assert_string_equal(json_string_value(json_object_get(p, "defaultAction")), "SCMP_ACT_ERRNO");
        assert_int_equal(json_integer_value(json_object_get(p, "defaultErrnoRet")), ENOSYS);
        allowed = rule_names(p, 0);
        denied = rule_names(p, 1);
        assert_sorted_unique(allowed);
        assert_sorted_unique(denied);
        for (size_t i = 0; i < json_array_size(denied); i++)
                assert_false(names_contain(allowed, json_string_value(json_array_get(denied, i))));
        test_note("default profile: %zu allowed, %zu denied with EPERM", json_array_size(allowed),
                  json_array_size(denied));

        /* What volume clients need, and what is left out on purpose. */
        static const char *const needed[] = { "mount",      "umount2", "open_tree", "move_mount",    "fsopen",
                                              "fsconfig",   "fsmount", "fspick",    "mount_setattr", "pivot_root",
                                              "chroot",     "unshare", "setns",     "clone",         "execve",
                                              "socketpair", "sendmsg", "recvmsg",   "mknodat",       "capset",
                                              "prctl",      "statx" };
        for (size_t i = 0; i < ELEMENTSOF(needed); i++)
                if (!names_contain(allowed, needed[i]))
                        fail_msg("%s is not allowed", needed[i]);
        assert_false(names_contain(allowed, "clone3"));
        assert_false(names_contain(allowed, "io_uring_setup"));
        assert_false(names_contain(allowed, "fanotify_init"));
        assert_true(names_contain(denied, "kexec_load"));
        assert_true(names_contain(denied, "bpf"));
        assert_true(names_contain(denied, "open_by_handle_at"));
        json_decref(p);
}

static void test_default_profile_compiles(void **state) {
        struct seccomp_program p = {};
        json_t *j = seccomp_default_profile();

        compile_ok(j, &p);
        test_note("default profile: %u BPF instructions", p.prog.len);
        seccomp_program_done(&p);
        assert_null(p.prog.filter);
        seccomp_program_done(&p); /* twice is harmless */
        json_decref(j);
}

/* ---- the default profile in force ---- */

static void *thread_main(void *arg) {
        return arg;
}

static int child_default_profile(int fd, void *data) {
        pid_t pid = *(pid_t *)data;
        pthread_t t;
        void *res = NULL;
        int sv[2];

        /* Allowed calls. */
        CHILD_CHECK(getpid() != pid && syscall(SYS_getpid) == getpid());
        CHILD_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        CHILD_CHECK(write(sv[0], "x", 1) == 1);
        CHILD_CHECK(unshare(0) == 0);
        /* Several conditions on one argument: any of them allows the call. */
        CHILD_CHECK(personality(0xffffffff) >= 0);
        CHILD_CHECK(personality(PER_LINUX32) >= 0 && personality(0xffffffff) == PER_LINUX32);
        CHILD_CHECK(personality(PER_LINUX) >= 0);

        /* Left out: ENOSYS, the answer of an older kernel. */
        errno = 0;
        CHILD_CHECK(syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS);
        errno = 0;
        CHILD_CHECK(syscall(1000) == -1 && errno == ENOSYS);
        errno = 0;
        CHILD_CHECK(personality(PER_BSD) == -1 && errno == ENOSYS);
        /* ... so glibc falls back from clone3 to clone. */
        CHILD_CHECK(pthread_create(&t, NULL, thread_main, (void *)0x1) == 0);
        CHILD_CHECK(pthread_join(t, &res) == 0 && res == (void *)0x1);

        /* Denied: EPERM.  Invalid flags and ops, so nothing happens if the filter failed. */
        errno = 0;
        CHILD_CHECK(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0xdead0000UL) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(syscall(SYS_keyctl, 9999, 0, 0, 0, 0) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(syscall(SYS_bpf, -1, NULL, 0) == -1 && errno == EPERM);

        /* The mount calls reach the kernel: the path lookup fails, not the filter. */
        errno = 0;
        CHILD_CHECK(mount("none", "/nonexistent-kubemount-test", "tmpfs", 0, NULL) == -1 && errno == ENOENT);
        errno = 0;
        CHILD_CHECK(umount2("/nonexistent-kubemount-test", 0) == -1 && errno == ENOENT);
#ifdef SYS_open_tree
        errno = 0;
        CHILD_CHECK(syscall(SYS_open_tree, AT_FDCWD, "/nonexistent-kubemount-test", 0) == -1 &&
                    (errno == ENOENT || errno == ENOSYS));
#endif
        return 0;
}

static void test_default_profile_enforced(void **state) {
        struct seccomp_program p = {};
        json_t *j = seccomp_default_profile();
        pid_t pid = getpid();

        compile_ok(j, &p);
        expect_exit_ok(run_filtered(&p, child_default_profile, &pid));
        seccomp_program_done(&p);
        json_decref(j);
}

/* ---- ioctl: everything but TIOCSTI and TIOCLINUX (THREATS 28) ---- */

/* What the kernel makes of the request: the lower 32 bits. */
static bool ioctl_is_denied(unsigned long request) {
        return (uint32_t)request == TIOCSTI || (uint32_t)request == TIOCLINUX;
}

static unsigned long next_random(unsigned long *x) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17; /* xorshift64 */
        return *x;
}

static int child_ioctl(int fd, void *data) {
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), slave, n;
        unsigned long x = 0x9e3779b97f4a7c15UL, checked = 0;
        struct termios t;
        char c = 'x', sub = 6; /* TIOCL_GETSHIFTSTATE */

        (void)data;
        CHILD_CHECK(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
        slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHILD_CHECK(slave >= 0);
        /* Terminal ioctls work, on the terminal itself too ... */
        CHILD_CHECK(ioctl(slave, TCGETS, &t) == 0 && ioctl(slave, FIONREAD, &n) == 0 && n == 0);
        /* ... but nothing is typed into it. */
        errno = 0;
        CHILD_CHECK(ioctl(slave, TIOCSTI, &c) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(ioctl(master, TIOCSTI, &c) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(syscall(SYS_ioctl, slave, (unsigned long)TIOCSTI | 1UL << 32, &c) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(syscall(SYS_ioctl, slave, (unsigned long)TIOCSTI | 0xffffffff00000000UL, &c) == -1 &&
                    errno == EPERM);
        errno = 0;
        CHILD_CHECK(ioctl(slave, TIOCLINUX, &sub) == -1 && errno == EPERM);
        errno = 0;
        CHILD_CHECK(syscall(SYS_ioctl, slave, (unsigned long)TIOCLINUX | 1UL << 40, &sub) == -1 && errno == EPERM);
        CHILD_CHECK(ioctl(slave, FIONREAD, &n) == 0 && n == 0);

        /*
         * Every other request reaches the kernel (EBADF for fd -1), the denied
         * ones never do: the terminal ioctl range and its neighbours, then
         * random requests with random upper halves, and the denied ones under
         * each of them.
         */
        for (unsigned long r = 0x5300; r < 0x5600; r++, checked++) {
                errno = 0;
                CHILD_CHECK(syscall(SYS_ioctl, -1, r, 0) == -1 && errno == (ioctl_is_denied(r) ? EPERM : EBADF));
        }
        for (int i = 0; i < 200000; i++, checked += 3) {
                unsigned long r = next_random(&x), high = r & 0xffffffff00000000UL;

                errno = 0;
                CHILD_CHECK(syscall(SYS_ioctl, -1, r, 0) == -1 && errno == (ioctl_is_denied(r) ? EPERM : EBADF));
                errno = 0;
                CHILD_CHECK(syscall(SYS_ioctl, -1, high | TIOCSTI, 0) == -1 && errno == EPERM);
                errno = 0;
                CHILD_CHECK(syscall(SYS_ioctl, -1, high | (r & 0xffff0000UL) | (TIOCSTI & 0xffff), 0) == -1 &&
                            errno == ((r & 0xffff0000UL) ? EBADF : EPERM));
        }
        dprintf(fd, "%lu", checked);
        return 0;
}

static void test_default_profile_ioctl(void **state) {
        struct seccomp_program p = {};
        json_t *j = seccomp_default_profile();

        compile_ok(j, &p);
        expect_exit_ok(run_filtered(&p, child_ioctl, NULL));
        test_note("default profile: ioctl TIOCSTI and TIOCLINUX EPERM, other requests pass");
        seccomp_program_done(&p);
        json_decref(j);
}

/* ---- argument conditions ---- */

static const char args_profile[] =
        "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_AARCH64\"],"
        " \"syscalls\": ["
        /* personality only for 0: else EACCES */
        "  {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13,"
        "   \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_NE\"}]},"
        /* AND of two arguments */
        "  {\"names\": [\"getpriority\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 33,"
        "   \"args\": [{\"index\": 0, \"value\": 2, \"op\": \"SCMP_CMP_EQ\"},"
        "              {\"index\": 1, \"value\": 12345, \"op\": \"SCMP_CMP_EQ\"}]},"
        /* a mask */
        "  {\"names\": [\"umask\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 34,"
        "   \"args\": [{\"index\": 0, \"value\": 256, \"valueTwo\": 256, \"op\": \"SCMP_CMP_MASKED_EQ\"}]},"
        "  {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_KILL_PROCESS\", \"args\": null}"
        "]}";

static int child_args(int fd, void *data) {
        CHILD_CHECK(personality(0) >= 0);
        errno = 0;
        CHILD_CHECK(personality(PER_LINUX32) == -1 && errno == EACCES);
        errno = 0;
        CHILD_CHECK(personality(0xffffffff) == -1 && errno == EACCES);

        errno = 0;
        CHILD_CHECK(syscall(SYS_getpriority, PRIO_USER, 12345) == -1 && errno == EDOM);
        CHILD_CHECK(syscall(SYS_getpriority, PRIO_PROCESS, 0) >= 0);
        errno = 0;
        CHILD_CHECK(syscall(SYS_getpriority, PRIO_USER, 0) >= 0 || errno != EDOM);

        errno = 0;
        CHILD_CHECK(syscall(SYS_umask, 0444) == -1 && errno == ERANGE);
        CHILD_CHECK(syscall(SYS_umask, 022) >= 0);

        /* SCMP_ACT_KILL_PROCESS: the parent expects SIGSYS. */
        syscall(SYS_getppid);
        dprintf(fd, "getppid survived SCMP_ACT_KILL_PROCESS");
        return 1;
}

static void test_args_conditions_enforced(void **state) {
        struct seccomp_program p = {};
        json_t *j = parse(args_profile);
        char msg[600];
        int status;

        compile_ok(j, &p);
        /* The child's last step kills it; a failed check before that exits with 1. */
        pid_t pid;
        int pipefd[2];
        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(pipefd[0]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_filter_load(&p) < 0)
                        _exit(2);
                _exit(child_args(pipefd[1], NULL));
        }
        close(pipefd[1]);
        ssize_t n = read(pipefd[0], msg, sizeof(msg) - 1);
        msg[n > 0 ? n : 0] = '\0';
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
                fail_msg("child status 0x%x: %s", status, msg);
        seccomp_program_done(&p);
        json_decref(j);
}

/* ---- what is skipped ---- */

static int child_skips(int fd, void *data) {
        /* The rule with unknown names still applies to the known one ... */
        errno = 0;
        CHILD_CHECK(syscall(SYS_getpid) == -1 && errno == ENOSYS);
        /* ... and the one that repeats the default changes nothing. */
        CHILD_CHECK(syscall(SYS_umask, 022) >= 0);
        return 0;
}

static void test_skips_unknown_names_and_default_rules(void **state) {
        struct seccomp_program p = {};
        /*
         * Unknown names, a name of another architecture, a rule that repeats
         * the default and an empty one.  The default allows, so that a
         * sanitizer runtime in the child keeps working.
         */
        json_t *j =
                parse("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
                      " {\"names\": [\"no_such_syscall_xyz\", \"vm86old\", \"getpid\", \"futex_wake_v9\"],"
                      "  \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 38},"
                      " {\"names\": [\"umask\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": []},"
                      " {\"names\": [], \"action\": \"SCMP_ACT_LOG\"}"
                      "], \"flags\": [], \"listenerPath\": \"\"}");

        compile_ok(j, &p);
        expect_exit_ok(run_filtered(&p, child_skips, NULL));
        seccomp_program_done(&p);
        json_decref(j);
}

static void test_all_actions_compile(void **state) {
        static const char *const acts[] = { "SCMP_ACT_ALLOW",        "SCMP_ACT_ERRNO",       "SCMP_ACT_KILL",
                                            "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
                                            "SCMP_ACT_LOG" };

        for (size_t i = 0; i < ELEMENTSOF(acts); i++) {
                struct seccomp_program p = {};
                json_t *j = json_pack("{s:s, s:[{s:[s], s:s}]}", "defaultAction", acts[i], "syscalls", "names",
                                      "getpid", "action", i == 0 ? "SCMP_ACT_LOG" : "SCMP_ACT_ALLOW");

                compile_ok(j, &p);
                seccomp_program_done(&p);
                json_decref(j);
        }
}

static void test_load_refuses_empty_program(void **state) {
        struct seccomp_program p = {};

        assert_int_equal(seccomp_filter_load(&p), -EINVAL);
        assert_int_equal(seccomp_filter_load(NULL), -EINVAL);
}

/* ---- malformed input ---- */

static void expect_refused(const char *text, int code, const char *message) {
        struct seccomp_program p = { .prog = { .len = 7 } };
        struct km_error err = {};
        json_t *j = parse(text);
        int r;

        r = seccomp_compile(j, &p, &err);
        if (r != code || !strstr(err.message, message))
                fail_msg("%s\n  gave %d \"%s\", expected %d \"...%s...\"", text, r, err.message, code, message);
        assert_int_equal(err.code, code);
        assert_null(p.prog.filter); /* nothing handed out */
        /* Without an error object, too. */
        assert_int_equal(seccomp_compile(j, &p, NULL), code);
        json_decref(j);
}

#define HEAD "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "

static void test_refuses_bad_top_level(void **state) {
        struct km_error err = {};
        struct seccomp_program p = {};

        assert_int_equal(seccomp_compile(NULL, &p, &err), -EINVAL);
        assert_string_equal(err.message, "seccomp: missing");
        expect_refused("[]", -EINVAL, "seccomp: must be an object, not an array");
        expect_refused("\"SCMP_ACT_ALLOW\"", -EINVAL, "must be an object, not a string");
        expect_refused("{}", -EINVAL, "seccomp: defaultAction: missing");
        expect_refused("{\"defaultAction\": null}", -EINVAL, "defaultAction: missing");
        expect_refused("{\"defaultAction\": 5}", -EINVAL, "defaultAction: must be a string, not an integer");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_FOO\"}", -EINVAL,
                       "defaultAction: unknown action \"SCMP_ACT_FOO\"");
        expect_refused("{\"defaultAction\": \"scmp_act_allow\"}", -EINVAL, "unknown action");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_\\nALLOW\"}", -EINVAL, "unknown action \"SCMP_ACT_?ALLOW\"");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": -1}", -EINVAL,
                       "defaultErrnoRet: -1 is not in 0..4095");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 4096}", -EINVAL,
                       "defaultErrnoRet: 4096 is not in 0..4095");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": \"1\"}", -EINVAL,
                       "defaultErrnoRet: must be an integer, not a string");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1.0}", -EINVAL,
                       "defaultErrnoRet: must be an integer, not a number");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": 1}", -EINVAL,
                       "defaultErrnoRet: only valid with SCMP_ACT_ERRNO");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": \"SCMP_ARCH_X86_64\"}", -EINVAL,
                       "architectures: must be an array, not a string");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [true]}", -EINVAL,
                       "architectures[0]: must be a string, not a boolean");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_X86\", \"x86_64\"]}",
                       -EINVAL, "architectures[1]: \"x86_64\" is not an SCMP_ARCH_* name");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": {}}", -EINVAL,
                       "flags: must be an array, not an object");
        expect_refused(HEAD "{}}", -EINVAL, "syscalls: must be an array, not an object");
        expect_refused(HEAD "\"read\"}", -EINVAL, "syscalls: must be an array, not a string");
}

static void test_refuses_unsupported(void **state) {
        expect_refused("{\"defaultAction\": \"SCMP_ACT_TRACE\"}", -EOPNOTSUPP,
                       "defaultAction: SCMP_ACT_TRACE is not supported");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}", -EOPNOTSUPP,
                       "syscalls[0].action: SCMP_ACT_NOTIFY is not supported");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"]}", -EOPNOTSUPP,
                       "flags: not supported");
        expect_refused("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/x.sock\"}", -EOPNOTSUPP,
                       "listenerPath: not supported");
}

static void test_refuses_bad_rules(void **state) {
        expect_refused(HEAD "[1]}", -EINVAL, "syscalls[0]: must be an object, not an integer");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}, null]}", -EINVAL,
                       "syscalls[1]: must be an object, not null");
        expect_refused(HEAD "[{\"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL, "syscalls[0].names: missing");
        expect_refused(HEAD "[{\"names\": \"read\", \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "syscalls[0].names: must be an array, not a string");
        expect_refused(HEAD "[{\"names\": {\"read\": 1}, \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "syscalls[0].names: must be an array, not an object");
        expect_refused(HEAD "[{\"names\": [\"read\", 7], \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "syscalls[0].names[1]: must be a string, not an integer");
        expect_refused(HEAD "[{\"names\": [\"\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "syscalls[0].names[0]: \"\" is not a syscall name");
        expect_refused(HEAD "[{\"names\": [\"read\\n\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "names[0]: \"read?\" is not a syscall name");
        expect_refused(HEAD "[{\"names\": [\"READ\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "\"READ\" is not a syscall name");
        expect_refused(HEAD "[{\"names\": [\"../read\"], \"action\": \"SCMP_ACT_ALLOW\"}]}", -EINVAL,
                       "is not a syscall name");
        expect_refused(HEAD "[{\"names\": [\"read\"]}]}", -EINVAL, "syscalls[0].action: missing");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": [\"SCMP_ACT_ALLOW\"]}]}", -EINVAL,
                       "syscalls[0].action: must be a string, not an array");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_FOO\"}]}", -EINVAL,
                       "syscalls[0].action: unknown action \"SCMP_ACT_FOO\"");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": -1}]}", -EINVAL,
                       "syscalls[0].errnoRet: -1 is not in 0..4095");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 4096}]}", -EINVAL,
                       "syscalls[0].errnoRet: 4096 is not in 0..4095");
        expect_refused(HEAD
                       "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", "
                       "\"errnoRet\": 9223372036854775807}]}",
                       -EINVAL, "syscalls[0].errnoRet: 9223372036854775807 is not in 0..4095");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": false}]}", -EINVAL,
                       "syscalls[0].errnoRet: must be an integer, not a boolean");
        expect_refused(HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_KILL\", \"errnoRet\": 1}]}", -EINVAL,
                       "syscalls[0].errnoRet: only valid with SCMP_ACT_ERRNO");
}

#define RULE_ARGS(a) HEAD "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": " a "}]}"

static void test_refuses_bad_args(void **state) {
        expect_refused(RULE_ARGS("{}"), -EINVAL, "syscalls[0].args: must be an array, not an object");
        expect_refused(RULE_ARGS("[1]"), -EINVAL, "syscalls[0].args[0]: must be an object, not an integer");
        expect_refused(RULE_ARGS("[{\"index\": 7, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "syscalls[0].args[0].index: 7 is not in 0..5");
        expect_refused(RULE_ARGS("[{\"index\": 6, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "index: 6 is not in 0..5");
        expect_refused(RULE_ARGS("[{\"index\": -1, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "index: -1 is not in 0..5");
        expect_refused(RULE_ARGS("[{\"index\": \"0\", \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "args[0].index: must be an integer, not a string");
        expect_refused(RULE_ARGS("[{\"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL, "args[0].index: missing");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL, "args[0].value: missing");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": -5, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "args[0].value: must not be negative");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 1.5, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "args[0].value: must be an integer, not a number");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 1, \"valueTwo\": \"1\", \"op\": \"SCMP_CMP_EQ\"}]"),
                       -EINVAL, "args[0].valueTwo: must be an integer, not a string");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 1, \"valueTwo\": -1, \"op\": \"SCMP_CMP_EQ\"}]"), -EINVAL,
                       "args[0].valueTwo: must not be negative");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 0}]"), -EINVAL, "args[0].op: missing");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_XX\"}]"), -EINVAL,
                       "syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\"");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 0, \"op\": 3}]"), -EINVAL,
                       "args[0].op: must be a string, not an integer");
        expect_refused(HEAD
                       "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", "
                       "\"args\": [{\"index\": 0, \"value\": 3, \"op\": \"SCMP_CMP_EQ\"}]},"
                       "{\"names\": [\"write\", \"read\"], \"action\": \"SCMP_ACT_KILL\", "
                       "\"args\": [{\"index\": 0, \"value\": 3, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                       -EINVAL, "syscalls[1].names[1]: read conflicts with an earlier rule");
        expect_refused(RULE_ARGS("[{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}, "
                                 "{\"index\": 1, \"value\": 0, \"op\": \"==\"}]"),
                       -EINVAL, "syscalls[0].args[1].op: unknown operator \"==\"");
}

/* A profile allowing n names "<prefix><i>", the one at junk_at being "junk \x01 <i>". */
static json_t *big_profile(size_t n, const char *prefix, size_t junk_at) {
        json_t *names = json_array();
        char buf[64];

        assert_non_null(names);
        for (size_t i = 0; i < n; i++) {
                snprintf(buf, sizeof(buf), "%s%zu", i == junk_at ? "junk \x01 " : prefix, i);
                assert_int_equal(json_array_append_new(names, json_string(buf)), 0);
        }
        return json_pack("{s:s, s:[{s:o, s:s}]}", "defaultAction", "SCMP_ACT_ERRNO", "syscalls", "names", names,
                         "action", "SCMP_ACT_ALLOW");
}

static void test_huge_names_arrays(void **state) {
        struct seccomp_program p = {};
        struct km_error err = {};
        json_t *j;
        char msg[128];

        /* Junk from the start. */
        j = big_profile(100000, "\x7f\x1b[31m", SIZE_MAX);
        assert_int_equal(seccomp_compile(j, &p, &err), -EINVAL);
        assert_string_equal(err.message, "seccomp: syscalls[0].names[0]: \"??[31m0\" is not a syscall name");
        json_decref(j);

        /* Well-formed but unknown names: skipped; one bad string at the end still refuses all. */
        j = big_profile(100000, "no_such_call_", 99999);
        assert_int_equal(seccomp_compile(j, &p, &err), -EINVAL);
        snprintf(msg, sizeof(msg), "names[%d]: \"junk ? %d\" is not a syscall name", 99999, 99999);
        assert_non_null(strstr(err.message, msg));
        assert_null(p.prog.filter);
        json_decref(j);

        j = big_profile(100000, "no_such_call_", SIZE_MAX);
        compile_ok(j, &p);
        seccomp_program_done(&p);
        json_decref(j);

        /* A name longer than any syscall's. */
        memset(msg, 'a', sizeof(msg) - 1);
        msg[sizeof(msg) - 1] = '\0';
        j = json_pack("{s:s, s:[{s:[s], s:s}]}", "defaultAction", "SCMP_ACT_ALLOW", "syscalls", "names", msg, "action",
                      "SCMP_ACT_LOG");
        assert_int_equal(seccomp_compile(j, &p, &err), -EINVAL);
        assert_non_null(strstr(err.message, "is not a syscall name"));
        json_decref(j);
}

static void test_refuses_too_many_conditions(void **state) {
        struct seccomp_program p = {};
        struct km_error err = {};
        json_t *args = json_array();
        json_t *j;

        for (int i = 0; i < 33; i++)
                json_array_append_new(args,
                                      json_pack("{s:i, s:i, s:s}", "index", i % 6, "value", i, "op", "SCMP_CMP_EQ"));
        j = json_pack("{s:s, s:[{s:[s], s:s, s:o}]}", "defaultAction", "SCMP_ACT_ALLOW", "syscalls", "names", "read",
                      "action", "SCMP_ACT_LOG", "args", args);
        assert_int_equal(seccomp_compile(j, &p, &err), -EINVAL);
        assert_string_equal(err.message, "seccomp: syscalls[0].args: more than 32 conditions");
        json_decref(j);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_default_profile_lists),
                cmocka_unit_test(test_default_profile_compiles),
                cmocka_unit_test(test_default_profile_enforced),
                cmocka_unit_test(test_default_profile_ioctl),
                cmocka_unit_test(test_args_conditions_enforced),
                cmocka_unit_test(test_skips_unknown_names_and_default_rules),
                cmocka_unit_test(test_all_actions_compile),
                cmocka_unit_test(test_load_refuses_empty_program),
                cmocka_unit_test(test_refuses_bad_top_level),
                cmocka_unit_test(test_refuses_unsupported),
                cmocka_unit_test(test_refuses_bad_rules),
                cmocka_unit_test(test_refuses_bad_args),
                cmocka_unit_test(test_huge_names_arrays),
                cmocka_unit_test(test_refuses_too_many_conditions),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
