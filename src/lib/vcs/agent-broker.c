/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's side of the mount broker (see agent-broker.h). */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "agent-broker.h"
#include "agent-idmap.h"
#include "sd-protocol.h"
#include "agent-protocol.h"
#include "broker.h"
#include "fuse-probe.h"
#include "launch.h"
#include "pid1.h"
#include "syscalls.h"
#include "seccomp-notify.h"
#include "userns.h"

/* A mount waits on its server (mount.nfs retries for two minutes): the worker may take that long. */
#define BROKER_TIMEOUT_DEFAULT_S 150
/* Calls of one container served at once; more get EAGAIN (a thousand threads must not fork a thousand workers). */
#define BROKER_CONCURRENT_MAX 8
/* How long the loop waits for the outcome of a call the kept worker has answered (it sends it next). */
#define SERVER_OUTCOME_WAIT_MS 1000

int agent_broker_prepare(struct agent *a, struct ctr *c, const char *kubelet_dir, int *ret_userns,
                         const struct seccomp_program **ret_filter, struct km_error *err) {
        const struct container_spec *s = c->spec;
        int r;

        *ret_userns = -EBADF;
        *ret_filter = NULL;
        if (!s->id_count)
                return 0;
        *ret_userns = agent_userns_of(a, s, err);
        if (*ret_userns < 0)
                return *ret_userns;
        if (!s->broker)
                return 0;
        if (!a->broker_filter.prog.filter &&
            (r = seccomp_broker_compile(&a->broker_filter, !fuse_clone_crosses_userns(), err)) < 0)
                return r;
        if (!c->kubelet_dir && !(c->kubelet_dir = strdup(kubelet_dir ?: KUBELET_DIR_DEFAULT)))
                return error_set(err, -ENOMEM, "container %s", c->name);
        path_simplify(c->kubelet_dir);
        *ret_filter = &a->broker_filter;
        return 0;
}

int agent_broker_listen(struct agent *a, struct ctr *c, int fd) {
        struct broker_listener *l = calloc(1, sizeof(*l));
        int r;

        if (!l) {
                close(fd);
                return -ENOMEM;
        }
        *l = (struct broker_listener){ .w.kind = WATCH_BROKER, .ctr = c, .fd = fd, .next = c->listeners };
        (void)broker_sync_wakeup(fd); /* where the kernel has it */
        c->listeners = l;
        r = agent_watch(a, fd, &l->w);
        if (r < 0)
                closep(&l->fd);
        return r;
}

/* The records' IDs as JSON arrays: mountinfo's, or (unique) the 64-bit ones, each beside its target. */
static json_t *json_from_ids(const struct mount_ident *ids, size_t n, bool unique) {
        json_t *a = json_array();

        for (size_t i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_integer(unique ? (json_int_t)ids[i].unique : ids[i].id)) < 0)
                        return json_decref(a), NULL;
        return a;
}

/* Record i's identity from those arrays (a record of an older agent has no unique IDs: 0). */
static struct mount_ident ident_at(json_t *ids, json_t *uniques, size_t i) {
        return (struct mount_ident){ (unsigned)json_integer_value(json_array_get(ids, i)),
                                     (uint64_t)json_integer_value(json_array_get(uniques, i)) };
}

/*
 * How long a call may take to be served, mount(2) included: $KUBEMOUNT_BROKER_TIMEOUT
 * seconds (1..3600, default 150), read once; then the worker is killed and the caller
 * gets ETIMEDOUT.
 */
static int broker_timeout_s(void) {
        static int s;

        if (!s) {
                const char *e = getenv("KUBEMOUNT_BROKER_TIMEOUT");
                char *end;
                long v = e && *e ? strtol(e, &end, 10) : BROKER_TIMEOUT_DEFAULT_S;

                if (e && *e && (*end || v < 1 || v > 3600)) {
                        log_msg(KM_LOG_WARNING, "agent: KUBEMOUNT_BROKER_TIMEOUT=%s is not 1..3600 seconds: %d used", e,
                                BROKER_TIMEOUT_DEFAULT_S);
                        v = BROKER_TIMEOUT_DEFAULT_S;
                }
                s = (int)v;
        }
        return s;
}

