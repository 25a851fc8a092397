/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Other OCI runtimes (oci-runtime.h) without one: names, IDs, argument vectors,
 * and the monitor, exec, kill and delete driven against a fake runtime (a
 * shell script that records its calls), unprivileged.  The real crun and
 * runc are for the integration tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "oci-runtime.h"
#include "test-helpers.h"

/* ---- helpers ---- */

/*
 * The fake runtime: --root ROOT VERB ARGS; each call is appended to
 * ROOT/calls; a container's state is the directory ROOT/ID.  "run" does what
 * BUNDLE/mode says.
 */
static const char fake_runtime[] =
        "#!/bin/sh\n"
        "[ \"$1\" = --root ] || exit 99\n"
        /* Before any child: dash's wait clears the mask it was started with. */
        "while read k v; do case $k in SigBlk:|SigIgn:) sig=\"$sig$k $v\\n\" ;; esac; done </proc/$$/status\n"
        "root=$2 verb=$3\n"
        "shift 3\n"
        "echo \"$verb $*\" >>\"$root/calls\"\n"
        "case $verb in\n"
        "run)\n"
        "  id=$3\n"
        "  [ -e \"$root/$id\" ] && { echo \"container $id exists\" >&2; exit 1; }\n"
        "  mkdir \"$root/$id\"\n"
        "  trap 'rmdir \"$root/$id\"' EXIT\n"
        "  echo \"out $id\"; echo \"err $id\" >&2\n"
        "  case $(cat \"$2/mode\") in\n"
        "  exit3) exit 3 ;;\n"
        "  term) trap 'kill $! 2>/dev/null; exit 7' TERM; sleep 10 & wait; exit 1 ;;\n"
        "  stdin) read line; echo \"stdin $line\" ;;\n"
        "  env) printf \"$sig\"; [ -e /proc/$$/fd/50 ] && echo leaked-fd-50 ;;\n"
        "  esac\n"
        "  exit 0 ;;\n"
        "delete)\n"
        "  [ -e \"$root/fail-delete\" ] && { echo first >&2; echo \"cannot delete $2\" >&2; exit 1; }\n"
        "  rmdir \"$root/$2\" ;;\n"
        "kill) [ -e \"$root/$1\" ] || { echo \"no container $1\" >&2; exit 1; } ;;\n"
        "exec) echo \"$*\" ;;\n"
        "esac\n";

struct fx {
        char *dir, root[PATH_MAX], bundle[PATH_MAX], rt[PATH_MAX];
        int dir_fd;
};

static void write_file(const char *dir, const char *name, const char *text, mode_t mode) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        assert_int_equal(close(fd), 0);
}

