/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The embedded container launcher (see launch.h). */
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "caps.h"
#include "cgroup.h"
#include "fdpass.h"
#include "seccomp-notify.h"
#include "pid1.h"
#include "launch.h"
#include "mount-flags.h"
#include "newmount.h"
#include "overlay.h"
#include "resolve.h"
#include "syscalls.h"

/* ---- the command: in the container, as PID 1's child ----------------- */

/* The command's own error line on its stderr (what the user sees), then the exit code. */
static _Noreturn void print_error_and_exit(int code, const char *what, const char *why) {
        dprintf(STDERR_FILENO, "kubemount: %s: %s\n", what, why);
        _exit(code);
}

struct command {
        const struct container_spec *spec;
        const struct seccomp_program *seccomp;
        char *const *args, *const *env;
        const char *cwd;
        bool terminal;
        const int *stdio;
        int userns_fd;
};

static _Noreturn void exec_command(const struct command *c) {
        const struct container_spec *s = c->spec;
        struct caps_sets caps = { s->cap_bounding, s->cap_effective, s->cap_permitted, s->cap_inheritable,
                                  s->cap_ambient };
        struct km_error err = {};
        _cleanup_close_ int root = -EBADF, cwd = -EBADF;
        sigset_t none;
        extern char **environ;

        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Raising a hard limit needs CAP_SYS_RESOURCE in the host's user namespace: before we leave it. */
        for (size_t i = 0; i < s->n_rlimits; i++) {
                struct rlimit rl = { s->rlimits[i].soft, s->rlimits[i].hard };
                if (setrlimit(s->rlimits[i].resource, &rl) < 0)
                        print_error_and_exit(125, "rlimit", strerror(errno));
        }
        /* Last, after every mount: the namespaces made so far stay the host root's (userns.h). */
        if (s->id_count && (c->userns_fd < 0 || setns(c->userns_fd, CLONE_NEWUSER) < 0))
                print_error_and_exit(125, "user namespace", c->userns_fd < 0 ? "none given" : strerror(errno));
        if (stdio_install(c->stdio) < 0)
                _exit(125);
        if (setsid() < 0 || (c->terminal && ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0))
                print_error_and_exit(125, "terminal", strerror(errno));
        /* In the root, with magic links (/proc/self/fd/N) refused: a cwd can never reach outside. */
        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        cwd = root < 0 ? -errno : rootfs_openat2(root, c->cwd, O_PATH | O_DIRECTORY);
        if (cwd < 0 || fchdir(cwd) < 0)
                print_error_and_exit(125, c->cwd,
                                     cwd == -ELOOP || cwd == -EXDEV ? "refusing a link out of the container"
                                                                    : strerror(cwd < 0 ? -cwd : errno));
        if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setgroups(s->n_additional_gids, s->additional_gids) < 0 ||
            setresgid(s->gid, s->gid, s->gid) < 0 || setresuid(s->uid, s->uid, s->uid) < 0)
                print_error_and_exit(125, "user", strerror(errno));
        if (caps_apply(&caps, &err) < 0)
                print_error_and_exit(125, "capabilities", err.message);
        if (s->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                print_error_and_exit(125, "no_new_privs", strerror(errno));
        environ = (char **)c->env;
        if (c->seccomp && seccomp_filter_load(c->seccomp) < 0)
                print_error_and_exit(125, "seccomp", strerror(errno));
        execvp(c->args[0], c->args);
        print_error_and_exit(errno == ENOENT ? 127 : 126, c->args[0], strerror(errno));
}

/* The command's process, PID 1's child (or -1, errno set). */
static pid_t command_fork(const struct command *c) {
        pid_t pid = fork();

        if (pid == 0)
                exec_command(c);
        return pid;
}

/* ---- PID 1 ------------------------------------------------------------ */

struct pid1 {
        const struct launch_request *rq;
        struct trees *trees;
        int report;          /* write end: a struct km_error, code 0 once the command is started */
        int go;              /* read end: the parent is done with us */
        const char *warning; /* for the report: why we stay out of our cgroups (NULL: in them) */
};

