/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent (see agent.h): an epoll loop over clients, PID 1s and timers.
 * The top of the agent: it calls its operations (agent-ops.h, agent-gc.h),
 * its children (agent-workers.h) and its table (agent-containers.h), and
 * none of them calls it; what they need of the loop lives in the table.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "agent.h"
#include "agent-broker.h"
#include "agent-containers.h"
#include "agent-gc.h"
#include "agent-ops.h"
#include "agent-run.h"
#include "agent-spare.h"
#include "agent-workers.h"
#include "cgroup.h"
#include "pid1.h"
#include "launch.h"
#include "agent-protocol.h"
#include "oci-runtime.h"
#include "sd-protocol.h"
#include "state-dir.h"
#include "syscalls.h"
#include "tree-watch.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* A client: its requests go to agent_dispatch. */
struct conn {
        struct watch w; /* first */
        struct conn *next;
        int fd;
        bool closed; /* on agent.closed_conns: freed after the loop's batch of events */
};

static void conn_close(struct agent *a, int fd);
static void agent_done(struct agent *a);

/* PID 1's report of its start (agent-run.h): the run's client answered, closed unless it waits for the exit. */
static void ctr_start_done(struct agent *a, struct ctr *c) {
        int conn;

        if (agent_run_start_done(a, c, &conn) <= 0 && conn >= 0)
                conn_close(a, conn);
}

/* Runs that waited for a start to end, while starts may begin. */
static void run_deferred(struct agent *a) {
        for (struct deferred_run *d; (d = agent_run_next_deferred(a)); agent_run_deferred_free(d))
                if (agent_dispatch(a, d->conn, d->req, d->fds, d->n_fds) <= 0)
                        conn_close(a, d->conn);
}

/* ---- containers ----------------------------------------------------------- */

/* How often a group still busy at its PID 1's exit is tried again. */
#define GROUPS_RETRY_MS 100

/*
 * A container's group, removed; or, while the last of its processes still
 * exit (PID 1's pidfd is readable before its namespace is empty), kept on
 * agent.groups_left for groups_retry() every GROUPS_RETRY_MS until it goes.
 */
static void group_remove(struct agent *a, const char *name) {
        if (cgroup_remove(a->cgroup_root, name) == -EBUSY)
                (void)strv_append(&a->groups_left, &a->n_groups_left, name);
}

static void groups_retry(struct agent *a) {
        size_t k = 0;

        for (size_t i = 0; i < a->n_groups_left; i++)
                if (cgroup_remove(a->cgroup_root, a->groups_left[i]) == -EBUSY)
                        a->groups_left[k++] = a->groups_left[i];
                else
                        free(a->groups_left[i]);
        a->n_groups_left = k;
        if (a->groups_left)
                a->groups_left[k] = NULL;
}

/* Who waits for c's end ({"exit": code}): its run's client, rm -f's. */
static void answer_waiters(struct agent *a, struct ctr *c, int code) {
        for (size_t i = 0; i < ELEMENTSOF(c->waiters); i++) {
                if (c->waiters[i] < 0)
                        continue;
                json_t *m = json_pack("{s:o, s:b}", "exit", code >= 0 ? json_integer(code) : json_null(), "timed_out",
                                      c->timed_out);
                /* rm -f's answer, and a removed held run's */
                if (m && c->remove_on_exit)
                        json_object_set_new(m, "removed", json_true());
                (void)proto_send(c->waiters[i], m, NULL, 0);
                json_decref(m);
                conn_close(a, TAKE_FD(c->waiters[i]));
        }
}