/* ---- in the worker ---------------------------------------------------------- */

static uint64_t hex_u64(json_t *v) {
        return strtoull(json_string_value(v) ?: "0", NULL, 16);
}

/*
 * $KUBEMOUNT_TEST_BROKER_REPLY_MS: the kept worker waits that long between
 * its answer and the outcome, so that a test's caller always makes its next
 * call in that window (broker-mounts [stack]).
 */
static void reply_hold(void) {
        const char *e = getenv("KUBEMOUNT_TEST_BROKER_REPLY_MS");
        long ms = e ? strtol(e, NULL, 10) : 0;

        if (ms > 0 && ms <= 1000)
                (void)usleep((useconds_t)ms * 1000);
}

/*
 * Serves the call in ctx that came on listener; the outcome goes to sock.
 * replied (the kept worker's page): the caller is answered here first, its
 * call's ID put there before, so that the agent, which would otherwise run
 * its records and logs ahead of the answer, takes the outcome before it
 * hands out the caller's next call (agent_broker_event()).
 */
static int serve_call(struct agent *a, json_t *ctx, int listener, int sock, volatile uint64_t *replied) {
        struct ctr *c = agent_find(a, json_string_value(json_object_get(ctx, "ctr")) ?: "");
        struct broker_notif n = {
                .id = hex_u64(json_object_get(ctx, "id")),
                .pid = (pid_t)json_integer_value(json_object_get(ctx, "pid")),
                .nr = (int)json_integer_value(json_object_get(ctx, "nr")),
        };
        json_t *args = json_object_get(ctx, "args"), *answer;
        dev_t devices[64];
        const char *device_paths[64];
        struct broker_bind binds[64];
        struct broker_view view = { binds, 0, devices, device_paths, 0 };
        struct broker_outcome *out = calloc(1, sizeof(*out));
        int r;

        if (!c || !c->spec || !out)
                return -ENOENT;
        for (size_t i = 0; i < ELEMENTSOF(n.args); i++)
                n.args[i] = hex_u64(json_array_get(args, i));
        /* A device of the spec's own is named on the host as in the container (runtimes create it by that path). */
        for (size_t i = 0; i < c->spec->n_devices; i++)
                if (c->spec->devices[i].type == 'c' && c->spec->devices[i].major == 10 &&
                    c->spec->devices[i].minor == 229)
                        view.fuse_device = true;
        for (size_t i = 0; i < c->spec->n_devices && view.n_devices < ELEMENTSOF(devices); i++)
                if (c->spec->devices[i].type == 'b') {
                        device_paths[view.n_devices] = c->spec->devices[i].path;
                        devices[view.n_devices++] = makedev(c->spec->devices[i].major, c->spec->devices[i].minor);
                }
        for (size_t i = 0; i < c->spec->n_mounts && view.n_binds < ELEMENTSOF(binds); i++) {
                const struct spec_mount *m = &c->spec->mounts[i];
                struct stat st;

                if (!m->source || m->source[0] != '/' || !(m->flags & MS_BIND))
                        continue;
                /* A device bound in (as the multi-call tools bind theirs) is one it was given. */
                if (stat(m->source, &st) == 0 && S_ISBLK(st.st_mode)) {
                        if (view.n_devices < ELEMENTSOF(devices)) {
                                device_paths[view.n_devices] = m->source;
                                devices[view.n_devices++] = st.st_rdev;
                        }
                } else
                        binds[view.n_binds++] = (struct broker_bind){ m->destination, m->source };
        }
        /* Its scope: a routed container's target, a run container's --mount-target ones (agent-ops.c). */
        char *targets[BROKER_TARGETS_MAX + 2] = {};
        size_t n_targets = 0, i;
        json_t *t;

        targets[n_targets] = (char *)json_string_value(json_object_get(json_object_get(c->state, "mount"), "target"));
        n_targets += targets[n_targets] != NULL;
        json_array_foreach(json_object_get(c->state, "mount_targets"), i,
                           t) if (json_is_string(t) && n_targets <= BROKER_TARGETS_MAX) targets[n_targets++] =
                (char *)json_string_value(t);
        struct broker_policy p = {
                .kubelet_dir = c->kubelet_dir,
                .targets = targets,
                .types = c->spec->broker_types,
                .host_uid = c->spec->host_uid,
                .host_gid = c->spec->host_gid,
                .id_count = c->spec->id_count,
                .max_mounts = BROKER_MAX_MOUNTS_DEFAULT,
        };
        char *const none[] = { NULL };
        /* What it has mounted, as the loop knows it now (a kept worker's own copy of the table is old). */
        char *mounted[BROKER_MAX_MOUNTS_DEFAULT + 1] = {};
        struct mount_ident mounted_ids[BROKER_MAX_MOUNTS_DEFAULT] = {};
        json_t *ids = json_object_get(ctx, "mounted_ids"), *uniques = json_object_get(ctx, "mounted_unique_ids");

        json_array_foreach(json_object_get(ctx, "mounted"), i,
                           t) if (json_is_string(t) && i < BROKER_MAX_MOUNTS_DEFAULT) {
                mounted[i] = (char *)json_string_value(t);
                mounted_ids[i] = ident_at(ids, uniques, i);
        }
        p.mounted = mounted;
        p.mounted_ids = mounted_ids;
        if (!p.types)
                p.types = none;
        broker_serve(listener, &n, &p, &view, out);
        bool reply = replied && !out->answered;

        if (reply) {
                __atomic_store_n(replied, n.id, __ATOMIC_RELEASE);
                (void)broker_answer(listener, n.id, out->error);
                reply_hold();
        }
        answer = json_pack("{s:i, s:b, s:b, s:b, s:b, s:s, s:s, s:I, s:I}", "error", out->error, "mounted",
                           out->mounted, "unmounted", out->unmounted, "answered", out->answered, "replied", reply,
                           "target", out->target, "line", out->line, "mount_id", (json_int_t)out->mount.id,
                           "mount_unique_id", (json_int_t)out->mount.unique);
        r = answer ? proto_send(sock, answer, NULL, 0) : -ENOMEM;
        json_decref(answer);
        free(out);
        return r;
}