/* DIR/NAME's content (static buffer), "" when absent. */
static const char *read_file(const char *dir, const char *name) {
        static char buf[4096];
        char path[PATH_MAX];
        int fd;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        buf[0] = '\0';
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return buf;
        n = read(fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
        return buf;
}

static int setup(void **state) {
        struct fx *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->dir = test_mkdtemp();
        snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
        snprintf(f->bundle, sizeof(f->bundle), "%s/bundle", f->dir);
        snprintf(f->rt, sizeof(f->rt), "%s/fake-runtime", f->dir);
        assert_int_equal(mkdir(f->root, 0700), 0);
        assert_int_equal(mkdir(f->bundle, 0700), 0);
        write_file(f->dir, "fake-runtime", fake_runtime, 0755);
        f->dir_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->dir_fd >= 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fx *f = *state;

        close(f->dir_fd);
        nftw(f->dir, test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(f->dir);
        free(f);
        return 0;
}

static int wait_exit(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                assert_int_equal(errno, EINTR);
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* Runs the fake with BUNDLE/mode = mode, output into DIR/log; returns the monitor's exit status. */
static int run_logged(struct fx *f, const char *runtime, const char *mode) {
        struct runtime_request rq = { runtime, f->root, f->bundle, "c1", { 0, 1, 2 }, f->dir_fd, -EBADF, NULL };
        struct km_error err = {};
        pid_t pid;
        int r;

        write_file(f->bundle, "mode", mode, 0644);
        unlinkat(f->dir_fd, "log", 0);
        r = runtime_run(&rq, &pid, &err);
        if (r < 0)
                fail_msg("runtime_run: %d %s", r, err.message);
        return wait_exit(pid);
}

/* ---- tests ---- */

static void test_id_validation(void **state) {
        static const char *const good[] = { "c1", "ctr-abc", "A.b_c+d-e", "0" };
        static const char *const bad[] = { "", ".", "..", "-x", ".x", "a/b", "a b", "a\nb", "ä" };
        char longest[201], too_long[202];

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                assert_true(runtime_id_is_valid(good[i]));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(runtime_id_is_valid(bad[i]));
        assert_false(runtime_id_is_valid(NULL));
        memset(longest, 'a', 200);
        longest[200] = '\0';
        memset(too_long, 'a', 201);
        too_long[201] = '\0';
        assert_true(runtime_id_is_valid(longest));
        assert_false(runtime_id_is_valid(too_long));
}

static void test_resolve(void **state) {
        struct fx *f = *state;
        struct km_error err = {};
        char search[3 * PATH_MAX], path[PATH_MAX + 32];
        char *p;

        write_file(f->dir, "plain", "x", 0644);
        assert_int_equal(mkdirat(f->dir_fd, "dirrt", 0755), 0);
        /* "." and relative entries are skipped even when they hold it. */
        assert_int_equal(chdir(f->dir), 0);
        assert_null(runtime_resolve_in("fake-runtime", ".::bundle", &err));
        assert_int_equal(err.code, -ENOENT);
        assert_non_null(strstr(err.message, "runtime fake-runtime: not found in"));

        snprintf(search, sizeof(search), "/nonexistent:%s:%s", f->bundle, f->dir);
        p = runtime_resolve_in("fake-runtime", search, &err);
        assert_non_null(p);
        snprintf(path, sizeof(path), "%s/fake-runtime", f->dir);
        assert_string_equal(p, path);
        free(p);
        /* Not executable, a directory: skipped in the search, refused by path. */
        assert_null(runtime_resolve_in("plain", search, &err));
        assert_int_equal(err.code, -ENOENT);
        assert_null(runtime_resolve_in("dirrt", search, &err));
        snprintf(path, sizeof(path), "%s/plain", f->dir);
        assert_null(runtime_resolve_in(path, search, &err));
        assert_int_equal(err.code, -EACCES);
        snprintf(path, sizeof(path), "%s/dirrt", f->dir);
        assert_null(runtime_resolve_in(path, search, &err));
        assert_int_equal(err.code, -EISDIR);
        /* A relative path is made absolute. */
        p = runtime_resolve_in("./fake-runtime", "", &err);
        assert_non_null(p);
        assert_true(p[0] == '/');
        free(p);

        assert_null(runtime_resolve_in("embedded", search, &err));
        assert_int_equal(err.code, -EINVAL);
        assert_null(runtime_resolve_in("", search, &err));
        assert_null(runtime_resolve_in("..", search, &err));
        p = runtime_resolve("sh", &err);
        assert_non_null(p);
        assert_true(p[0] == '/');
        free(p);
        assert_null(runtime_resolve("kubemount-no-such-runtime", &err));
        assert_non_null(strstr(err.message, "not found in PATH or "));
        assert_int_equal(chdir("/"), 0);
}

static void test_argv(void **state) {
        char ls[] = "ls", l[] = "-l", slash[] = "/", a[] = "A=1", b[] = "B=-x";
        char *args[] = { ls, l, slash, NULL }, *env[] = { a, b, NULL };
        struct runtime_exec_request rq = { "/rt", "/root", "c1", args, env, "/w", true, { 0, 1, 2 } };
        static const char *const want_run[] = { "/rt", "--root", "/root", "run", "--bundle", "/b", "c1" };
        static const char *const want_exec[] = { "/rt", "--root", "/root", "exec", "--tty", "--cwd", "/w", "--env",
                                                 "A=1", "--env",  "B=-x",  "c1",   "ls",    "-l",    "/" };
        const char **v = runtime_run_argv("/rt", "/root", "/b", "c1");
        size_t i;

        assert_non_null(v);
        for (i = 0; i < ELEMENTSOF(want_run); i++)
                assert_string_equal(v[i], want_run[i]);
        assert_null(v[i]);
        free(v);

        v = runtime_exec_argv(&rq);
        assert_non_null(v);
        for (i = 0; i < ELEMENTSOF(want_exec); i++)
                assert_string_equal(v[i], want_exec[i]);
        assert_null(v[i]);
        free(v);

        rq.env = NULL, rq.cwd = NULL, rq.tty = false;
        v = runtime_exec_argv(&rq);
        assert_non_null(v);
        assert_string_equal(v[4], "c1");
        assert_string_equal(v[5], "ls");
        free(v);
}

static void test_run_status_and_log(void **state) {
        struct fx *f = *state;
        char want[PATH_MAX + 64];

        assert_int_equal(run_logged(f, f->rt, "exit3"), 3);
        assert_string_equal(read_file(f->dir, "log"), "out c1\nerr c1\n");
        snprintf(want, sizeof(want), "run --bundle %s c1\n", f->bundle);
        assert_string_equal(read_file(f->root, "calls"), want);
        assert_int_equal(run_logged(f, f->rt, "ok"), 0);
}

static void test_run_deletes_stale_state(void **state) {
        struct fx *f = *state;
        struct runtime_request rq = { f->rt, f->root, f->bundle, "c1", { 0, 1, 2 }, f->dir_fd, -EBADF, NULL };
        struct km_error err = {};
        char want[PATH_MAX + 64];
        pid_t pid;

        assert_int_equal(mkdirat(f->dir_fd, "root/c1", 0700), 0);
        assert_int_equal(run_logged(f, f->rt, "ok"), 0);
        snprintf(want, sizeof(want), "delete --force c1\nrun --bundle %s c1\n", f->bundle);
        assert_string_equal(read_file(f->root, "calls"), want);

        /* A delete that fails is the run's error, with what the runtime said last. */
        assert_int_equal(mkdirat(f->dir_fd, "root/c1", 0700), 0);
        write_file(f->root, "fail-delete", "", 0644);
        assert_int_equal(runtime_run(&rq, &pid, &err), -EIO);
        assert_non_null(strstr(err.message, "stale container c1"));
        assert_non_null(strstr(err.message, "exit status 1: cannot delete c1"));
}

static void test_run_forwards_signals(void **state) {
        struct fx *f = *state;
        struct runtime_request rq = { f->rt, f->root, f->bundle, "c1", { -1, -1, -1 }, -EBADF, -EBADF, NULL };
        struct km_error err = {};
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        char calls[PATH_MAX + 8];
        pid_t pid;

        assert_true(null >= 0);
        rq.stdio[0] = rq.stdio[1] = rq.stdio[2] = null;
        write_file(f->bundle, "mode", "term", 0644);
        assert_int_equal(runtime_run(&rq, &pid, &err), 0);
        close(null);
        snprintf(calls, sizeof(calls), "%s/c1", f->root);
        for (int i = 0; i < 500 && access(calls, F_OK) < 0; i++)
                usleep(10000);
        usleep(100000); /* the trap is set right after the state dir */
        assert_int_equal(kill(pid, SIGTERM), 0);
        assert_int_equal(wait_exit(pid), 7);
}

/* SigIgn of /proc/self/status. */
static unsigned long long ignored_signals(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long mask = 0;

        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "SigIgn: %llx", &mask) == 1)
                        break;
        return mask;
}

/* The bits of the signals below SIGRTMIN that glibc keeps for itself. */
static unsigned long long reserved_signals(void) {
        unsigned long long mask = 0;

        for (int sig = 32; sig < SIGRTMIN; sig++)
                mask |= 1ULL << (sig - 1);
        return mask;
}

static void test_run_resets_signals_and_fds(void **state) {
        struct fx *f = *state;
        struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe, old_hup;
        sigset_t usr1, old_mask;
        int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
        char want[128];

        /*
         * glibc's own signals (32 and 33) cannot be reset through sigaction():
         * ignored when the test started (GNU make's children, so under
         * dpkg-buildpackage), they stay ignored in the runtime too.
         */
        snprintf(want, sizeof(want), "out c1\nerr c1\nSigBlk: 0000000000000000\nSigIgn: %016llx\n",
                 ignored_signals() & reserved_signals());
        assert_true(fd >= 0);
        assert_int_equal(dup2(fd, 50), 50);
        close(fd);
        sigaction(SIGPIPE, &ign, &old_pipe);
        sigaction(SIGHUP, &ign, &old_hup);
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, &old_mask);
        assert_int_equal(run_logged(f, f->rt, "env"), 0);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        close(50);
        assert_string_equal(read_file(f->dir, "log"), want);
}