/* PID 1 is gone: record how, answer who waits, release its cgroups. */
static void ctr_exited(struct agent *a, struct ctr *c) {
        siginfo_t si = {};
        int code = -1;

        /* Died while it set up: its run is answered with what it reported, and it is gone. */
        if (c->start.report_fd >= 0 && (ctr_start_done(a, c), c->forgotten))
                return;
        if (c->ours && waitid((idtype_t)P_PIDFD, c->pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid > 0)
                code = exit_code_from_siginfo(&si);
        agent_broker_log_flush(c);
        agent_ctr_server_end(a, c);
        /* A held command's client is a waiter: answered below with PID 1's status. */
        agent_unwatch_close(a, &c->command_fd);
        c->hold_conn = -EBADF;
        if (c->timed_out)
                code = 124;
        agent_unwatch(a, c->pidfd);
        closep(&c->pidfd);
        if (c->timer >= 0) {
                agent_unwatch(a, c->timer);
                closep(&c->timer);
        }
        if (c->runtime) {
                _cleanup_free_ char *root = agent_runtime_root(a);
                if (root)
                        (void)runtime_delete(c->runtime, root, c->name, NULL);
        }
        char code_s[16];
        const char *pairs[] = { "KUBEMOUNT_CONTAINER",
                                c->name,
                                "KUBEMOUNT_EXIT_STATUS",
                                code_s,
                                "KUBEMOUNT_STOPPED",
                                c->stopping && !c->timed_out ? "1" : "0",
                                NULL };
        snprintf(code_s, sizeof(code_s), "%d", code);
        if (c->stopping && !c->timed_out)
                /* stop, rm -f, gc, a routed umount: status 137 or 143 is no failure */
                log_event(KM_LOG_INFO, MESSAGE_ID_CONTAINER_EXIT, pairs,
                          "container %s: stopped by kubemount as asked (status %d)", c->name, code);
        else
                log_event(KM_LOG_INFO, MESSAGE_ID_CONTAINER_EXIT, pairs, "container %s: exited with status %d", c->name,
                          code);
        json_object_set_new(c->state, "status", json_string("exited"));
        json_object_set_new(c->state, "exit_code", code >= 0 ? json_integer(code) : json_null());
        json_object_set_new(c->state, "timed_out", json_boolean(c->timed_out));
        /* Its record first: whoever is answered finds it gone (or saved), also without us. */
        if (c->remove_on_exit && !c->answered)
                (void)state_container_remove(a->state_fd, c->name, NULL);
        else if (!c->remove_on_exit)
                (void)agent_save_state(a, c);
        answer_waiters(a, c, code);
        /* After the answers (on cgroup v1 ten rmdirs), before any other request: none sees the group. */
        if (c->detached)
                group_remove(a, c->cgroup);
        if (c->remove_on_exit)
                agent_ctr_forget(a, c);
}

static void ctr_timer(struct agent *a, struct ctr *c) {
        uint64_t n;

        (void)!read(c->timer, &n, sizeof(n));
        if (c->spare)
                c->stopping = true; /* kept long enough unclaimed (agent-spare.h) */
        if (!c->stopping)
                c->timed_out = true; /* a run's --timeout; a stop's grace ends the same way */
        agent_ctr_kill(a, c);
}

/* ---- exec jobs ---------------------------------------------------------------- */

static void job_exited(struct agent *a, struct job *j) {
        siginfo_t si = {};
        int code = 125;

        if (waitid((idtype_t)P_PIDFD, j->pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid > 0)
                code = exit_code_from_siginfo(&si);
        json_t *m = json_pack("{s:i}", "exit", code);
        (void)proto_send(j->conn, m, NULL, 0);
        json_decref(m);
        conn_close(a, j->conn);
        struct ctr *c = agent_find(a, j->ctr);
        if (c && c->execs > 0)
                c->execs--;
        agent_unwatch(a, j->pidfd);
        for (struct job **p = &a->jobs; *p; p = &(*p)->next)
                if (*p == j) {
                        *p = j->next;
                        break;
                }
        close(j->pidfd);
        free(j);
}

/* ---- workers (see agent-workers.h) ---------------------------------------------- */

/* The worker ended, or its time is up: its answer to done (once); freed once it is reaped. */
static void worker_event(struct agent *a, struct worker *w, bool timer) {
        if (w->reaped)
                return;
        if (timer) {
                uint64_t n;
                (void)!read(w->timer, &n, sizeof(n));
                (void)sys_pidfd_send_signal(w->pidfd, SIGKILL, NULL, 0);
        }
        if (!w->answered) {
                int fds[PROTO_MAX_FDS], conn = w->conn;
                size_t n_fds = 0;
                json_t *answer = NULL;

                w->answered = true;
                /* Sent before it exits; at the timeout it may be there too (a worker stuck in the kernel after it). */
                if (proto_recv(w->sock, &answer, fds, &n_fds) < 0)
                        answer = NULL;
                if (conn >= 0 && w->done(a, conn, w->ctx, answer, fds, n_fds) <= 0)
                        conn_close(a, conn);
                else if (w->clientless)
                        (void)w->done(a, -EBADF, w->ctx, answer, fds, n_fds);
                for (size_t i = 0; i < n_fds; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                json_decref(answer);
        }
        if (!timer) {
                siginfo_t si = {};
                (void)waitid((idtype_t)P_PIDFD, w->pidfd, &si, WEXITED | WNOHANG);
                /* Freed after this batch of events, which may hold its timer's too. */
                agent_unwatch(a, w->pidfd);
                agent_unwatch(a, w->timer);
                w->reaped = true;
        } else {
                /* Reaped when it is gone (a FUSE request already read by a hung daemon holds it until then). */
                agent_unwatch(a, w->timer);
                closep(&w->timer);
        }
}

/* ---- signals and strays ------------------------------------------------------ */

/*
 * Signals reach the loop through a self-pipe, a byte each (a blocked mask
 * would be inherited by what the agent forks; a forked worker's handler
 * writes nothing).  SIGTERM and SIGINT end the agent through its loop, so
 * that agent_done() runs (the socket goes).  SIGCHLD: we are a subreaper: a
 * command whose exec helper was killed (its client hung up) becomes our
 * child, and so may any orphan below a worker.  Nothing watches its pidfd:
 * unreaped, it stays a zombie in its container's PID namespace, and that
 * namespace's PID 1 never finishes dying (the kernel waits for every process
 * of it to be reaped), so a stop was never answered.
 */
static int signal_pipe = -EBADF;
static pid_t agent_pid;

static void on_signal(int sig) {
        int e = errno;
        char b = (char)sig;

        if (getpid() == agent_pid && signal_pipe >= 0)
                (void)!write(signal_pipe, &b, 1);
        errno = e;
}

/* Drains the pipe: whether SIGTERM or SIGINT was among its bytes; *child set if SIGCHLD was. */
static bool signals_read(struct agent *a, bool *child) {
        bool stop = false;
        char buf[64];
        ssize_t n;

        while ((n = read(a->signal_fd, buf, sizeof(buf))) > 0)
                for (ssize_t i = 0; i < n; i++) {
                        stop |= buf[i] == SIGTERM || buf[i] == SIGINT;
                        *child |= buf[i] == SIGCHLD;
                }
        return stop;
}

static int signals_setup(struct agent *a, struct watch *w) {
        struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
        int p[2];

        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        a->signal_fd = p[0];
        signal_pipe = p[1];
        agent_pid = getpid();
        if (agent_watch(a, a->signal_fd, w) < 0 || sigaction(SIGCHLD, &sa, NULL) < 0 ||
            sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
                return -errno;
        return 0;
}

static void signals_done(struct agent *a) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        (void)sigaction(SIGCHLD, &sa, NULL);
        (void)sigaction(SIGTERM, &sa, NULL);
        (void)sigaction(SIGINT, &sa, NULL);
        closep(&signal_pipe);
        closep(&a->signal_fd);
}

static bool pid_is_tracked(struct agent *a, pid_t pid) {
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (c->ours && c->pidfd >= 0 && c->pid == pid)
                        return true;
        for (struct job *j = a->jobs; j; j = j->next)
                if (j->pid == pid)
                        return true;
        for (struct worker *w = a->workers; w; w = w->next)
                if (w->pid == pid && !w->reaped)
                        return true;
        return false;
}

/*
 * Reaps exited children nobody watches; a watched one ahead of them waits
 * for its own event.  Whether some may be left (a watched one was ahead, or
 * there were more): then it is called again after the next batch.  Only
 * then and after a SIGCHLD: the kernel's wait looks at every child, and the
 * agent may have hundreds (each container's PID 1 and kept broker worker).
 */
static bool reap_strays(struct agent *a) {
        for (int i = 0; i < 256; i++) {
                siginfo_t si = {};

                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid <= 0)
                        return false;
                if (pid_is_tracked(a, si.si_pid))
                        return true;
                (void)waitid(P_PID, (id_t)si.si_pid, &si, WEXITED | WNOHANG);
                log_msg(KM_LOG_DEBUG, "agent: reaped stray child %d", (int)si.si_pid);
        }
        return true;
}

/* ---- clients ------------------------------------------------------------------- */

static void conn_close(struct agent *a, int fd) {
        for (struct conn **p = &a->conns; *p; p = &(*p)->next)
                if ((*p)->fd == fd) {
                        struct conn *c = *p;
                        *p = c->next;
                        agent_unwatch(a, fd);
                        close(fd);
                        c->closed = true;
                        c->next = a->closed_conns;
                        a->closed_conns = c;
                        return;
                }
}

/* After a batch of events: what went during it. */
static void agent_sweep(struct agent *a) {
        for (struct worker *w = a->workers, *next; w; w = next) {
                next = w->next;
                if (w->reaped)
                        agent_worker_free(a, w);
        }
        while (a->forgotten) {
                struct ctr *c = a->forgotten;
                a->forgotten = c->next;
                agent_ctr_free(c);
        }
        while (a->closed_conns) {
                struct conn *c = a->closed_conns;
                a->closed_conns = c->next;
                free(c);
        }
}

/* A client that hangs up stops what it waits for: a run is killed, an exec too. */
static void conn_gone(struct agent *a, int fd) {
        agent_run_conn_gone(a, fd);
        for (struct ctr *c = a->ctrs; c; c = c->next)
                for (size_t i = 0; i < ELEMENTSOF(c->waiters); i++)
                        if (c->waiters[i] == fd) {
                                c->waiters[i] = -EBADF;
                                if (!c->detached)
                                        agent_ctr_kill(a, c);
                        }
        for (struct job *j = a->jobs; j; j = j->next)
                if (j->conn == fd) {
                        (void)sys_pidfd_send_signal(j->pidfd, SIGKILL, NULL, 0);
                        j->conn = -EBADF;
                }
        for (struct worker *w = a->workers; w; w = w->next)
                if (w->conn == fd) {
                        (void)sys_pidfd_send_signal(w->pidfd, SIGKILL, NULL, 0);
                        w->conn = -EBADF;
                }
        conn_close(a, fd);
}

static void conn_request(struct agent *a, struct conn *conn) {
        int fds[PROTO_MAX_FDS];
        size_t n_fds = 0;
        json_t *req = NULL;
        int r = proto_recv(conn->fd, &req, fds, &n_fds);

        if (r == -ECONNRESET || r == -EAGAIN) {
                if (r == -ECONNRESET)
                        conn_gone(a, conn->fd);
                goto out;
        }
        if (r < 0) {
                proto_send_error(conn->fd, r, "agent: unreadable request");
                conn_close(a, conn->fd);
                goto out;
        }
        /* Answered now (closed) or later (kept: run, exec, stop). */
        if (agent_dispatch(a, conn->fd, req, fds, n_fds) <= 0)
                conn_close(a, conn->fd);
out:
        for (size_t i = 0; i < n_fds; i++)
                close(fds[i]);
        json_decref(req);
}

static void conn_accept(struct agent *a) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct conn *c;
        int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        /* Only root (or our own user) may ask for privileged containers. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || (cred.uid != 0 && cred.uid != geteuid()) ||
            !(c = calloc(1, sizeof(*c)))) {
                close(fd);
                return;
        }
        c->w.kind = WATCH_CONN;
        c->fd = fd;
        c->next = a->conns;
        a->conns = c;
        if (agent_watch(a, fd, &c->w) < 0)
                conn_close(a, fd);
}

/* ---- start-up -------------------------------------------------------------------- */

/* How often routed mounts' orphans are looked for: $KUBEMOUNT_GC_INTERVAL seconds (0: never), default 60. */
static int gc_interval_ms(void) {
        const char *e = getenv("KUBEMOUNT_GC_INTERVAL");
        char *end;
        long s = e && *e ? strtol(e, &end, 10) : 60;

        if (e && *e && (*end || s < 0 || s > 86400)) {
                log_msg(KM_LOG_WARNING, "agent: KUBEMOUNT_GC_INTERVAL=%s is not 0..86400 seconds: 60 used", e);
                s = 60;
        }
        return (int)s * 1000;
}

static bool serves_mounts(struct agent *a) {
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (c->pidfd >= 0 && json_object_get(c->state, "mount"))
                        return true;
        return false;
}

static int listen_on(int state_fd, const char *state_dir, struct km_error *err) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", state_dir, AGENT_SOCKET) >= (int)sizeof(sa.sun_path))
                return error_set_plain(err, -ENAMETOOLONG, "agent: socket path %s/%s is too long", state_dir,
                                       AGENT_SOCKET);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return error_set(err, -errno, "agent: socket");
        (void)unlinkat(state_fd, AGENT_SOCKET, 0); /* a stale one: we hold the lock */
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || fchmodat(state_fd, AGENT_SOCKET, 0600, 0) < 0 ||
            listen(fd, 128) < 0) {
                int r = -errno;
                close(fd);
                return error_set(err, r, "agent: listen on %s", sa.sun_path);
        }
        return fd;
}