/* A worker forked for one call (the kept one is busy, or there is none). */
static int broker_work(struct agent *a, json_t *ctx, int sock) {
        return serve_call(a, ctx, (int)json_integer_value(json_object_get(ctx, "fd")), sock, NULL);
}

/* The kept worker: each call with its listener's fd, until the agent hangs up or kills it. */
static _Noreturn void server_main(struct agent *a, int sock, volatile uint64_t *replied) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(1);
        close_all_but(&sock, 1);
        for (;;) {
                int fds[PROTO_MAX_FDS];
                size_t n = 0;
                json_t *ctx = NULL;
                int r;

                if (proto_recv(sock, &ctx, fds, &n) < 0 || !ctx)
                        _exit(0);
                r = n == 1 ? serve_call(a, ctx, fds[0], sock, replied) : -EINVAL;
                for (size_t i = 0; i < n; i++)
                        close(fds[i]);
                json_decref(ctx);
                if (r < 0)
                        _exit(1);
        }
}

/* ---- back in the loop -------------------------------------------------------- */

/* A line appended to the container's log, which rotates to log.1 past INIT_LOG_MAX, as PID 1's output does. */
static void log_append(struct ctr *c, const char *line) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (!c->detached || c->dir_fd < 0)
                return;
        fd = openat(c->dir_fd, "log", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size + strlen(line) + 32 > INIT_LOG_MAX) {
                closep(&fd);
                (void)renameat(c->dir_fd, "log", c->dir_fd, "log.1");
                fd = openat(c->dir_fd, "log", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        }
        if (fd >= 0)
                dprintf(fd, "kubemount: mount broker: %s\n", line);
}

