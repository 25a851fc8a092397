/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's state and its container table.  The bottom of the agent: its
 * loop (agent.c), its children (agent-workers.c) and its operations
 * (agent-ops.c, agent-gc.c) call it, it calls none of them.  It owns the
 * epoll set the loop waits on, so what it watches the loop sees.
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "launch.h"
#include "mount-identity.h"
#include "seccomp-filter.h"
#include "spec.h"
#include "start-pins.h"

/* The user namespaces the agent keeps, one per id range in use lately (agent-idmap.h). */
#define AGENT_USERNS_CACHE 16

/* What an epoll event points at: the loop dispatches on its kind. */
enum watch_kind {
        WATCH_LISTEN,
        WATCH_CONN,
        WATCH_PID1,
        WATCH_TIMER,
        WATCH_JOB,
        WATCH_WORKER,
        WATCH_WORKER_TIMER,
        WATCH_BROKER,
        WATCH_BROKER_SERVER,
        WATCH_BROKER_SERVER_TIMER,
        WATCH_START,
        WATCH_COMMAND,
        WATCH_SIGNAL
};
struct watch {
        enum watch_kind kind;
};

/* A listener of the mount broker's notifications (agent-broker.h): one per PID 1 and per exec. */
struct ctr;
struct broker_listener {
        struct watch w; /* first */
        struct broker_listener *next;
        struct ctr *ctr;
        int fd; /* -EBADF once hung up or forgotten */
};

struct ctr {
        struct watch w; /* first: the PID 1's pidfd */
        struct watch timer_w;
        struct ctr *next;
        char name[130];
        char cgroup[140];
        pid_t pid;
        int pidfd;     /* -EBADF once exited */
        bool ours;     /* our child: its exit status is known */
        bool detached; /* else the run's client waits, and its hang-up kills it */
        bool stopping, timed_out, remove_on_exit;
        bool named;     /* its run gave its name (else one made up, never asked for again) */
        bool answered;  /* its waiters answered and its record removed at its command's exit, before PID 1's */
        bool forgotten; /* on agent.forgotten: freed after the loop's batch of events */
        int timer;
        int execs;           /* exec jobs running in it (a routed mount's own is one) */
        bool mount_pending;  /* routed, its mount not begun: an older client's exec, or a held run's go, to come */
        uint64_t started_ms; /* monotonic_ms() when this agent started it */
        int dir_fd;
        char *runtime; /* crun, runc or another OCI runtime (absolute path); NULL: embedded */
        struct container_spec *spec;
        struct seccomp_program seccomp;
        bool has_seccomp;
        json_t *state;
        int waiters[8]; /* clients answered {"exit": N} when it ends */
        /* Unprivileged (spec->broker): the broker's listeners and what it mounted for it (agent-broker.h). */
        struct broker_listener *listeners;
        char **brokered;                  /* targets, as the container named them */
        struct mount_ident *brokered_ids; /* beside each: the mount made there (0s: unknown, an older record) */
        size_t n_brokered;
        int brokering;           /* its calls being served by workers */
        uint64_t log_window_ms;  /* the broker's lines: when this window of BROKER_LOG_WINDOW_MS began, */
        unsigned log_lines;      /* how many refusals it logged in it, */
        unsigned log_suppressed; /* and how many past BROKER_LOG_BURST it left out */
        char *kubelet_dir;       /* its policy's */
        /* While its PID 1 sets up (agent-run.h): its report, and the run's client, answered then. */
        struct watch start_w;
        struct launch_pending start; /* start.report_fd >= 0: starting */
        int start_conn;
        int start_timeout_ms; /* the run's --timeout, armed once it runs */
        /*
         * A held run (agent-run.h): its command waits for its client's go,
         * and its exit code comes back on command_fd while the container stays.
         */
        struct watch command_w;
        int command_fd;           /* -EBADF: none, or its command has ended */
        int hold_conn;            /* the client that may say go, until answered; -EBADF: none */
        bool held_go, held_stays; /* go said; PID 1 stays after the command (else it is removed at its end) */
        /* Its kept broker worker (agent-broker.c): one call at a time, no fork for each. */
        struct watch server_w, server_timer_w;
        int server_pidfd, server_sock, server_timer;
        json_t *server_call; /* the call it serves; NULL: idle */
        /* A page shared with it: the ID of the call it answered last, set before it answers (MAP_FAILED: none). */
        volatile uint64_t *server_replied;
        /* A spare (agent-spare.h), until a run claims it: its kind, and its config as its config.json has it. */
        struct spare_kind *spare;
        json_t *spare_config;
        /* A claimed spare's run: its process, for the config.json written when the loop is idle (NULL: none due). */
        json_t *config_process;
        uint64_t tree_kept;                /* the kept check of its image's tree it was made under (tree-watch.h) */
        struct start_pins pins;            /* what its start took from the host, checked again at its claim */
        struct deferred_run *claim_waiter; /* a run of its kind that came while it started: next once it is ready */
};