static _Noreturn void pid1_main(struct pid1 *p) {
        const struct container_spec *s = p->rq->spec;
        struct km_error err = {};
        _cleanup_close_ int log_rd = -EBADF, log_wr = -EBADF;
        int stdio[3] = { p->rq->stdio[0], p->rq->stdio[1], p->rq->stdio[2] };
        _cleanup_close_ int listener = -EBADF;
        char c;
        pid_t child = -1;
        int r;

        sigset_t all;

        /* init_run() takes signals through a signalfd; the command gets the mask cleared. */
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        /* Only what we need: the agent's socket, lock and directories must not live on in us. */
        {
                size_t n = 0;
                int *keep = malloc(sizeof(int) * (p->trees->n + 13));

                if (!keep)
                        _exit(125);
                keep[n++] = p->report;
                keep[n++] = p->go;
                keep[n++] = p->trees->root;
                keep[n++] = p->trees->overlay.lower;
                keep[n++] = p->trees->overlay.upper;
                keep[n++] = p->trees->overlay.work;
                keep[n++] = p->trees->overlay.layer;
                keep[n++] = p->rq->log_dir_fd;
                keep[n++] = p->rq->userns_fd;
                for (int i = 0; i < 3; i++)
                        keep[n++] = p->rq->stdio[i];
                for (size_t i = 0; i < p->trees->n; i++)
                        keep[n++] = p->trees->binds[i];
                close_all_but(keep, n);
                free(keep);
        }
        init_title("kubemount-init");
        if (read(p->go, &c, 1) != 1)
                _exit(125);
        /* In our groups (launch_container_start): our cgroup is the namespace's root. */
        r = s->namespaces & CLONE_NEWCGROUP && unshare(CLONE_NEWCGROUP) < 0
                    ? error_set(&err, -errno, "cgroup namespace")
                    : rootfs_setup(s, p->trees, &err);
        if (r >= 0 && s->hostname && sethostname(s->hostname, strlen(s->hostname)) < 0)
                r = error_set(&err, -errno, "hostname %s", s->hostname);
        if (r >= 0 && p->rq->log_dir_fd >= 0) {
                int fds[2];
                if (pipe2(fds, O_CLOEXEC) < 0)
                        r = error_set(&err, -errno, "log pipe");
                else {
                        log_rd = fds[0];
                        log_wr = fds[1];
                        stdio[1] = stdio[2] = log_wr;
                }
        }
        /* After our own mounts: the command and whatever it forks inherit the broker's filter. */
        if (r >= 0 && p->rq->broker && (listener = seccomp_filter_load_listener(p->rq->broker)) < 0)
                r = error_set(&err, listener, "seccomp: the mount broker's filter");
        if (r >= 0 && listener >= 0 && dup3(listener, LAUNCH_BROKER_FD, O_CLOEXEC) < 0)
                r = error_set(&err, -errno, "seccomp: keep the broker's listener");
        struct command cmd = { s, p->rq->seccomp, s->args, s->env, s->cwd, s->terminal, stdio, p->rq->userns_fd };
        if (r >= 0 && !p->rq->hold && (child = command_fork(&cmd)) < 0)
                r = error_set(&err, -errno, "fork");
        if (r >= 0 && p->warning)
                snprintf(err.message, sizeof(err.message), "%s", p->warning);
        err.code = r < 0 ? r : 0;
        (void)fd_send(p->report, &err, sizeof(err), listener);
        if (r < 0)
                _exit(125);
        closep(&listener);
        /* Held: the command waits for its go (a caller's check), and its status goes back the same way. */
        bool stays = p->rq->stays;
        struct init_claim claim = { .stdio = { -EBADF, -EBADF, -EBADF } };
        if (p->rq->spare) {
                /* A spare: its command, environment and stdio come with its claim, before the go. */
                if ((r = init_wait_claim(p->report, &claim)) != 0)
                        _exit(r);
                cmd.args = claim.args;
                cmd.env = claim.env ? claim.env : s->env;
                cmd.stdio = claim.stdio;
                stays = claim.stays;
        }
        if (p->rq->hold) {
                if ((r = init_wait_go(p->report)) != 0)
                        _exit(r);
                if ((child = command_fork(&cmd)) < 0) {
                        int code = 125;
                        (void)send(p->report, &code, sizeof(code), MSG_NOSIGNAL);
                        _exit(125);
                }
        } else
                closep(&p->report);
        if (p->rq->userns_fd >= 0)
                close(p->rq->userns_fd);
        for (int i = 0; i < 3; i++) {
                if (p->rq->stdio[i] > 2)
                        close(p->rq->stdio[i]);
                closep(&claim.stdio[i]);
        }
        closep(&log_wr);
        struct init_config ic = { child, TAKE_FD(log_rd), p->rq->log_dir_fd, p->report, stays };
        init_run(&ic);
}

