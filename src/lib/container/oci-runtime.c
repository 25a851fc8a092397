/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Other OCI runtimes (see oci-runtime.h). */
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "pid1.h"
#include "launch.h"
#include "overlay.h"
#include "oci-runtime.h"
#include "fileio.h"
#include "syscalls.h"

/* Searched after $PATH: root's usual directories, where Debian puts runc. */
#define SYSTEM_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ID_MAX 200
/* How much of a failed kill's or delete's stderr goes into the message. */
#define MESSAGE_MAX 300

/* ---- names ------------------------------------------------------------- */

/* 0 if path is an executable regular file. */
static int check_executable(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        return access(path, X_OK) < 0 ? -errno : 0;
}

/* DIR/NAME if it is executable, else NULL (errno: ENOMEM, or 0). */
static char *search_dir(const char *dir, size_t len, const char *name) {
        char *p = NULL;

        errno = 0;
        if (len == 0 || dir[0] != '/') /* "", "." and relative entries: not for a privileged tool */
                return NULL;
        if (asprintf(&p, "%.*s/%s", (int)len, dir, name) < 0) {
                errno = ENOMEM;
                return NULL;
        }
        if (check_executable(p) == 0)
                return p;
        free(p);
        errno = 0;
        return NULL;
}

char *runtime_resolve_in(const char *name, const char *search, struct km_error *err) {
        char shown[256];
        char *p;

        if (!name || !*name) {
                error_set_plain(err, -EINVAL, "runtime: no name given");
                return NULL;
        }
        str_printable(name, shown, sizeof(shown));
        if (streq(name, "embedded")) {
                error_set_plain(err, -EINVAL, "runtime embedded: kubemount's own launcher, not an OCI runtime");
                return NULL;
        }
        if (strchr(name, '/')) {
                _cleanup_free_ char *abs = path_absolute(name);
                int r;

                if (!abs) {
                        error_set(err, -ENOMEM, "runtime %s", shown);
                        return NULL;
                }
                r = check_executable(abs);
                if (r < 0) {
                        error_set(err, r, "runtime %s", str_printable(abs, shown, sizeof(shown)));
                        return NULL;
                }
                return TAKE_PTR(abs);
        }
        if (streq(name, ".") || streq(name, "..")) {
                error_set_plain(err, -EINVAL, "runtime %s: not a program name", shown);
                return NULL;
        }
        for (const char *d = search ? search : ""; *d;) {
                size_t len = strcspn(d, ":");

                if ((p = search_dir(d, len, name)))
                        return p;
                if (errno == ENOMEM) {
                        error_set(err, -ENOMEM, "runtime %s", shown);
                        return NULL;
                }
                d += len + (d[len] == ':');
        }
        error_set_plain(err, -ENOENT, "runtime %s: not found in %s", shown, search && *search ? search : "(none)");
        return NULL;
}

char *runtime_resolve(const char *name, struct km_error *err) {
        const char *path = getenv("PATH");
        _cleanup_free_ char *search = NULL;
        char *p;

        if (asprintf(&search, "%s%s%s", path && *path ? path : "", path && *path ? ":" : "", SYSTEM_PATH) < 0) {
                error_set(err, -ENOMEM, "runtime");
                return NULL;
        }
        p = runtime_resolve_in(name, search, err);
        if (!p && err && err->code == -ENOENT && !strchr(name, '/'))
                error_set_plain(err, -ENOENT, "runtime %.200s: not found in PATH or %s", name, SYSTEM_PATH);
        return p;
}

bool runtime_id_is_valid(const char *id) {
        size_t n;

        if (!id)
                return false;
        for (n = 0; id[n]; n++) {
                char c = id[n];
                bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

                if (n >= ID_MAX || !(alnum || (n > 0 && (c == '_' || c == '.' || c == '+' || c == '-'))))
                        return false;
        }
        return n > 0;
}

/* ---- argument vectors ------------------------------------------------- */

