/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Other OCI runtimes (crun, runc, or any executable with their command
 * line) as the launcher of a VCS container, instead of the embedded one
 * (launch.h).  A container's state directory holds config.json with an
 * absolute root.path, so it is a bundle as it is.
 *
 * A container is run in the foreground of the runtime (`RUNTIME --root ROOT
 * run --bundle BUNDLE ID`) under a monitor process of ours, the container's
 * stand-in for the caller (like conmon): it sits in the container's cgroups,
 * copies a detached container's output into the bounded log (init_run),
 * forwards signals to the runtime, which forwards them to the container, and
 * exits with the runtime's status.  crun and runc exit with the container's
 * status, 128 + N when it was killed by signal N, and 1 for their own errors
 * (a message on stderr), a command that cannot be executed included (not
 * 127/126 as with the embedded launcher); 127/126 mean the runtime itself
 * could not be executed.
 *
 * On a hybrid cgroup host (v1 hierarchies, cgroup2 at /sys/fs/cgroup/unified)
 * crun refuses to create containers; `crun run` is then given a mount
 * namespace of its own where /sys/fs/cgroup is a slave and unified is
 * unmounted, the rest shared with the caller's (rshared binds propagate).
 *
 * Unlike with the embedded launcher, the command is the container's PID 1:
 * a signal it has no handler for (SIGTERM) does not end it.  Stop with
 * runtime_kill(SIGKILL), and after the monitor is gone call runtime_delete(),
 * which is a stat when the runtime cleaned up after itself.
 *
 * The bundle's root filesystem and bind sources are prepared as the
 * embedded launcher prepares them (launch.h): the monitor gets a mount
 * namespace of its own, rslave (host mounts reach it, nothing goes back), in
 * which an image's root gets its writable layer at BUNDLE/rootfs (overlay.h)
 * and every bind source, opened confined below the kubelet dir and cloned
 * (so a clone of a shared source stays its peer), is attached at
 * BUNDLE/bind-N; config.json then names those, and the runtime, started in
 * that namespace, finds nothing a pod could swap.  Nothing of it is mounted
 * in the host, and all of it goes with the monitor and the container.
 *
 * Every call runs the runtime in the caller's mount namespace (but see
 * above) and needs a single-threaded caller (fork).  The runtime gets stdio
 * on 0-2 and no other fd of the caller, default signal dispositions and an
 * empty signal mask, and a session of its own.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "spec.h"
#include "util.h"

/*
 * "crun", "runc" or any other name without '/' is searched in $PATH, then
 * in the usual system directories (/usr/sbin is not in every PATH); a name
 * with '/' is a path to an executable file.  "embedded" is not a runtime.
 * Returns a malloc'ed absolute path, or NULL with err set ("runtime crun:
 * not found in PATH or ...").
 */
char *runtime_resolve(const char *name, struct km_error *err);
/* The same with the directory list given (':'-separated; relative entries are skipped). */
char *runtime_resolve_in(const char *name, const char *search, struct km_error *err);

/* A container ID every runtime takes and that names a directory: [A-Za-z0-9][A-Za-z0-9_.+-]{0,199}. */
bool runtime_id_is_valid(const char *id);

struct runtime_request {
        const char *runtime; /* absolute path (runtime_resolve) */
        const char *root;    /* the runtime's --root state directory (absolute), e.g. STATE_DIR/runtime */
        const char *bundle;  /* absolute path of the bundle directory */
        const char *id;
        int stdio[3];       /* the container's stdin, stdout, stderr */
        int log_dir_fd;     /* >= 0 (detached): stdout and stderr go through the monitor into LOG_DIR/log */
        int cgroup_root_fd; /* with cgroup_name: the monitor's and the runtime's cgroups; -EBADF: the caller's */
        const char *cgroup_name;
        const struct container_spec *spec; /* the bundle's config.json, parsed; NULL: used as it is */
        const char *confine;               /* bind sources below it: no symlink, no ".." (launch_open_source) */
        /*
         * The container itself goes where config.json's linux.cgroupsPath
         * says; without one, runc makes ID below its own cgroup (so below
         * cgroup_name) and crun makes /ID at the root of every hierarchy.
         */
};

/*
 * Starts the monitor, which moves into cgroup_name, deletes a container ID
 * left in ROOT by a crash (runtime_delete), and forks the runtime; returns
 * once the runtime is forked (not once the container runs: a runtime's
 * failure shows as the monitor's exit status, its message on the
 * container's stderr or in the log).  ret_pid: the monitor, a child of the
 * caller, which exits with the runtime's status.  A cgroup that cannot be
 * entered is a warning (log_msg), as with launch_container().
 */
int runtime_run(const struct runtime_request *rq, pid_t *ret_pid, struct km_error *err);

struct runtime_exec_request {
        const char *runtime, *root, *id;
        char *const *args; /* the command, NULL-terminated, non-empty */
        char *const *env;  /* NULL: the container's; else the whole environment ("K=V"): crun's --env
                              replaces the container's, runc's adds to it, so pass all of it */
        const char *cwd;   /* NULL: the container's */
        bool tty;          /* the runtime makes a pseudo-terminal and copies it to and from stdio */
        int stdio[3];
};

/*
 * `RUNTIME --root ROOT exec [--tty] [--cwd DIR] [--env K=V]... ID CMD ARGS...`
 * forked with stdio; returns its pid (a child of the caller), which exits
 * with the command's status as above, but 255 (crun and runc) when the
 * command cannot be executed.  With tty, runc wants a terminal among stdio.
 */
int runtime_exec(const struct runtime_exec_request *rq, pid_t *ret_pid, struct km_error *err);

/*
 * `RUNTIME --root ROOT kill ID SIG`, waited for.  -ESRCH when the runtime
 * does not know ID (any more).
 */
int runtime_kill(const char *runtime, const char *root, const char *id, int sig, struct km_error *err);

/*
 * `RUNTIME --root ROOT delete --force ID`, waited for: a running container
 * is killed first.  Nothing is run when ROOT/ID does not exist, and a
 * failure is no error once ROOT/ID is gone.
 */
int runtime_delete(const char *runtime, const char *root, const char *id, struct km_error *err);

/*
 * The argument vectors (exposed for the unit tests): pointers into the
 * arguments, a NULL-terminated array to free() (only the array).
 */
const char **runtime_run_argv(const char *runtime, const char *root, const char *bundle, const char *id);
const char **runtime_exec_argv(const struct runtime_exec_request *rq);