/* ---- in the caller -------------------------------------------------------- */

int launch_open_source(const struct spec_mount *m, const char *confine, struct km_error *err) {
        char component[256] = "";
        const char *why;
        int fd;

        if (!m->source || m->source[0] != '/')
                return error_set_plain(err, -EINVAL, "bind on %s: the source must be an absolute host path",
                                       m->destination);
        /* Walked as mount targets are (THREATS 31): a pod's symlink cannot send a bind of its volume to /etc. */
        fd = resolve_confined(m->source, confine, &why, component, sizeof(component));
        if (fd < 0 && why)
                return error_set_plain(err, fd, "bind source %s: '%s' %s %s", m->source, component, why, confine);
        if (fd == -ENOENT)
                return error_set_plain(err, fd, "bind source %s does not exist", m->source);
        return fd < 0 ? error_set(err, fd, "bind source %s", m->source) : fd;
}

/*
 * The image's tree under a writable layer of its own, as a detached
 * overlay in t->root; or, where the kernel takes no detached idmapped layer
 * (probed by the first refusal), its layers in t->overlay for PID 1 to
 * attach in its own namespace (t->root stays -EBADF).
 */
static int clone_overlay_root(const struct launch_request *rq, struct trees *t, struct km_error *err) {
        const struct container_spec *s = rq->spec;
        _cleanup_(overlay_dirs_done) struct overlay_dirs d = OVERLAY_DIRS_INIT;
        bool idmapped = false;
        int r;

        if (rq->state_dir_fd < 0)
                return error_set_plain(err, -EINVAL,
                                       "rootfs %s: a writable layer needs the container's state directory",
                                       s->root_path);
        r = overlay_dirs_open(s->root_path, rq->state_dir_fd, &d, err);
        if (r < 0)
                return r;
        if (rq->userns_fd >= 0 && (r = overlay_dirs_idmap(&d, rq->userns_fd)) < 0)
                log_msg(KM_LOG_WARNING,
                        "rootfs %s: cannot idmap it for the user namespace (%s); the image's files show as owned by "
                        "nobody",
                        s->root_path, strerror(-r));
        else
                idmapped = rq->userns_fd >= 0;
        if (!idmapped || feature_available(FEATURE_DETACHED_LAYERS)) {
                t->root = overlay_fsmount(&d, err);
                if (t->root == -EINVAL && idmapped) {
                        log_msg(KM_LOG_DEBUG, "rootfs %s: %s; overlay layers are attached first from now on",
                                s->root_path, err ? err->message : "refused");
                        feature_refused(FEATURE_DETACHED_LAYERS);
                }
        }
        if (idmapped && !feature_available(FEATURE_DETACHED_LAYERS)) {
                if ((r = overlay_dirs_detach_layer(&d)) < 0)
                        return error_set(err, r, "rootfs %s: clone its writable layer", s->root_path);
                t->overlay = d;
                d = (struct overlay_dirs)OVERLAY_DIRS_INIT;
                t->root = -EBADF;
                if (err)
                        *err = (struct km_error){};
                return 0;
        }
        if (t->root == -ENOSYS)
                return error_set_plain(err, -ENOSYS, "rootfs %s: a writable layer needs the new mount API (Linux 5.2)",
                                       s->root_path);
        return t->root < 0 ? t->root : 0;
}