const char **runtime_run_argv(const char *runtime, const char *root, const char *bundle, const char *id) {
        const char *v[] = { runtime, "--root", root, "run", "--bundle", bundle, id, NULL };
        const char **argv = malloc(sizeof(v));

        if (argv)
                memcpy(argv, v, sizeof(v));
        return argv;
}

const char **runtime_exec_argv(const struct runtime_exec_request *rq) {
        size_t n_args = 0, n_env = 0, i = 0;
        const char **argv;

        while (rq->args && rq->args[n_args])
                n_args++;
        while (rq->env && rq->env[n_env])
                n_env++;
        /* RUNTIME --root ROOT exec [--tty] [--cwd DIR] (--env K=V)* ID ARGS NULL */
        argv = calloc(4 + 1 + 2 + 2 * n_env + 1 + n_args + 1, sizeof(char *));
        if (!argv)
                return NULL;
        argv[i++] = rq->runtime;
        argv[i++] = "--root";
        argv[i++] = rq->root;
        argv[i++] = "exec";
        if (rq->tty)
                argv[i++] = "--tty";
        if (rq->cwd) {
                argv[i++] = "--cwd";
                argv[i++] = rq->cwd;
        }
        for (size_t j = 0; j < n_env; j++) {
                argv[i++] = "--env";
                argv[i++] = rq->env[j];
        }
        argv[i++] = rq->id;
        for (size_t j = 0; j < n_args; j++)
                argv[i++] = rq->args[j];
        argv[i] = NULL;
        return argv;
}

/* ---- processes ---------------------------------------------------------- */

/* Default dispositions: a signal the caller ignores must reach the runtime (and our signalfd). */
static void reset_signals(void) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };

        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL); /* glibc's reserved ones fail: fine */
}

/*
 * crun (1.8) refuses to create a container on a hybrid host, v1 hierarchies
 * with a cgroup2 at /sys/fs/cgroup/unified: whether that holds for RUNTIME.
 */
static bool needs_v1_view(const char *runtime) {
        struct statfs sfs;

        return startswith(path_basename(runtime), "crun") && statfs(CGROUP_ROOT, &sfs) == 0 &&
               sfs.f_type == TMPFS_MAGIC && statfs(CGROUP_ROOT "/unified", &sfs) == 0 &&
               sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/*
 * Gives the runtime a mount namespace of its own without the unified
 * hierarchy.  Everything else stays shared with the caller's namespace (the
 * container's rshared binds still propagate); only /sys/fs/cgroup is made a
 * slave first, so that the unmount does not propagate back.
 */
static void hide_unified(void) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, CGROUP_ROOT, NULL, MS_SLAVE, NULL) < 0 ||
            umount2(CGROUP_ROOT "/unified", MNT_DETACH) < 0)
                dprintf(STDERR_FILENO, "kubemount: runtime: hide %s/unified: %s\n", CGROUP_ROOT, strerror(errno));
}