void agent_broker_log_flush(struct ctr *c) {
        char line[128];

        if (!c->log_suppressed)
                return;
        snprintf(line, sizeof(line), "%u more refused or failed calls not logged (over %d a second)", c->log_suppressed,
                 BROKER_LOG_BURST);
        log_msg(KM_LOG_NOTICE, "container %s: mount broker: %s", c->name, line);
        log_append(c, line);
        c->log_suppressed = 0;
}

/* The line in the container's log (`kubemount logs NAME`) and the agent's; refusals within the rate. */
static void broker_log(struct ctr *c, const char *line, const char *message_id, bool always, const char *target) {
        const char *pairs[] = { "KUBEMOUNT_CONTAINER", c->name, "KUBEMOUNT_TARGET", target, NULL };
        uint64_t now = monotonic_ms();

        if (now - c->log_window_ms >= BROKER_LOG_WINDOW_MS) {
                agent_broker_log_flush(c);
                c->log_window_ms = now;
                c->log_lines = 0;
        }
        if (!always && c->log_lines++ >= BROKER_LOG_BURST) {
                c->log_suppressed++;
                return;
        }
        if (message_id)
                log_event(KM_LOG_NOTICE, message_id, pairs, "container %s: mount broker: %s", c->name, line);
        else
                log_msg(KM_LOG_NOTICE, "container %s: mount broker: %s", c->name, line);
        log_append(c, line);
}

/* The record of a mount made at target, with which mount it is. */
static int brokered_add(struct ctr *c, const char *target, struct mount_ident id) {
        struct mount_ident *ids = reallocarray(c->brokered_ids, c->n_brokered + 1, sizeof(*ids));
        size_t n = c->n_brokered;

        if (!ids)
                return -ENOMEM;
        c->brokered_ids = ids;
        if (strv_append(&c->brokered, &n, target) < 0)
                return -ENOMEM;
        ids[c->n_brokered++] = id;
        return 0;
}

/* The latest record at target goes (the top one: a mount stacked on an own earlier one is unmounted first). */
static void brokered_remove(struct ctr *c, const char *target) {
        for (size_t i = c->n_brokered; i-- > 0;)
                if (streq(c->brokered[i], target)) {
                        free(c->brokered[i]);
                        memmove(c->brokered + i, c->brokered + i + 1, (c->n_brokered - i) * sizeof(char *));
                        memmove(c->brokered_ids + i, c->brokered_ids + i + 1,
                                (c->n_brokered - i - 1) * sizeof(*c->brokered_ids));
                        c->n_brokered--;
                        return;
                }
}