static void test_run_exec_failure(void **state) {
        struct fx *f = *state;
        char path[PATH_MAX + 32];

        snprintf(path, sizeof(path), "%s/nonexistent", f->dir);
        assert_int_equal(run_logged(f, path, "ok"), 127);
        assert_non_null(strstr(read_file(f->dir, "log"), "kubemount: runtime "));
        snprintf(path, sizeof(path), "%s/bundle/mode", f->dir);
        assert_int_equal(run_logged(f, path, "ok"), 126);
        assert_non_null(strstr(read_file(f->dir, "log"), "Permission denied"));
}

static void test_run_refuses_bad_requests(void **state) {
        struct fx *f = *state;
        struct runtime_request rq = { f->rt, f->root, f->bundle, "c/1", { 0, 1, 2 }, -EBADF, -EBADF, NULL };
        struct km_error err = {};
        pid_t pid;

        assert_int_equal(runtime_run(&rq, &pid, &err), -EINVAL);
        rq.id = "c1", rq.bundle = "bundle";
        assert_int_equal(runtime_run(&rq, &pid, &err), -EINVAL);
        rq.bundle = f->bundle, rq.root = "root";
        assert_int_equal(runtime_run(&rq, &pid, &err), -EINVAL);
        rq.root = f->root, rq.runtime = "fake-runtime";
        assert_int_equal(runtime_run(&rq, &pid, &err), -EINVAL);
}