/* The root (see clone_overlay_root, or the directory as it is) and the binds. */
static int clone_trees(const struct launch_request *rq, struct trees *t, struct km_error *err) {
        const struct container_spec *s = rq->spec;
        int r;

        t->n = s->n_mounts;
        t->binds = malloc(sizeof(int) * (t->n ? t->n : 1));
        if (!t->binds)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                t->binds[i] = -EBADF;
        if (s->root_overlay) {
                if ((r = clone_overlay_root(rq, t, err)) < 0)
                        return r;
        } else if (rq->pinned_fds && rq->pinned_fds[0] >= 0) {
                t->root = sys_open_tree(rq->pinned_fds[0], "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (t->root < 0)
                        return error_set(err, t->root, "rootfs %s", s->root_path);
        } else {
                t->root = sys_open_tree(AT_FDCWD, s->root_path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (t->root < 0)
                        return error_set(err, t->root, "rootfs %s", s->root_path);
        }
        for (size_t i = 0; i < t->n; i++) {
                const struct spec_mount *m = &s->mounts[i];
                _cleanup_close_ int own = -EBADF;
                int fd = rq->pinned_fds ? rq->pinned_fds[1 + i] : -EBADF;

                if (!launch_is_bind(m))
                        continue;
                if (fd < 0 && (fd = own = launch_open_source(m, rq->confine, err)) < 0)
                        return fd;
                t->binds[i] = sys_open_tree(fd, "",
                                            AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                                    (m->flags & MS_REC ? AT_RECURSIVE : 0));
                if (t->binds[i] < 0)
                        return error_set(err, t->binds[i], "bind source %s", m->source);
        }
        return 0;
}

/* The cgroup namespace PID 1 makes itself once in its cgroups; the user namespace the command enters. */
static int ns_flags(const struct container_spec *s) {
        return (s->namespaces & (CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET)) | CLONE_NEWNS |
               CLONE_NEWPID;
}

int launch_container_start(const struct launch_request *rq, struct launch_pending *ret, struct km_error *err) {
        const struct container_spec *s = rq->spec;
        _cleanup_(trees_done) struct trees t = { .root = -EBADF,
                                                 .overlay = OVERLAY_DIRS_INIT,
                                                 .keep_root = rq->spare && !rq->spec->root_overlay };
        _cleanup_close_ int report_rd = -EBADF, report_wr = -EBADF, go_rd = -EBADF, go_wr = -EBADF;
        _cleanup_close_ int netns = -EBADF, cgroup = -EBADF;
        bool entered = false;
        int fds[2], r;
        pid_t pid;

        *ret = (struct launch_pending){ .pid = -1, .report_fd = -EBADF };
        if ((s->id_count > 0) != (rq->userns_fd >= 0))
                return error_set_plain(err, -EINVAL, "launch: the broker's filter or user namespace is missing");
        /* Here, not in the container: its command drops capabilities through libcap. */
        if ((r = caps_load(err)) < 0)
                return r;
        if (rq->host_mntns_fd >= 0 && setns(rq->host_mntns_fd, CLONE_NEWNS) < 0)
                return error_set(err, -errno, "enter the host mount namespace");
        r = clone_trees(rq, &t, err);
        if (r < 0)
                return r;
        if (s->netns_path && (netns = open(s->netns_path, O_RDONLY | O_CLOEXEC)) < 0)
                return error_set(err, -errno, "network namespace %s", s->netns_path);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return error_set(err, -errno, "socketpair");
        report_rd = fds[0], report_wr = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "pipe");
        go_rd = fds[0], go_wr = fds[1];

        /* Made in its v2 group (cgroup.h); it enters the v1 ones itself, first thing. */
        if (rq->cgroup_root_fd >= 0 && rq->cgroup_name)
                cgroup = cgroup_open_v2(rq->cgroup_root_fd, rq->cgroup_name);
        if (rq->template_mntns_fd >= 0 && setns(rq->template_mntns_fd, CLONE_NEWNS) < 0)
                return error_set(err, -errno, "enter the template mount namespace");
        pid = cgroup_fork_into(cgroup, (uint64_t)ns_flags(s), &entered);
        if (pid == 0) {
                struct pid1 p = { rq, &t, report_wr, go_rd, NULL };
                struct km_error cg = {};

                /*
                 * First: until exec the command is a copy of the agent's memory (other containers' configs),
                 * and the container must not read it, nor our fds or /proc/1/exe.  The command inherits it.
                 * The agent's environment it would still see through /proc/1/environ: gone too, after our
                 * move into our groups (their parent may come from $KUBEMOUNT_CGROUP_PARENT).
                 */
                (void)prctl(PR_SET_DUMPABLE, 0);
                if (rq->cgroup_root_fd >= 0 && rq->cgroup_name &&
                    cgroup_enter_self(rq->cgroup_root_fd, rq->cgroup_name, entered, &cg) < 0)
                        p.warning = cg.message;
                init_scrub_environ();
                if (netns >= 0 && setns(netns, CLONE_NEWNET) < 0)
                        _exit(125);
                pid1_main(&p);
        }
        r = pid < 0 ? (int)pid : 0;
        /* Back home before anything else; a caller that cannot come back must not go on. */
        if (rq->host_mntns_fd >= 0 && setns(rq->host_mntns_fd, CLONE_NEWNS) < 0)
                abort();
        if (r < 0)
                return error_set(err, r, "clone the container's PID 1");
        closep(&report_wr);
        closep(&go_rd);
        /* Told to go even when the write fails: its report then says it died (a reader of the pipe is gone). */
        (void)!write(go_wr, "g", 1);
        *ret = (struct launch_pending){
                .pid = pid, .report_fd = TAKE_FD(report_rd), .broker = rq->broker != NULL, .hold = rq->hold
        };
        return 0;
}

int launch_container_finish(struct launch_pending *p, int *ret_listener, int *ret_command_fd, struct km_error *err) {
        if (p->hold != !!ret_command_fd)
                return error_set_plain(err, -EINVAL, "launch: a held command needs its fd, and only it");
        _cleanup_close_ int listener = -EBADF, report = TAKE_FD(p->report_fd);
        struct km_error child_err = {};
        int status;

        if (fd_recv(report, &child_err, sizeof(child_err), &listener) != sizeof(child_err))
                child_err = (struct km_error){ -EIO, "the container's PID 1 died while setting up" };
        else if (child_err.code == 0 && p->broker && listener < 0)
                child_err = (struct km_error){ -EIO, "the container's PID 1 sent no broker listener" };
        else if (child_err.code == 0 && child_err.message[0])
                log_msg(KM_LOG_WARNING, "%s; the container stays in the caller's cgroup", child_err.message);
        if (child_err.code < 0) {
                while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
                        ;
                if (err)
                        *err = child_err;
                return child_err.code;
        }
        if (ret_listener)
                *ret_listener = TAKE_FD(listener);
        if (ret_command_fd)
                *ret_command_fd = TAKE_FD(report);
        return 0;
}

int launch_claim(int command_fd, char *const *args, char *const *env, bool stays, const int stdio[3]) {
        struct init_claim_header h = { 0, 0, stays };
        _cleanup_free_ char *buf = NULL;
        size_t size = sizeof(h), at;

        for (size_t i = 0; args && args[i]; i++, h.argc++)
                size += strlen(args[i]) + 1;
        for (size_t i = 0; env && env[i]; i++, h.envc++)
                size += strlen(env[i]) + 1;
        if (h.argc == 0 || size > INIT_CLAIM_MAX)
                return h.argc == 0 ? -EINVAL : -E2BIG;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, &h, sizeof(h));
        at = sizeof(h);
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; (k ? env : args) && (k ? env : args)[i]; i++) {
                        size_t n = strlen((k ? env : args)[i]) + 1;
                        memcpy(buf + at, (k ? env : args)[i], n);
                        at += n;
                }
        return fds_send(command_fd, buf, size, stdio, 3);
}

