/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The embedded container launcher.  A container is made by one clone from a
 * small template mount namespace (one tmpfs), so its cost does not grow with
 * the host's mount table: the root filesystem and the binds are cloned in the
 * host namespace first (open_tree), carried over as fds, and attached in the
 * new namespace; /proc, /dev and /sys are fresh mounts.  PID 1 is
 * kubemount's init (pid1.h); the command runs as its child.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "seccomp-filter.h"
#include "launch-rootfs.h"
#include "spec.h"

struct launch_request {
        const struct container_spec *spec;
        const struct seccomp_program *seccomp; /* NULL: no filter */
        int host_mntns_fd;     /* the namespace of the rootfs and bind sources; -EBADF: the current one */
        int template_mntns_fd; /* the small namespace to clone; -EBADF: made on the spot (slow) */
        int cgroup_root_fd;    /* with cgroup_name: the container's own cgroups; -EBADF: the caller's */
        const char *cgroup_name;
        int stdio[3];        /* the command's stdin, stdout, stderr */
        int log_dir_fd;      /* >= 0 (detached): stdout and stderr go through PID 1 into LOG_DIR/log, bounded */
        int state_dir_fd;    /* the container's own directory: its writable layer goes there (spec->root_overlay) */
        const char *confine; /* the kubelet dir: bind sources below it may not pass a symlink or ".." */
        int userns_fd;       /* spec->id_count: the user namespace (userns.h) the command enters; else -EBADF */
        const struct seccomp_program *broker; /* spec->broker: the broker's filter (seccomp-notify.h), else NULL */
        bool hold;                            /* the command is held until a go (launch_container_finish) */
        bool stays; /* with hold: PID 1 stays after the command, for what it left running (pid1.h) */
        /*
         * With hold: a spare, started ahead of its command.  Its command (args,
         * env), stays and stdio come later on the command fd (launch_claim()),
         * then its go; spec->args and stdio are placeholders until then.
         */
        bool spare;
        /*
         * NULL, or a spare's (start_pins.fds, start-pins.h): the root at [0]
         * (-EBADF: by its path) and mounts[i]'s source at [1 + i], opened
         * ahead; the start clones these, not what the paths lead to now.
         */
        const int *pinned_fds;
};

/*
 * PID 1 keeps a copy of the broker's listener at this fd number: an agent
 * that restarts takes it back with pidfd_getfd(2) (Linux 5.6), so the
 * container's next mount(2) waits for it instead of failing.
 */
#define LAUNCH_BROKER_FD 100

/*
 * Starts the container; returns once PID 1 has set it up and started the
 * command (whose exec failure shows as exit status 127 or 126, as with a
 * runtime).  ret_pid: PID 1 as seen by the caller, a child of the caller.
 * ret_listener (with rq->broker): the listener fd of the broker's
 * notifications from PID 1 and every process it forks.  Must be called
 * from a single-threaded process (it switches namespaces).
 */
int launch_container(const struct launch_request *rq, pid_t *ret_pid, int *ret_listener, struct km_error *err);

/*
 * The same in two steps, so that the caller waits for none of PID 1's work:
 * start returns once PID 1 is cloned (into its cgroup) and told to go, and
 * finish takes its report, which comes on report_fd (readable: it does not
 * block then).  finish reaps PID 1 when it failed.  Between the two, rq may
 * go: PID 1 has its own copy.
 */
struct launch_pending {
        pid_t pid;     /* PID 1, our child */
        int report_fd; /* readable once PID 1 reports (or died) */
        bool broker;   /* a broker listener comes with the report */
        bool hold;
};
int launch_container_start(const struct launch_request *rq, struct launch_pending *ret, struct km_error *err);
/*
 * With rq->hold, *ret_command_fd gets PID 1's end of the report: the
 * command starts when a byte is written there (closing it ends PID 1 with
 * 125), and its exit code comes back on it as an int; PID 1 then exits,
 * or with rq->stays stays, for what the command left running, until it is
 * stopped (pid1.h).
 */
int launch_container_finish(struct launch_pending *p, int *ret_listener, int *ret_command_fd, struct km_error *err);

/*
 * A spare's command (rq->spare), sent on its command fd before the go:
 * args (at least one), env (NULL: the spec's), whether PID 1 stays, and
 * the command's stdio.  0, -E2BIG past INIT_CLAIM_MAX (pid1.h), or -errno.
 */
int launch_claim(int command_fd, char *const *args, char *const *env, bool stays, const int stdio[3]);

/*
 * A bind source of the spec (m->source, absolute), opened (O_PATH) as mount
 * targets are (resolve_confined(): below confine no symlink, no ".." and so
 * no magic link may be passed; above it symlinks are followed as the host
 * has them), or a negative errno with a message naming the source and the
 * component.  Clone it with open_tree(AT_EMPTY_PATH).
 */
int launch_open_source(const struct spec_mount *m, const char *confine, struct km_error *err);

/* Makes the template namespace: returns an fd of it.  Costs one copy of the current mount table, once. */
int launch_template_create(struct km_error *err);

struct exec_request {
        const struct container_spec *spec; /* the container's: user, capabilities, rlimits, ... */
        const struct seccomp_program *seccomp;
        pid_t pid1;        /* the container's PID 1 */
        char *const *args; /* the command */
        char *const *env;  /* NULL: the container's */
        const char *cwd;   /* NULL: the container's */
        bool terminal;     /* stdin is a terminal to make the controlling one */
        int cgroup_root_fd;
        const char *cgroup_name;
        int stdio[3];
        int userns_fd; /* as in struct launch_request */
        const struct seccomp_program *broker;
};

/* Runs a command in a running container's namespaces; returns its pid (a child of the caller); ret_listener as above.
 */
int launch_exec(const struct exec_request *rq, pid_t *ret_pid, int *ret_listener, struct km_error *err);
