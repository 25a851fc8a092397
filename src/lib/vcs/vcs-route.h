/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What routing (src/lib/route) needs of the VCS client beyond the public calls. */
#pragma once

#include "util.h"

/*
 * As km_vcs_set_image(), but only from the store: a mount never waits on a
 * registry (`kubemount vcs pull` fetches the mapped images beforehand).
 * -ENOENT with err naming the image and the command that fetches it.
 */
int vcs_set_image_stored(const struct km_host *h, struct km_vcs *v, const char *ref, const struct km_image_options *o,
                         struct km_error *err);
/* The manifest digest of the image set by km_vcs_set_image() or vcs_set_image_stored(), or NULL. */
const char *vcs_image_digest(const struct km_vcs *v);
/* The environment of v's command (what its config.json says) and extra ("K=V") after it: km_strv_free(). */
char **vcs_exec_env(const struct km_vcs *v, const char *extra);
/*
 * The mount the container serves (its state.json says "mount": {"target",
 * "type", "image", "digest"}): ps shows it, gc ends the container once
 * target is no longer mounted, rmi keeps its image.
 */
int vcs_set_serves(struct km_vcs *v, const char *target, const char *fstype);
/* Whether an agent answers at the state dir's socket (none is started): 1 yes, 0 no. */
int vcs_agent_alive(struct km_agent *a);
/*
 * Whether the state dir (NULL: as km_agent_new() chooses it) holds a
 * container NAME, looked at in the calling thread's namespace, with no
 * agent and no JSON: 1 yes, 0 no, or -errno.
 */
int vcs_container_exists(const char *state_dir, const char *name, struct km_error *err);
/*
 * The lock file NAME.lock of the state dir (as above), made if missing,
 * flock()ed with op (LOCK_SH, LOCK_EX, | LOCK_NB): its fd, or -errno
 * (-ENOENT: no state dir yet, -EWOULDBLOCK: held).
 */
int vcs_state_lock(const char *state_dir, const char *name, int op);
/*
 * A detached container of v whose command is held->argv (env: held->env,
 * NULL for v's), started only once held->gate passed, after its PID 1 is
 * set up, while its name holds its targets (agent-run.h); its stdio fds.
 * Returns when the command ends (*exit_status), with held->stays the
 * container staying for what it left running, else once it is gone; v's own
 * command is what config.json and ps show.  A failed gate's error is
 * returned, and its container ends (remove it).
 */
struct vcs_held {
        char *const *argv, *const *env;
        bool stays; /* the container stays after the command (a daemon's), else it is gone with it */
        int (*gate)(void *userdata, struct km_error *err);
        void *userdata;
};
int vcs_run_held(struct km_agent *a, const struct km_vcs *v, const struct vcs_held *held, const int fds[3],
                 int *exit_status, struct km_error *err);
/* km_vcs_stop(), and the container removed once it has exited: one call. */
int vcs_stop_and_remove(struct km_agent *a, const char *name, int timeout_ms, struct km_error *err);