int launch_container(const struct launch_request *rq, pid_t *ret_pid, int *ret_listener, struct km_error *err) {
        struct launch_pending p;
        int r;

        if (!!rq->broker != !!ret_listener)
                return error_set_plain(err, -EINVAL, "launch: the broker's filter or its listener is missing");
        if (rq->hold)
                return error_set_plain(err, -EINVAL, "launch: a held command needs launch_container_start");
        r = launch_container_start(rq, &p, err);
        if (r >= 0)
                r = launch_container_finish(&p, ret_listener, NULL, err);
        if (r >= 0)
                *ret_pid = p.pid;
        return r;
}

/* ---- the template ------------------------------------------------------ */

/* In a new mount namespace: a tmpfs with STAGE becomes the root, the copy of the host's table goes. */
static int make_small_root(struct km_error *err) {
        _cleanup_close_ int fs = -EBADF, mnt = -EBADF;
        int r;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return error_set(err, -errno, "template: make / private");
        fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return error_set(err, fs, "template: tmpfs");
        if ((r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k")) < 0 ||
            (r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700")) < 0 ||
            (r = sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL)) < 0)
                return error_set(err, r, "template: tmpfs");
        mnt = sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (mnt < 0)
                return error_set(err, mnt, "template: tmpfs");
        if (mkdirat(mnt, &STAGE[1], 0700) < 0 || mkdirat(mnt, &LOWER_AT[1], 0700) < 0 ||
            mkdirat(mnt, &LAYER_AT[1], 0700) < 0)
                return error_set(err, -errno, "template: mkdir %s, %s, %s", STAGE, LOWER_AT, LAYER_AT);
        r = sys_move_mount(mnt, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "template: attach tmpfs");
        return rootfs_pivot_into(mnt, err);
}

int launch_template_create(struct km_error *err) {
        struct km_error child_err = {};
        char path[64];
        int fds[2], fd, status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "pipe");
        pid = fork();
        if (pid == 0) {
                close(fds[0]);
                child_err.code = unshare(CLONE_NEWNS) < 0 ? error_set(&child_err, -errno, "template: unshare")
                                                          : make_small_root(&child_err);
                (void)!write(fds[1], &child_err, sizeof(child_err));
                if (child_err.code == 0)
                        pause(); /* until the parent holds the namespace */
                _exit(0);
        }
        close(fds[1]);
        if (pid < 0) {
                close(fds[0]);
                return error_set(err, -errno, "fork");
        }
        if (read(fds[0], &child_err, sizeof(child_err)) != sizeof(child_err))
                child_err = (struct km_error){ -EIO, "template: the child died" };
        close(fds[0]);
        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
        fd = child_err.code < 0 ? child_err.code : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && child_err.code == 0)
                child_err = (struct km_error){ -errno, "template: open its namespace" };
        (void)kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (fd < 0 && err)
                *err = child_err;
        return fd;
}