static int broker_done(struct agent *a, int conn, json_t *ctx, json_t *answer, int *fds, size_t n_fds) {
        struct ctr *c = agent_find(a, json_string_value(json_object_get(ctx, "ctr")) ?: "");
        const char *target = json_string_value(json_object_get(answer, "target"));
        int fd = (int)json_integer_value(json_object_get(ctx, "fd"));

        if (!c)
                return 0;
        c->brokering--;
        if (!answer) {
                /* Killed at its timeout, or died: the caller must not wait for ever (an answered one's ID is spent). */
                for (struct broker_listener *l = c->listeners; l; l = l->next)
                        if (l->fd == fd)
                                (void)broker_answer(fd, hex_u64(json_object_get(ctx, "id")), ETIMEDOUT);
                broker_log(c, "a call was not served in time; the caller got ETIMEDOUT", NULL, false, NULL);
                return 0;
        }
        if (json_is_true(json_object_get(answer, "answered"))) {
                /* A trapped open, answered by the worker: only a failure is worth a line. */
                const char *line = json_string_value(json_object_get(answer, "line"));
                if (line && *line)
                        broker_log(c, line, NULL, false, NULL);
                return 0;
        }
        int error = (int)json_integer_value(json_object_get(answer, "error"));
        const char *id = json_is_true(json_object_get(answer, "mounted"))     ? MESSAGE_ID_MOUNT
                         : json_is_true(json_object_get(answer, "unmounted")) ? MESSAGE_ID_UMOUNT
                         : error == EPERM                                     ? MESSAGE_ID_REFUSED
                                                                              : NULL;

        if (target && json_is_true(json_object_get(answer, "mounted")))
                (void)brokered_add(c, target,
                                   (struct mount_ident){
                                           (unsigned)json_integer_value(json_object_get(answer, "mount_id")),
                                           (uint64_t)json_integer_value(json_object_get(answer, "mount_unique_id")) });
        if (target && json_is_true(json_object_get(answer, "unmounted")))
                brokered_remove(c, target);
        if (target && c->state) {
                json_object_set_new(c->state, "brokered", json_from_strv(c->brokered));
                json_object_set_new(c->state, "brokered_ids", json_from_ids(c->brokered_ids, c->n_brokered, false));
                json_object_set_new(c->state, "brokered_unique_ids",
                                    json_from_ids(c->brokered_ids, c->n_brokered, true));
                (void)agent_save_state(a, c);
        }
        /* Recorded first: the caller's next call may be the umount of it (the kept worker replied itself). */
        for (struct broker_listener *l = c->listeners; !json_is_true(json_object_get(answer, "replied")) && l;
             l = l->next)
                if (l->fd == fd)
                        (void)broker_answer(fd, hex_u64(json_object_get(ctx, "id")),
                                            (int)json_integer_value(json_object_get(answer, "error")));
        /* Its lines once the caller goes on (the mount was made before either): 0.06 ms of every call. */
        broker_log(c, json_string_value(json_object_get(answer, "line")) ?: "?", id,
                   json_is_true(json_object_get(answer, "mounted")) ||
                           json_is_true(json_object_get(answer, "unmounted")),
                   target);
        return 0;
}

/*
 * A call its flags alone refuse (broker_refuse_by_flags()), answered here
 * in the loop: nothing to read, no worker to fork.  A flood of such calls
 * costs the agent a notification each.  Whether it was one.
 */
static bool refused_by_flags(struct broker_listener *l, const struct broker_notif *n) {
        struct broker_verdict v;
        bool mount = n->nr == SYS_mount;
        char line[sizeof(v.why) + 96];

        if (!mount && n->nr != SYS_umount2)
                return false;
        if (!broker_refuse_by_flags(mount ? BROKER_OP_MOUNT : BROKER_OP_UMOUNT, (unsigned long)n->args[mount ? 3 : 1],
                                    &v))
                return false;
        snprintf(line, sizeof(line), "%s from pid %d: refused: %s", mount ? "mount" : "umount", (int)n->pid, v.why);
        broker_log(l->ctr, line, MESSAGE_ID_REFUSED, false, NULL);
        (void)broker_answer(l->fd, n->id, v.error);
        return true;
}

/* ---- the kept worker, from the loop ---------------------------------------------- */