/* In the child: stdio onto 0-2 (they may overlap), the rest closed, then the runtime. */
static _Noreturn void exec_runtime(const char *const *argv, const int stdio[3], bool v1_view) {
        sigset_t none;
        int e;

        reset_signals();
        (void)setsid();
        if (stdio_install(stdio) < 0)
                _exit(125);
        if (v1_view)
                hide_unified();
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(argv[0], (char *const *)argv);
        e = errno;
        dprintf(STDERR_FILENO, "kubemount: runtime %s: %s\n", argv[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
}

/* Forks the runtime with every signal blocked until it has reset them. */
static int spawn(const char *const *argv, const int stdio[3], bool v1_view, pid_t *ret_pid, struct km_error *err) {
        sigset_t all, old;
        pid_t pid;
        int r;

        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        pid = fork();
        if (pid == 0)
                exec_runtime(argv, stdio, v1_view);
        r = pid < 0 ? -errno : 0;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (r < 0)
                return error_set(err, r, "runtime %s %s: fork", argv[0], argv[3]);
        *ret_pid = pid;
        return 0;
}

static int wait_status(pid_t pid, int *ret_status) {
        while (waitpid(pid, ret_status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/* 1 if ROOT/ID exists: the runtime keeps a container's state there (runc and crun alike). */
static int state_exists(const char *root, const char *id) {
        char path[PATH_MAX];
        struct stat st;

        if (snprintf(path, sizeof(path), "%s/%s", root, id) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 1;
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

static int check_request(const char *runtime, const char *root, const char *id, struct km_error *err) {
        char shown[256];

        if (!runtime || runtime[0] != '/')
                return error_set_plain(err, -EINVAL, "runtime: the path of the program must be absolute");
        if (!root || root[0] != '/')
                return error_set_plain(err, -EINVAL, "runtime %s: the state directory must be absolute", runtime);
        if (!runtime_id_is_valid(id))
                return error_set_plain(err, -EINVAL, "runtime %s: invalid container ID '%s'", runtime,
                                       id ? str_printable(id, shown, sizeof(shown)) : "(null)");
        return 0;
}

/* The last non-empty line of what fd holds (from its start), printable, in buf. */
static void last_line(int fd, char *buf, size_t size) {
        char text[4096], *end, *start;
        off_t total = lseek(fd, 0, SEEK_END), from = total - (off_t)sizeof(text) + 1;
        ssize_t n = pread(fd, text, sizeof(text) - 1, from > 0 ? from : 0);

        text[n > 0 ? n : 0] = '\0';
        end = text + strlen(text);
        while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
                *--end = '\0';
        start = strrchr(text, '\n');
        str_printable(start ? start + 1 : text, buf, size);
}

/*
 * Runs RUNTIME --root ROOT VERB ... with stdin and stdout on /dev/null and
 * stderr kept (a memfd, so that nothing can block us); waits.  0 when it
 * exited 0, 1 when it failed (err says how, with its last line of stderr),
 * < 0 if it could not be run.
 */
static int call(const char *const *argv, const char *id, struct km_error *err) {
        _cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        _cleanup_close_ int out = memfd_create("kubemount-runtime", MFD_CLOEXEC);
        char line[MESSAGE_MAX];
        int stdio[3], status, code, sig, r;
        pid_t pid;

        if (null < 0)
                return error_set(err, -errno, "runtime %s %s: /dev/null", argv[0], argv[3]);
        if (out < 0)
                return error_set(err, -errno, "runtime %s %s: memfd", argv[0], argv[3]);
        stdio[0] = stdio[1] = null;
        stdio[2] = out;
        r = spawn(argv, stdio, false, &pid, err);
        if (r < 0)
                return r;
        r = wait_status(pid, &status);
        if (r < 0)
                return error_set(err, r, "runtime %s %s: wait", argv[0], argv[3]);
        code = exit_code_from_status(status, &sig);
        if (code == 0)
                return 0;
        last_line(out, line, sizeof(line));
        error_set_plain(err, -EIO, "runtime %s %s %s: %s %d%s%s", argv[0], argv[3], id,
                        sig ? "killed by signal" : "exit status", sig ? sig : code, *line ? ": " : "", line);
        return 1;
}

int runtime_kill(const char *runtime, const char *root, const char *id, int sig, struct km_error *err) {
        char signum[16];
        const char *argv[] = { runtime, "--root", root, "kill", id, signum, NULL };
        int r = check_request(runtime, root, id, err);

        if (r < 0)
                return r;
        snprintf(signum, sizeof(signum), "%d", sig);
        r = state_exists(root, id);
        if (r < 0)
                return error_set(err, r, "runtime %s kill %s: %s", runtime, id, root);
        if (r == 1 && (r = call(argv, id, err)) <= 0)
                return r;
        /* Not there, or the kill failed: -ESRCH if it is gone (it may have ended meanwhile). */
        if (state_exists(root, id) == 0)
                return error_set_plain(err, -ESRCH, "runtime %s kill %s: no such container", runtime, id);
        return -EIO; /* err says why */
}

int runtime_delete(const char *runtime, const char *root, const char *id, struct km_error *err) {
        const char *argv[] = { runtime, "--root", root, "delete", "--force", id, NULL };
        int r = check_request(runtime, root, id, err);

        if (r < 0)
                return r;
        r = state_exists(root, id);
        if (r < 0)
                return error_set(err, r, "runtime %s delete %s: %s", runtime, id, root);
        if (r == 0 || (r = call(argv, id, err)) <= 0)
                return r;
        /* Failed, but gone after all (or meanwhile): what the runtime said does not matter. */
        return state_exists(root, id) == 0 ? 0 : -EIO;
}

/* ---- the bundle's root and binds ------------------------------------------ */

/* Whether the monitor prepares the bundle (a writable layer, binds): see oci-runtime.h. */
static bool bundle_prepared(const struct container_spec *s) {
        for (size_t i = 0; s && i < s->n_mounts; i++)
                if (launch_is_bind(&s->mounts[i]))
                        return true;
        return s && s->root_overlay;
}

/* config.json, as the runtime is to read it: root.path and the bind sources are what the monitor attaches. */
static int bundle_config(const struct runtime_request *rq, struct km_error *err) {
        const struct container_spec *s = rq->spec;
        _cleanup_close_ int dir = open(rq->bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_json_ json_t *config = NULL;
        _cleanup_free_ char *text = NULL;
        json_t *mounts;
        int r;

        if (dir < 0)
                return error_set(err, -errno, "bundle %s", rq->bundle);
        r = read_json_file(dir, "config.json", &config, err);
        if (r < 0)
                return r;
        mounts = json_object_get(config, "mounts");
        if (json_array_size(mounts) != s->n_mounts)
                return error_set_plain(err, -EINVAL, "bundle %s: config.json is not the container's", rq->bundle);
        if (s->root_overlay &&
            json_object_set_new(json_object_get(config, "root"), "path", json_sprintf("%s/rootfs", rq->bundle)) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_mounts; i++)
                if (launch_is_bind(&s->mounts[i]) &&
                    json_object_set_new(json_array_get(mounts, i), "source",
                                        json_sprintf("%s/bind-%zu", rq->bundle, i)) < 0)
                        return -ENOMEM;
        text = json_dumps(config, JSON_INDENT(2));
        if (!text)
                return -ENOMEM;
        return write_file_replace(dir, "config.json", text, strlen(text), 0600, err);
}

/* DIR/NAME made (a directory, or a file if the tree is not one) and opened: a mount point in the bundle. */
static int bundle_mount_point(int dir, const char *name, int tree, struct km_error *err) {
        struct stat st;
        int fd;

        if (fstat(tree, &st) < 0)
                return error_set(err, -errno, "bundle: %s", name);
        if (S_ISDIR(st.st_mode)) {
                if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
                        return error_set(err, -errno, "bundle: %s", name);
        } else {
                fd = openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return error_set(err, -errno, "bundle: %s", name);
                close(fd);
        }
        fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? error_set(err, -errno, "bundle: %s", name) : fd;
}

/* Attaches a detached tree, or binds a held path (mount(2): kernels without the new mount API), on target. */
static int attach(int tree, int source, unsigned long rec, int target, const char *what, struct km_error *err) {
        char from[64], to[64];
        int r;

        if (tree >= 0)
                r = sys_move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        else {
                snprintf(from, sizeof(from), "/proc/self/fd/%d", source);
                snprintf(to, sizeof(to), "/proc/self/fd/%d", target);
                r = mount(from, to, NULL, MS_BIND | rec, NULL) < 0 ? -errno : 0;
        }
        return r < 0 ? error_set(err, r, "%s: attach", what) : 0;
}

/*
 * In the monitor: a mount namespace of its own with the bundle's rootfs and
 * bind-N attached (oci-runtime.h).  The sources are opened and cloned first,
 * while this namespace's mounts are still peers of the host's.
 */
static int bundle_prepare(const struct runtime_request *rq, struct km_error *err) {
        const struct container_spec *s = rq->spec;
        size_t n = s->n_mounts;
        _cleanup_free_ int *fds = calloc(2 * n + 1, sizeof(int)); /* n sources, then n trees */
        _cleanup_close_ int dir = -EBADF, target = -EBADF;
        int r = 0;

        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < 2 * n; i++)
                fds[i] = -EBADF;
        if (unshare(CLONE_NEWNS) < 0)
                return error_set(err, -errno, "runtime %s run %s: a mount namespace for the bundle", rq->runtime,
                                 rq->id);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const struct spec_mount *m = &s->mounts[i];

                if (!launch_is_bind(m))
                        continue;
                r = fds[i] = launch_open_source(m, rq->confine, err);
                if (r >= 0)
                        r = fds[n + i] = sys_open_tree(fds[i], "",
                                                       AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                                               (m->flags & MS_REC ? AT_RECURSIVE : 0));
                if (r == -ENOSYS)
                        r = 0; /* bound from the held source below */
                else if (r < 0 && err && !err->code)
                        error_set(err, r, "bind source %s", m->source);
        }
        if (r >= 0 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                r = error_set(err, -errno, "runtime %s run %s: make the bundle's namespace rslave", rq->runtime,
                              rq->id);
        if (r >= 0 && (dir = open(rq->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                r = error_set(err, -errno, "bundle %s", rq->bundle);
        if (r >= 0 && s->root_overlay) {
                _cleanup_(overlay_dirs_done) struct overlay_dirs d = OVERLAY_DIRS_INIT;
                _cleanup_close_ int mnt = -EBADF;

                r = overlay_dirs_open(s->root_path, dir, &d, err);
                if (r >= 0)
                        r = target = bundle_mount_point(dir, "rootfs", d.lower, err);
                if (r >= 0)
                        r = mnt = overlay_fsmount(&d, err);
                if (r == -ENOSYS) {
                        char to[64];
                        snprintf(to, sizeof(to), "/proc/self/fd/%d", target);
                        r = overlay_mount(&d, to, err);
                } else if (r >= 0)
                        r = attach(mnt, -EBADF, 0, target, "bundle: rootfs", err);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char name[32], what[4200];

                if (fds[i] < 0)
                        continue;
                snprintf(name, sizeof(name), "bind-%zu", i);
                snprintf(what, sizeof(what), "bind source %s", s->mounts[i].source);
                closep(&target);
                r = target = bundle_mount_point(dir, name, fds[i], err);
                if (r >= 0)
                        r = attach(fds[n + i], fds[i], s->mounts[i].flags & MS_REC, target, what, err);
        }
        for (size_t i = 0; i < 2 * n; i++)
                closep(&fds[i]);
        return r < 0 ? r : 0;
}

/* ---- run ------------------------------------------------------------------ */

/* fd moved to >= 3 (the monitor's 0-2 become /dev/null); -EBADF stays. */
static int move_high(int fd) {
        return fd >= 0 && fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

/*
 * The container's monitor, with every signal blocked: reports on REPORT (a
 * struct km_error, code 0 with maybe a warning once the runtime is forked),
 * then holds nothing of the caller's and runs init_run().
 */
static _Noreturn void monitor_main(const struct runtime_request *rq, int report) {
        struct km_error err = {}, warn = {};
        int stdio[3] = { rq->stdio[0], rq->stdio[1], rq->stdio[2] };
        int fds[2], log_rd = -EBADF, log_wr = -EBADF, log_dir, null, r;
        _cleanup_free_ const char **argv = NULL;
        pid_t child = -1;

        reset_signals(); /* they stay blocked: init_run() reads them from a signalfd */
        init_title("kubemount-mon");
        (void)setsid();
        if (rq->cgroup_root_fd >= 0 && rq->cgroup_name)
                (void)cgroup_enter_self(rq->cgroup_root_fd, rq->cgroup_name, false, &warn);
        r = bundle_prepared(rq->spec) ? bundle_prepare(rq, &err) : 0;
        /* Left by a runtime that was killed: "run" would say that ID exists. */
        if (r >= 0 && (r = runtime_delete(rq->runtime, rq->root, rq->id, &err)) < 0)
                error_wrap(&err, r, "stale container %s in %s", rq->id, rq->root);
        if (r >= 0 && rq->log_dir_fd >= 0) {
                if (pipe2(fds, O_CLOEXEC) < 0)
                        r = error_set(&err, -errno, "runtime %s run %s: log pipe", rq->runtime, rq->id);
                else {
                        log_rd = fds[0];
                        log_wr = stdio[1] = stdio[2] = fds[1];
                }
        }
        if (r >= 0 && !(argv = runtime_run_argv(rq->runtime, rq->root, rq->bundle, rq->id)))
                r = error_set(&err, -ENOMEM, "runtime %s run %s", rq->runtime, rq->id);
        if (r >= 0)
                r = spawn(argv, stdio, needs_v1_view(rq->runtime), &child, &err);
        if (r < 0) {
                err.code = r;
                (void)!write(report, &err, sizeof(err));
                _exit(125);
        }
        warn.code = 0;
        (void)!write(report, &warn, sizeof(warn));

        /* Nothing of the caller's stays open here: its clients must see it hang up, not us. */
        if (log_wr >= 0)
                close(log_wr);
        log_rd = move_high(log_rd);
        log_dir = move_high(rq->log_dir_fd);
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3 && null >= 0; i++)
                if (null != i)
                        (void)dup2(null, i);
        {
                int keep[2] = { log_rd, log_dir };
                close_all_but(keep, 2);
        }
        struct init_config ic = { child, log_rd, log_dir, -EBADF, false };
        init_run(&ic);
}

int runtime_run(const struct runtime_request *rq, pid_t *ret_pid, struct km_error *err) {
        _cleanup_close_ int report_rd = -EBADF, report_wr = -EBADF;
        struct km_error child_err = {};
        sigset_t all, old;
        int fds[2], r, status;
        ssize_t n;
        pid_t pid;

        r = check_request(rq->runtime, rq->root, rq->id, err);
        if (r < 0)
                return r;
        if (!rq->bundle || rq->bundle[0] != '/')
                return error_set_plain(err, -EINVAL, "runtime %s run %s: the bundle path must be absolute", rq->runtime,
                                       rq->id);
        if (bundle_prepared(rq->spec) && (r = bundle_config(rq, err)) < 0)
                return r;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "runtime %s run %s: pipe", rq->runtime, rq->id);
        report_rd = fds[0], report_wr = fds[1];

        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        pid = fork();
        if (pid == 0) {
                closep(&report_rd);
                monitor_main(rq, report_wr);
        }
        r = pid < 0 ? -errno : 0;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (r < 0)
                return error_set(err, r, "runtime %s run %s: fork the monitor", rq->runtime, rq->id);
        closep(&report_wr);
        while ((n = read(report_rd, &child_err, sizeof(child_err))) < 0 && errno == EINTR)
                ;
        if (n != sizeof(child_err))
                child_err = (struct km_error){ -EIO, "the container's monitor died while starting the runtime" };
        if (child_err.code < 0) {
                (void)wait_status(pid, &status);
                if (err)
                        *err = child_err;
                return child_err.code;
        }
        if (child_err.message[0])
                log_msg(KM_LOG_WARNING, "%s; the container stays in the caller's cgroup", child_err.message);
        *ret_pid = pid;
        return 0;
}

/* ---- exec ----------------------------------------------------------------- */

int runtime_exec(const struct runtime_exec_request *rq, pid_t *ret_pid, struct km_error *err) {
        _cleanup_free_ const char **argv = NULL;
        int r = check_request(rq->runtime, rq->root, rq->id, err);

        if (r < 0)
                return r;
        if (!rq->args || !rq->args[0] || !rq->args[0][0])
                return error_set_plain(err, -EINVAL, "runtime %s exec %s: no command", rq->runtime, rq->id);
        if (rq->cwd && rq->cwd[0] != '/')
                return error_set_plain(err, -EINVAL, "runtime %s exec %s: the directory must be absolute", rq->runtime,
                                       rq->id);
        argv = runtime_exec_argv(rq);
        if (!argv)
                return error_set(err, -ENOMEM, "runtime %s exec %s", rq->runtime, rq->id);
        return spawn(argv, rq->stdio, false, ret_pid, err);
}