/* ---- exec --------------------------------------------------------------- */

int launch_exec(const struct exec_request *rq, pid_t *ret_pid, int *ret_listener, struct km_error *err) {
        static const struct {
                const char *name;
                int type;
        } order[] = { { "cgroup", CLONE_NEWCGROUP }, { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
                      { "net", CLONE_NEWNET },       { "pid", CLONE_NEWPID }, { "mnt", CLONE_NEWNS } };
        int ns[ELEMENTSOF(order)], sv[2] = { -EBADF, -EBADF };
        _cleanup_close_ int listener = -EBADF, cgroup = -EBADF;
        bool entered = false;
        pid_t pid;

        if (!!rq->broker != !!ret_listener || (rq->spec->id_count > 0) != (rq->userns_fd >= 0))
                return error_set_plain(err, -EINVAL, "exec: the broker's filter or user namespace is missing");
        if (caps_load(err) < 0) /* here, not in the container (caps_apply()) */
                return -EOPNOTSUPP;
        if (rq->broker && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return error_set(err, -errno, "socketpair");
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                char path[64];

                snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)rq->pid1, order[i].name);
                ns[i] = open(path, O_RDONLY | O_CLOEXEC);
                if (ns[i] < 0) {
                        int r = -errno;
                        while (i-- > 0)
                                close(ns[i]);
                        closep(&sv[0]);
                        closep(&sv[1]);
                        return error_set(err, r, "container namespaces %s", path);
                }
        }
        /* In the container's group from the start where it can (cgroup.h): the agent waits for no move. */
        cgroup = rq->cgroup_root_fd >= 0 && rq->cgroup_name ? cgroup_open_v2(rq->cgroup_root_fd, rq->cgroup_name)
                                                            : -EBADF;
        pid = cgroup_fork_into(cgroup, 0, &entered);
        if (pid == 0) {
                /*
                 * First: this helper and its child hold a copy of the agent's memory until the child's execve;
                 * once the child has dropped to the container's capabilities a process of the container could
                 * read it through /proc/PID/mem if it were dumpable (THREATS 17).  The child inherits it,
                 * and the agent's environment strings, which /proc/PID/environ would show, are zeroed.
                 */
                struct km_error e = {};

                (void)prctl(PR_SET_DUMPABLE, 0);
                /* Before the scrub: the group's parent may come from the environment ($KUBEMOUNT_CGROUP_PARENT). */
                if (rq->cgroup_root_fd >= 0 && rq->cgroup_name)
                        (void)cgroup_enter_self(rq->cgroup_root_fd, rq->cgroup_name, entered, &e);
                init_scrub_environ();

                struct command cmd = { rq->spec,
                                       rq->seccomp,
                                       rq->args,
                                       rq->env ? rq->env : rq->spec->env,
                                       rq->cwd ? rq->cwd : rq->spec->cwd,
                                       rq->terminal,
                                       rq->stdio,
                                       rq->userns_fd };
                int status, l;
                pid_t child;

                int keep[ELEMENTSOF(order) + 5] = { rq->stdio[0], rq->stdio[1], rq->stdio[2], rq->userns_fd, sv[1] };

                memcpy(keep + 5, ns, sizeof(ns));
                close_all_but(keep, ELEMENTSOF(keep));
                for (size_t i = 0; i < ELEMENTSOF(order); i++)
                        if (setns(ns[i], order[i].type) < 0)
                                print_error_and_exit(125, "enter the container", strerror(errno));
                /* The command is this helper's child: it inherits the broker's filter. */
                if (rq->broker) {
                        l = seccomp_filter_load_listener(rq->broker);
                        if (l < 0 || fd_send(sv[1], "l", 1, l) < 0)
                                print_error_and_exit(125, "seccomp: the mount broker's filter",
                                                     strerror(l < 0 ? -l : errno));
                        close(l);
                        close(sv[1]);
                }
                child = fork();
                if (child == 0)
                        exec_command(&cmd);
                if (child < 0)
                        print_error_and_exit(125, "fork", strerror(errno));
                while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                        ;
                _exit(exit_code_from_status(status, NULL));
        }
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                close(ns[i]);
        if (pid < 0) {
                closep(&sv[0]);
                closep(&sv[1]);
                return error_set(err, -errno, "fork");
        }
        if (rq->broker) {
                char c;

                *ret_listener = -EBADF;
                closep(&sv[1]);
                /* A helper that failed before sending exits 125 with its message on the command's stderr. */
                if (fd_recv(sv[0], &c, 1, &listener) != 1 || listener < 0)
                        listener = -EBADF;
                closep(&sv[0]);
                if (listener >= 0)
                        *ret_listener = TAKE_FD(listener);
        }
        *ret_pid = pid;
        return 0;
}