static void test_exec(void **state) {
        struct fx *f = *state;
        char ls[] = "ls", l[] = "-l", a[] = "A=1";
        char *args[] = { ls, l, NULL }, *env[] = { a, NULL };
        struct runtime_exec_request rq = { f->rt, f->root, "c1", args, env, "/w", false, { -1, -1, -1 } };
        struct km_error err = {};
        int fds[2];
        char out[256] = "";
        pid_t pid;

        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        /* stdin, stdout and stderr all the pipe's write end: overlapping stdio. */
        rq.stdio[0] = rq.stdio[1] = rq.stdio[2] = fds[1];
        assert_int_equal(runtime_exec(&rq, &pid, &err), 0);
        close(fds[1]);
        assert_true(read(fds[0], out, sizeof(out) - 1) > 0);
        close(fds[0]);
        assert_int_equal(wait_exit(pid), 0);
        assert_string_equal(out, "--cwd /w --env A=1 c1 ls -l\n");
        rq.args = NULL;
        assert_int_equal(runtime_exec(&rq, &pid, &err), -EINVAL);
}

static void test_kill_delete(void **state) {
        struct fx *f = *state;
        struct km_error err = {};

        /* No state: nothing is run. */
        assert_int_equal(runtime_delete(f->rt, f->root, "c1", &err), 0);
        assert_int_equal(runtime_kill(f->rt, f->root, "c1", SIGKILL, &err), -ESRCH);
        assert_string_equal(read_file(f->root, "calls"), "");

        assert_int_equal(mkdirat(f->dir_fd, "root/c1", 0700), 0);
        assert_int_equal(runtime_kill(f->rt, f->root, "c1", SIGKILL, &err), 0);
        assert_int_equal(runtime_delete(f->rt, f->root, "c1", &err), 0);
        assert_string_equal(read_file(f->root, "calls"), "kill c1 9\ndelete --force c1\n");

        assert_int_equal(mkdirat(f->dir_fd, "root/c1", 0700), 0);
        write_file(f->root, "fail-delete", "", 0644);
        assert_int_equal(runtime_delete(f->rt, f->root, "c1", &err), -EIO);
        assert_non_null(strstr(err.message, "delete c1: exit status 1: cannot delete c1"));
        assert_int_equal(runtime_delete(f->rt, f->root, "../c1", &err), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_id_validation),
                cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
                cmocka_unit_test(test_argv),
                cmocka_unit_test_setup_teardown(test_run_status_and_log, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_deletes_stale_state, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_forwards_signals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_resets_signals_and_fds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_exec_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_run_refuses_bad_requests, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kill_delete, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
