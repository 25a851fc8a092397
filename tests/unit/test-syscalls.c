/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall wrappers of basic/syscalls.c and their fallbacks, unprivileged.
 * Built twice: as test-syscalls, where the kernel's calls are used, and with
 * KM_TEST_DISABLE_FEATURES as test-syscalls-fallback, where close_range,
 * clone3 and execveat are switched off (km_features_disable) and a seccomp
 * filter that refuses them with EPERM shows that they are not even tried.
 * In both, a filter that answers ENOSYS (a kernel without them) or EINVAL
 * (close_range before CLOSE_RANGE_CLOEXEC) sends the wrappers to their
 * fallbacks, and a full fd table (no /proc/self/fd to read) sends close_range's
 * to its loop over every possible fd.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "util.h"
#include "syscalls.h"
#include "test-helpers.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

extern char **environ;

/* ---- checks in a forked child, whose failure comes back through fd 9 ---- */

#define REPORT_FD 9

#define CHILD_CHECK(cond)                                                                                              \
        do {                                                                                                           \
                if (!(cond)) {                                                                                         \
                        dprintf(REPORT_FD, "line %d: %s (errno %d %s)", __LINE__, #cond, errno, strerror(errno));      \
                        return 1;                                                                                      \
                }                                                                                                      \
        } while (0)

static void in_child(int (*fn)(void)) {
        char msg[512] = "";
        int fds[2], status;
        ssize_t n;
        pid_t pid;

        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (dup2(fds[1], REPORT_FD) < 0)
                        _exit(2);
                _exit(fn());
        }
        close(fds[1]);
        n = read(fds[0], msg, sizeof(msg) - 1);
        close(fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("child: %s (wait status %#x)", n > 0 ? msg : "no message", status);
}

static bool fd_open(int fd) {
        return fcntl(fd, F_GETFD) >= 0;
}

static bool fd_cloexec(int fd) {
        int flags = fcntl(fd, F_GETFD);
        return flags >= 0 && (flags & FD_CLOEXEC);
}

/* A filter that makes the calls nrs[] fail with error, as a kernel without them would. */
static int refuse_syscalls(const int *nrs, size_t n, int error) {
        struct sock_filter f[16];
        struct sock_fprog prog;
        size_t k = 0;

        if (n > 12)
                return -E2BIG;
        f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        for (size_t i = 0; i < n; i++)
                f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], (uint8_t)(n - i), 0);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)error);
        prog = (struct sock_fprog){ .len = (unsigned short)k, .filter = f };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return -errno;
        return 0;
}

static const int new_calls[] = { __NR_close_range, __NR_clone3, __NR_execveat };

/* ---- what every variant must do ------------------------------------------- */

static int check_close_range(void) {
        int null = open("/dev/null", O_RDONLY); /* without O_CLOEXEC: the flag is what we look at */

        CHILD_CHECK(null >= 0);
        for (int fd = 100; fd <= 105; fd++)
                CHILD_CHECK(dup2(null, fd) == fd && !fd_cloexec(fd));
        CHILD_CHECK(sys_close_range(101, 103, 0) == 0);
        CHILD_CHECK(fd_open(100) && !fd_open(101) && !fd_open(102) && !fd_open(103) && fd_open(104));
        CHILD_CHECK(sys_close_range(100, 105, CLOSE_RANGE_CLOEXEC) == 0);
        CHILD_CHECK(fd_cloexec(100) && fd_cloexec(104) && fd_cloexec(105) && !fd_open(101));
        CHILD_CHECK(!fd_cloexec(null) && fd_open(REPORT_FD));
        CHILD_CHECK(sys_close_range(104, ~0U, 0) == 0);
        CHILD_CHECK(fd_open(100) && !fd_open(104) && !fd_open(105) && fd_open(REPORT_FD));
        CHILD_CHECK(sys_close_range(5, 4, 0) == -EINVAL);
        return 0;
}

/* sh -c 'exit 7' through an O_PATH fd, in a child made by sys_clone3(). */
static int check_clone3_execveat(void) {
        char *argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 7", NULL };
        struct clone_args args = { .exit_signal = SIGCHLD };
        int sh = open("/bin/sh", O_PATH | O_CLOEXEC), status;
        pid_t pid;

        CHILD_CHECK(sh >= 0);
        pid = sys_clone3(&args);
        if (pid == 0) {
                int r = sys_execveat(sh, "", argv, environ, AT_EMPTY_PATH);
                _exit(r < 0 && -r < 100 ? 100 - r : 99);
        }
        CHILD_CHECK(pid > 0);
        CHILD_CHECK(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 7)
                dprintf(REPORT_FD, "the child of clone3 exited %#x (100+E: execveat failed with E); ", status);
        CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
        /* A directory is not executable, whichever way it is tried. */
        int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHILD_CHECK(sys_execveat(dir, "", argv, environ, AT_EMPTY_PATH) == -EACCES);
        return 0;
}

static int check_all(void) {
        return check_close_range() || check_clone3_execveat();
}

/* ---- the tests ------------------------------------------------------------- */

static void test_wrappers(void **state) {
        in_child(check_all);
}