void agent_broker_server_start(struct agent *a, struct ctr *c) {
        int sv[2];
        pid_t pid;

        if (!c->spec || !c->spec->broker || c->server_sock >= 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return;
        c->server_replied =
                mmap(NULL, sizeof(*c->server_replied), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        pid = c->server_replied == MAP_FAILED ? -1 : fork();
        if (pid == 0) {
                close(sv[0]);
                server_main(a, sv[1], c->server_replied);
        }
        close(sv[1]);
        c->server_sock = sv[0];
        /* Its worker's alone: no later fork of the agent's (a worker, a container's PID 1) gets the page. */
        if (pid > 0)
                (void)madvise((void *)c->server_replied, sizeof(*c->server_replied), MADV_DONTFORK);
        /* Non-blocking: agent_broker_event() looks for an outcome before it is told of one. */
        if (pid < 0 || fcntl(c->server_sock, F_SETFL, O_NONBLOCK) < 0 ||
            (c->server_pidfd = sys_pidfd_open(pid, 0)) < 0 || agent_watch(a, c->server_sock, &c->server_w) < 0) {
                if (pid > 0)
                        (void)kill(pid, SIGKILL); /* reaped as a stray */
                agent_ctr_server_end(a, c);       /* its calls get a worker each */
        }
}

/* The call to the kept worker, forked on the first call, if it is idle (it takes ctx): whether it did. */
static bool server_take(struct agent *a, struct ctr *c, int listener, json_t *ctx) {
        struct itimerspec t = { .it_value = { broker_timeout_s(), 0 } };

        if (c->server_sock < 0)
                agent_broker_server_start(a, c);
        if (c->server_sock < 0 || c->server_call)
                return false;
        if (c->server_timer < 0 &&
            ((c->server_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
             agent_watch(a, c->server_timer, &c->server_timer_w) < 0)) {
                agent_ctr_server_end(a, c);
                return false;
        }
        if (timerfd_settime(c->server_timer, 0, &t, NULL) < 0 || proto_send(c->server_sock, ctx, &listener, 1) < 0) {
                agent_ctr_server_end(a, c);
                return false;
        }
        c->server_call = ctx;
        return true;
}

void agent_broker_server_event(struct agent *a, struct ctr *c, bool timer) {
        _cleanup_json_ json_t *call = NULL, *answer = NULL;
        int fds[PROTO_MAX_FDS];
        size_t n_fds = 0;
        int r = 0;

        if (timer ? c->server_timer < 0 : c->server_sock < 0)
                return; /* ended earlier in this batch of events */
        if (timer) {
                uint64_t x;
                (void)!read(c->server_timer, &x, sizeof(x));
                if (!c->server_call)
                        return;
        } else if ((r = proto_recv(c->server_sock, &answer, fds, &n_fds)) == -EAGAIN)
                return; /* taken earlier, by agent_broker_event() */
        else if (r >= 0 && answer) {
                for (size_t i = 0; i < n_fds; i++)
                        close(fds[i]);
                (void)timerfd_settime(c->server_timer, 0, &(struct itimerspec){}, NULL);
                call = TAKE_PTR(c->server_call);
                if (call)
                        (void)broker_done(a, -EBADF, call, answer, NULL, 0);
                return;
        }
        /* Out of time (stuck in the kernel, as a forked worker can be), or gone: its call gets ETIMEDOUT. */
        call = TAKE_PTR(c->server_call);
        agent_ctr_server_end(a, c);
        if (call)
                (void)broker_done(a, -EBADF, call, NULL, NULL, 0);
}

/*
 * Whether the kept worker has answered the call it serves: then its outcome,
 * sent right after, is taken now (waited for: it is on its way), since this
 * call may be that caller's next (the umount of what it just mounted).
 */
static bool server_replied(struct agent *a, struct ctr *c) {
        struct pollfd p = { .fd = c->server_sock, .events = POLLIN };

        if (!c->server_call || c->server_replied == MAP_FAILED ||
            __atomic_load_n(c->server_replied, __ATOMIC_ACQUIRE) != hex_u64(json_object_get(c->server_call, "id")))
                return false;
        (void)poll(&p, 1, SERVER_OUTCOME_WAIT_MS);
        agent_broker_server_event(a, c, false);
        return true;
}

void agent_broker_event(struct agent *a, struct broker_listener *l, uint32_t events) {
        struct broker_notif n;
        json_t *ctx;
        char id[32];
        int r;

        if (l->fd < 0 || l->ctr->forgotten)
                return;
        if (!(events & EPOLLIN)) {
                /* Every process under its filter is gone. */
                agent_unwatch_close(a, &l->fd);
                return;
        }
        r = broker_recv(l->fd, &n);
        if (r < 0) {
                if (r != -ENOENT && r != -EINTR)
                        log_msg(KM_LOG_WARNING, "container %s: mount broker: receive: %s", l->ctr->name, strerror(-r));
                return;
        }
        if (!broker_notif_is_open(&n) && refused_by_flags(l, &n))
                return;
        if (server_replied(a, l->ctr) && (l->fd < 0 || l->ctr->forgotten))
                return;
        if (l->ctr->brokering >= BROKER_CONCURRENT_MAX && broker_notif_is_open(&n)) {
                /* An open must not fail for it: it goes on as made (a /dev/fuse then is its own). */
                (void)broker_continue(l->fd, n.id);
                return;
        }
        if (l->ctr->brokering >= BROKER_CONCURRENT_MAX) {
                broker_log(l->ctr, "more than 8 calls at once: this one got EAGAIN", NULL, false, NULL);
                (void)broker_answer(l->fd, n.id, EAGAIN);
                return;
        }
        snprintf(id, sizeof(id), "%" PRIx64, n.id);
        ctx = json_pack("{s:s, s:s, s:i, s:i, s:i, s:[]}", "ctr", l->ctr->name, "id", id, "pid", (int)n.pid, "nr", n.nr,
                        "fd", l->fd, "args");
        for (size_t i = 0; ctx && i < ELEMENTSOF(n.args); i++) {
                char v[32];

                snprintf(v, sizeof(v), "%" PRIx64, n.args[i]);
                json_array_append_new(json_object_get(ctx, "args"), json_string(v));
        }
        if (ctx && (json_object_set_new(ctx, "mounted", json_from_strv(l->ctr->brokered)) < 0 ||
                    json_object_set_new(ctx, "mounted_ids",
                                        json_from_ids(l->ctr->brokered_ids, l->ctr->n_brokered, false)) < 0 ||
                    json_object_set_new(ctx, "mounted_unique_ids",
                                        json_from_ids(l->ctr->brokered_ids, l->ctr->n_brokered, true)) < 0))
                ctx = (json_decref(ctx), NULL);
        if (ctx && server_take(a, l->ctr, l->fd, ctx)) {
                l->ctr->brokering++;
                return;
        }
        r = ctx ? agent_worker_start(a, -EBADF, ctx, broker_timeout_s() * 1000, broker_work, broker_done, &l->fd, 1)
                : -ENOMEM;
        if (r < 0) {
                log_msg(KM_LOG_WARNING, "container %s: mount broker: %s", l->ctr->name, strerror(-r));
                (void)broker_answer(l->fd, n.id, -r);
        } else
                l->ctr->brokering++;
}

void agent_broker_adopt(struct agent *a, struct ctr *c) {
        const char *dir = json_string_value(json_object_get(c->state, "kubelet_dir"));
        json_t *v;
        size_t i;
        int fd;

        if (!c->spec || !c->spec->broker || !dir || !(c->kubelet_dir = strdup(dir)))
                return;
        /* Asked here, in the agent: the workers that serve its calls then inherit the answer. */
        (void)fuse_clone_crosses_userns();
        json_t *ids = json_object_get(c->state, "brokered_ids"),
               *uniques = json_object_get(c->state, "brokered_unique_ids");
        json_array_foreach(json_object_get(c->state, "brokered"), i, v) if (json_is_string(v))(void)
                brokered_add(c, json_string_value(v), ident_at(ids, uniques, i));
        fd = sys_pidfd_getfd(c->pidfd, LAUNCH_BROKER_FD);
        if (fd < 0 || agent_broker_listen(a, c, fd) < 0)
                log_msg(KM_LOG_WARNING, "container %s: mount broker: its listener is lost (%s); its mounts get ENOSYS",
                        c->name, strerror(fd < 0 ? -fd : EIO));
        /* Its kept worker is forked on its next call (server_take): an adopted container has made its mounts. */
}

void agent_broker_done(struct agent *a) {
        agent_userns_done(a);
        seccomp_program_done(&a->broker_filter);
}