int agent_run(const struct agent_options *o, struct km_error *err) {
        _cleanup_(agent_done) struct agent a = { .listen_fd = -EBADF,
                                                 .epoll = -EBADF,
                                                 .state_fd = -EBADF,
                                                 .lock_fd = -EBADF,
                                                 .template_ns = -EBADF,
                                                 .host_ns = -EBADF,
                                                 .cgroup_root = -EBADF,
                                                 .devnull = -EBADF,
                                                 .proc_fd = -EBADF,
                                                 .signal_fd = -EBADF };
        struct watch listen_w = { WATCH_LISTEN }, signal_w = { WATCH_SIGNAL };
        struct km_error cerr = {};
        int r;

        for (size_t i = 0; i < ELEMENTSOF(a.userns); i++)
                a.userns[i].fd = -EBADF;
        sd_notify_take(); /* nothing we start speaks for us */
        a.state_dir = o->state_dir;
        a.state_fd = state_dir_open(o->state_dir, err);
        if (a.state_fd < 0)
                return a.state_fd;
        a.lock_fd = openat(a.state_fd, "agent.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (a.lock_fd < 0)
                return error_set(err, -errno, "agent: %s/agent.lock", o->state_dir);
        if (flock(a.lock_fd, LOCK_EX | LOCK_NB) < 0)
                return error_set_plain(err, -EALREADY, "agent: another agent serves %s", o->state_dir);
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
        init_title_prepare();
        a.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        a.host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        a.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (a.devnull < 0 || a.host_ns < 0 || a.proc_fd < 0)
                return error_set(err, -errno, "agent: /dev/null, /proc/self/ns/mnt");
        /*
         * PID 1 puts the broker's listener at LAUNCH_BROKER_FD: a fd of ours it keeps (a user namespace, a
         * client's stdio) must never have that number, or the listener replaces it there (a burst of starts
         * opens that many).  Held by us, on /dev/null, it never does.
         */
        if (dup3(a.devnull, LAUNCH_BROKER_FD, O_CLOEXEC) < 0)
                return error_set(err, -errno, "agent: reserve fd %d", LAUNCH_BROKER_FD);
        a.max_starts = agent_run_max_starts();
        agent_spares_init(&a);
        r = tree_watch_new(&a.trees);
        if (r < 0)
                log_msg(KM_LOG_WARNING, "agent: inotify: %s; an image's tree is checked in full at every run",
                        strerror(-r));
        /* A hostPID pod's own cgroup namespace would keep the containers in the pod's group (and kill them with it). */
        cgroup_join_init_ns();
        a.cgroup_root = cgroup_root_open(&cerr);
        r = a.cgroup_root >= 0 ? cgroup_delegate(a.cgroup_root, a.state_fd, &cerr) : 0;
        /*
         * Started on demand from a kubelet's cgroup: leave it.  A delegated unit's group holds only groups
         * (cgroup v2: no processes beside children once a controller is enabled): its "agent".  An undelegated
         * unit's group is right as it is.
         */
        if (a.cgroup_root < 0 || r < 0 ||
            ((r > 0 || !getenv("INVOCATION_ID")) && cgroup_enter(a.cgroup_root, getpid(), "agent", &cerr) < 0))
                log_msg(KM_LOG_WARNING, "agent: %s; containers stay in the agent's caller's cgroup", cerr.message);
        a.template_ns = launch_template_create(err);
        if (a.template_ns < 0)
                return a.template_ns;
        a.listen_fd = listen_on(a.state_fd, o->state_dir, err);
        if (a.listen_fd < 0)
                return a.listen_fd;
        a.epoll = epoll_create1(EPOLL_CLOEXEC);
        if (a.epoll < 0 || agent_watch(&a, a.listen_fd, &listen_w) < 0)
                return error_set(err, -errno, "agent: epoll");
        r = signals_setup(&a, &signal_w);
        if (r < 0)
                return error_set(err, r, "agent: signals");
        agent_reconcile(&a);
        if (o->ready_fd >= 0) {
                (void)!write(o->ready_fd, "1", 1);
                close(o->ready_fd);
        }
        (void)sd_notify_send("READY=1\nSTATUS=serving VCS containers");

        int sweep_ms = gc_interval_ms();
        uint64_t next_sweep = monotonic_ms() + (uint64_t)sweep_ms;
        bool strays = true; /* reap_strays() is due */
        for (;;) {
                struct epoll_event ev[16];
                bool idle = agent_only_spares(&a) && !a.conns && !a.jobs && !a.workers, stop = false;
                bool spare_due = agent_spare_wanted(&a);
                int timeout = idle && o->idle_exit_s > 0 ? o->idle_exit_s * 1000 : -1;
                uint64_t now = monotonic_ms();

                if (sweep_ms > 0 && now >= next_sweep) {
                        agent_release_orphans(&a, NULL);
                        next_sweep = now + (uint64_t)sweep_ms;
                }
                if (sweep_ms > 0 && serves_mounts(&a) && (timeout < 0 || (uint64_t)timeout > next_sweep - now))
                        timeout = (int)(next_sweep - now);
                if (a.n_groups_left > 0) {
                        groups_retry(&a);
                        if (a.n_groups_left > 0 && (timeout < 0 || timeout > GROUPS_RETRY_MS))
                                timeout = GROUPS_RETRY_MS;
                }
                if ((spare_due || a.configs_due) && (timeout < 0 || timeout > AGENT_SPARE_IDLE_MS))
                        timeout = AGENT_SPARE_IDLE_MS;
                int n = epoll_wait(a.epoll, ev, ELEMENTSOF(ev), timeout);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return error_set(err, -errno, "agent: epoll_wait");
                if (n == 0 && a.configs_due) {
                        agent_run_configs_write(&a);
                        continue;
                }
                if (n == 0 && spare_due) {
                        struct spare_kind *k = agent_spare_due(&a);

                        if (k && agent_run_spare_start(&a, k) < 0)
                                agent_spare_failed(k);
                        continue;
                }
                if (n == 0 && idle) {
                        bool running = false;
                        for (struct ctr *c = a.ctrs; c; c = c->next)
                                running |= c->pidfd >= 0 && !c->spare;
                        if (!running && !a.conns && !a.jobs && !a.workers) {
                                agent_spares_done(&a);
                                (void)sd_notify_send("STOPPING=1\nSTATUS=idle");
                                return 0; /* idle: a caller starts us again when needed */
                        }
                }
                for (int i = 0; i < n; i++) {
                        struct watch *w = ev[i].data.ptr;

                        switch (w->kind) {
                        case WATCH_LISTEN:
                                conn_accept(&a);
                                break;
                        case WATCH_CONN:
                                if (!((struct conn *)w)->closed)
                                        conn_request(&a, (struct conn *)w);
                                break;
                        case WATCH_PID1:
                                if (!((struct ctr *)w)->forgotten)
                                        ctr_exited(&a, (struct ctr *)w);
                                break;
                        case WATCH_TIMER: {
                                struct ctr *c = (struct ctr *)((char *)w - offsetof(struct ctr, timer_w));
                                if (!c->forgotten)
                                        ctr_timer(&a, c);
                                break;
                        }
                        case WATCH_JOB:
                                job_exited(&a, (struct job *)w);
                                break;
                        case WATCH_WORKER:
                                worker_event(&a, (struct worker *)w, false);
                                break;
                        case WATCH_WORKER_TIMER:
                                worker_event(&a, (struct worker *)((char *)w - offsetof(struct worker, timer_w)), true);
                                break;
                        case WATCH_BROKER:
                                agent_broker_event(&a, (struct broker_listener *)w, ev[i].events);
                                break;
                        case WATCH_START: {
                                struct ctr *c = (struct ctr *)((char *)w - offsetof(struct ctr, start_w));
                                if (!c->forgotten && c->start.report_fd >= 0)
                                        ctr_start_done(&a, c);
                                break;
                        }
                        case WATCH_COMMAND: {
                                struct ctr *c = (struct ctr *)((char *)w - offsetof(struct ctr, command_w));
                                int code = -1;
                                int conn = !c->forgotten && c->command_fd >= 0 ? agent_run_command_done(&a, c, &code)
                                                                               : -EBADF;
                                if (conn >= 0)
                                        conn_close(&a, conn);
                                if (code >= 0)
                                        answer_waiters(&a, c, code);
                                break;
                        }
                        case WATCH_BROKER_SERVER:
                        case WATCH_BROKER_SERVER_TIMER: {
                                bool timer = w->kind == WATCH_BROKER_SERVER_TIMER;
                                struct ctr *c = (struct ctr *)((char *)w - (timer ? offsetof(struct ctr, server_timer_w)
                                                                                  : offsetof(struct ctr, server_w)));
                                if (!c->forgotten)
                                        agent_broker_server_event(&a, c, timer);
                                break;
                        }
                        case WATCH_SIGNAL:
                                stop |= signals_read(&a, &strays);
                                break; /* SIGCHLD: below, after the watched ones of this batch are reaped */
                        }
                }
                if (strays)
                        strays = reap_strays(&a);
                run_deferred(&a);
                agent_sweep(&a);
                if (stop) {
                        /* systemctl stop: the containers serve on, a new agent adopts them; spares do not. */
                        agent_run_configs_write(&a);
                        agent_spares_done(&a);
                        (void)sd_notify_send("STOPPING=1\nSTATUS=stopped by a signal; containers serve on");
                        return 0;
                }
        }
        (void)r;
}

static void agent_done(struct agent *a) {
        while (a->deferred) {
                struct deferred_run *d = a->deferred;
                a->deferred = d->next;
                agent_run_deferred_free(d);
        }
        while (a->ctrs)
                agent_ctr_forget(a, a->ctrs);
        while (a->conns)
                conn_close(a, a->conns->fd);
        while (a->workers) {
                struct worker *w = a->workers;
                (void)sys_pidfd_send_signal(w->pidfd, SIGKILL, NULL, 0);
                agent_worker_free(a, w);
        }
        while (a->jobs) {
                struct job *j = a->jobs;
                a->jobs = j->next;
                close(j->pidfd);
                free(j);
        }
        if (a->listen_fd >= 0 && a->state_fd >= 0)
                (void)unlinkat(a->state_fd, AGENT_SOCKET, 0);
        closep(&a->listen_fd);
        closep(&a->epoll);
        closep(&a->template_ns);
        closep(&a->host_ns);
        closep(&a->cgroup_root);
        closep(&a->devnull);
        closep(&a->proc_fd);
        tree_watch_free(a->trees);
        km_strv_free(a->groups_left);
        seccomp_program_done(&a->seccomp_cached);
        json_decref(a->seccomp_json);
        json_decref(a->seccomp_default);
        agent_broker_done(a);
        signals_done(a);
        closep(&a->lock_fd);
        closep(&a->state_fd);
        agent_sweep(a);
}