static int enosys_child(void) {
        CHILD_CHECK(refuse_syscalls(new_calls, ELEMENTSOF(new_calls), ENOSYS) == 0);
        return check_all();
}

/* A kernel without close_range, clone3 or execveat. */
static void test_fallbacks_on_enosys(void **state) {
        in_child(enosys_child);
}

static int einval_child(void) {
        const int nr = __NR_close_range;
        int null = open("/dev/null", O_RDONLY);

        CHILD_CHECK(refuse_syscalls(&nr, 1, EINVAL) == 0);
        CHILD_CHECK(null >= 0 && dup2(null, 100) == 100 && !fd_cloexec(100));
        CHILD_CHECK(sys_close_range(100, 100, CLOSE_RANGE_CLOEXEC) == 0);
        CHILD_CHECK(fd_cloexec(100));
        /* Plain closing never takes that path: the kernel's EINVAL is the answer. */
        CHILD_CHECK(sys_close_range(100, 100, 0) == (feature_available(FEATURE_CLOSE_RANGE) ? -EINVAL : 0));
        return 0;
}

/* Linux 5.9 and 5.10: close_range without CLOSE_RANGE_CLOEXEC. */
static void test_close_range_cloexec_fallback(void **state) {
        in_child(einval_child);
}

static int full_table_child(void) {
        struct rlimit rl = { 64, 64 };
        int fd;

        CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
        while ((fd = fcntl(0, F_DUPFD, 0)) >= 0)
                ;
        CHILD_CHECK(errno == EMFILE);
        CHILD_CHECK(open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC) < 0 && errno == EMFILE);
        CHILD_CHECK(sys_close_range(10, ~0U, 0) == 0);
        for (fd = 0; fd < 64; fd++)
                CHILD_CHECK(fd_open(fd) == (fd < 10));
        return 0;
}

/* No /proc/self/fd to read (here: no fd left to open it with): every fd up to the limit. */
static void test_close_range_without_proc(void **state) {
        in_child(full_table_child);
}

static int close_all_but_child(void) {
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int keep[] = { 40, REPORT_FD, -EBADF, 1, 20 };

        CHILD_CHECK(null >= 0);
        CHILD_CHECK(dup2(null, 20) == 20 && dup2(null, 30) == 30 && dup2(null, 40) == 40 && dup2(null, 41) == 41);
        close_all_but(keep, ELEMENTSOF(keep));
        CHILD_CHECK(fd_open(20) && fd_open(40) && fd_open(REPORT_FD) && fd_open(0) && fd_open(1));
        CHILD_CHECK(!fd_open(30) && !fd_open(41) && !fd_open(null));
        return 0;
}

static void test_close_all_but(void **state) {
        in_child(close_all_but_child);
}

/* clone(2) cannot do what clone3 does beyond flags and exit_signal: it says so. */
static void test_clone3_fallback_limits(void **state) {
        int pidfd = -1;
        struct clone_args args = { .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD };
        char *argv[] = { (char *)"true", NULL };

        if (feature_available(FEATURE_CLONE3))
                skip();
        assert_int_equal(sys_clone3(&args), -ENOSYS);
        args = (struct clone_args){ .flags = 1ULL << 32 /* CLONE_CLEAR_SIGHAND */, .exit_signal = SIGCHLD };
        assert_int_equal(sys_clone3(&args), -ENOSYS);
        /* execveat's fallback only knows an fd to execute. */
        assert_int_equal(sys_execveat(AT_FDCWD, "/bin/true", argv, environ, 0), -ENOSYS);
}

static int eperm_child(void) {
        CHILD_CHECK(refuse_syscalls(new_calls, ELEMENTSOF(new_calls), EPERM) == 0);
        return check_all();
}

/* Switched off, the calls are not made at all: a filter that refuses them changes nothing. */
static void test_switched_off_not_tried(void **state) {
        if (feature_available(FEATURE_CLOSE_RANGE))
                skip();
        in_child(eperm_child);
}

static void test_pidfd(void **state) {
        int pidfd, status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        pidfd = sys_pidfd_open(pid, 0);
        assert_true(pidfd >= 0);
        assert_int_equal(sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        /* Reaped: signalling it now is an error, not another process. */
        assert_int_equal(sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0), -ESRCH);
        close(pidfd);
        assert_int_equal(sys_pidfd_open(-1, 0), -EINVAL);
}

static int setup_group(void **state) {
#if KM_TEST_DISABLE_FEATURES
        km_features_disable(FEATURE_CLOSE_RANGE | FEATURE_CLONE3 | FEATURE_EXECVEAT);
#endif
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_wrappers),
                cmocka_unit_test(test_fallbacks_on_enosys),
                cmocka_unit_test(test_close_range_cloexec_fallback),
                cmocka_unit_test(test_close_range_without_proc),
                cmocka_unit_test(test_close_all_but),
                cmocka_unit_test(test_clone3_fallback_limits),
                cmocka_unit_test(test_switched_off_not_tried),
                cmocka_unit_test(test_pidfd),
        };
        return cmocka_run_group_tests(tests, setup_group, NULL);
}