/* Runs alike but for their command and target (agent-spare.h): at most one spare of each kind waits. */
#define AGENT_SPARE_KINDS 2
struct spare_kind {
        json_t *req;     /* the spare's own request: what runs of the kind share (NULL: a free slot) */
        bool held;       /* the kind's runs hold their command (a routed mount's) */
        struct ctr *ctr; /* its spare, starting or ready; NULL: none */
        uint64_t used_ms;
};

struct tree_watch;   /* tree-watch.h */
struct deferred_run; /* agent-run.h */
struct job;          /* agent-workers.h */
struct worker;       /* agent-workers.h */
struct conn;         /* the loop's */

struct agent {
        const char *state_dir;
        int state_fd, lock_fd, listen_fd, epoll;
        int host_ns, template_ns, cgroup_root, devnull, proc_fd;
        struct ctr *ctrs;
        struct job *jobs;
        struct worker *workers;
        /* Gone, but a later event of the same epoll batch may still point at them. */
        struct ctr *forgotten;
        struct conn *closed_conns;
        struct conn *conns;
        json_t *seccomp_json;    /* the profile of seccomp_cached */
        json_t *seccomp_default; /* the profile clients name SECCOMP_DEFAULT_NAME (seccomp-filter.h) */
        struct seccomp_program seccomp_cached;
        /* Unprivileged containers: the user namespaces of their id ranges (agent-idmap.h), the broker's filter. */
        struct agent_userns {
                int fd;
                uid_t uid;
                gid_t gid;
                uint32_t count;
        } userns[AGENT_USERNS_CACHE];
        unsigned userns_next;
        struct seccomp_program broker_filter;
        int signal_fd;                 /* readable after SIGCHLD, SIGTERM, SIGINT (agent.c) */
        struct tree_watch *trees;      /* the image trees checked and unchanged since (NULL: checked at every run) */
        unsigned starting, max_starts; /* runs whose PID 1 sets up now, and how many may (agent-run.h) */
        struct deferred_run *deferred; /* runs waiting for their turn, in order */
        char **groups_left;            /* containers' groups still busy at their exit (agent.c) */
        size_t n_groups_left;
        struct spare_kind spares[AGENT_SPARE_KINDS]; /* agent-spare.h */
        int spare_inotify[AGENT_SPARE_KINDS];        /* beside each: the inotify instance its spares' pins use */
        bool spares_off;                             /* KUBEMOUNT_SPARES=0 */
        unsigned spare_serial;
        unsigned configs_due; /* containers whose config.json waits for the loop's idle (agent_run_configs_write) */
};

/* fd in the loop's epoll set, its events pointing at w. */
int agent_watch(struct agent *a, int fd, struct watch *w);
void agent_unwatch(struct agent *a, int fd);
void agent_unwatch_close(struct agent *a, int *fd);
/* A pidfd of pid, watched as w: the fd, or -errno (nothing left open). */
int agent_watch_pid(struct agent *a, pid_t pid, struct watch *w);

struct ctr *agent_find(struct agent *a, const char *name);
struct ctr *agent_ctr_new(struct agent *a, const char *name, struct container_spec *spec, int dir_fd,
                          struct km_error *err);
/* Off the table, onto agent.forgotten (the loop frees it after its batch of events: agent_ctr_free). */
void agent_ctr_forget(struct agent *a, struct ctr *c);
/* Its kept broker worker, if any, killed and its fds closed (a call it was serving is not answered). */
void agent_ctr_server_end(struct agent *a, struct ctr *c);
void agent_ctr_free(struct ctr *c);
int agent_ctr_watch(struct agent *a, struct ctr *c, pid_t pid, bool ours);
int agent_ctr_timer(struct agent *a, struct ctr *c, int ms);
void agent_ctr_signal(struct ctr *c, int sig);
/* The kill that ends it for sure: SIGKILL to PID 1, or through its runtime. */
void agent_ctr_kill(struct agent *a, struct ctr *c);
/* STATE_DIR/runtime: the --root of crun and runc (malloc'ed). */
char *agent_runtime_root(struct agent *a);
int agent_add_waiter(struct ctr *c, int conn);
int agent_save_state(struct agent *a, struct ctr *c);
/* A container's state with the secrets of its "command" and "env" masked, in place (secrets.h). */
int agent_state_mask(json_t *state);
