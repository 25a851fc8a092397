/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's reconciliation: at start-up, and on `kubemount gc`. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "agent-broker.h"
#include "agent-gc.h"
#include "agent-workers.h"
#include "agent-protocol.h"
#include "cgroup.h"
#include "state-dir.h"
#include "syscalls.h"

/* A mount that does not answer in this time is reported as hung; so many are looked at at once. */
#define GC_PROBE_TIMEOUT_MS 2000
#define GC_PROBES_PARALLEL 16
/* The whole mount check (a bound the probes' own keeps it well within). */
#define GC_WORKER_TIMEOUT_MS 60000

/* Whether the state's PID 1 is the live process it names (pid and start time both). */
static bool state_is_live(struct agent *a, json_t *state) {
        json_int_t pid = json_integer_value(json_object_get(state, "pid"));
        json_int_t start = json_integer_value(json_object_get(state, "starttime"));
        uint64_t now;

        return pid > 0 && state_proc_starttime(a->proc_fd, (pid_t)pid, &now) == 0 && (json_int_t)now == start;
}

static void mark_exited(json_t *state) {
        json_object_set_new(state, "status", json_string("exited"));
        json_object_set_new(state, "exit_code", json_null());
}

/* One container found in the state dir; true if its state changed. */
static bool adopt(struct agent *a, const char *name, json_t *state) {
        _cleanup_close_ int dir = state_container_dir(a->state_fd, name, false, NULL);
        _cleanup_(spec_freep) struct container_spec *spec = NULL;
        json_t *config = NULL;
        bool live =
                streq(json_string_value(json_object_get(state, "status")) ?: "", "running") && state_is_live(a, state);
        struct km_error err = {};
        struct ctr *c;

        if (dir < 0)
                return false;
        if (streq(json_string_value(json_object_get(state, "status")) ?: "", "spare")) {
                /* An earlier agent's spare ended with its socket (agent-spare.h). */
                (void)state_container_remove(a->state_fd, name, NULL);
                return false;
        }
        if (live && read_json_file(dir, "config.json", &config, NULL) == 0)
                (void)spec_from_json(config, &spec, &err);
        json_decref(config);
        c = agent_ctr_new(a, name, TAKE_PTR(spec), TAKE_FD(dir), &err);
        if (!c)
                return false;
        c->state = json_incref(state);
        /* A claimed spare's groups have the spare's name (ctr-NAME too: never a path). */
        const char *group = json_string_value(json_object_get(state, "cgroup"));
        if (group && strncmp(group, "ctr-", 4) == 0 && state_name_is_valid(group + 4))
                snprintf(c->cgroup, sizeof(c->cgroup), "%s", group);
        else
                snprintf(c->cgroup, sizeof(c->cgroup), "ctr-%s", name);
        c->detached = true;
        if (json_is_string(json_object_get(state, "runtime")))
                c->runtime = strdup(json_string_value(json_object_get(state, "runtime")));
        if (live && agent_ctr_watch(a, c, (pid_t)json_integer_value(json_object_get(state, "pid")), false) == 0) {
                agent_broker_adopt(a, c);
                return false;
        }
        if (streq(json_string_value(json_object_get(state, "status")) ?: "", "exited"))
                return false;
        mark_exited(c->state);
        (void)agent_save_state(a, c);
        return true;
}

void agent_reconcile(struct agent *a) {
        char **names = NULL;

        if (state_container_list(a->state_fd, &names, NULL) < 0)
                return;
        for (char **n = names; *n; n++) {
                _cleanup_close_ int dir = state_container_dir(a->state_fd, *n, false, NULL);
                json_t *state = NULL;

                if (dir >= 0 && read_json_file(dir, "state.json", &state, NULL) == 0)
                        (void)adopt(a, *n, state);
                json_decref(state);
        }
        km_strv_free(names);
}

static void action(json_t *actions, const char *what, const char *name, const char *detail) {
        json_array_append_new(actions, json_pack("{s:s, s:s, s:s?}", "action", what, "name", name, "detail", detail));
}

/* A routed mount's container whose exec of mount never came (its client died): an orphan after this. */
#define ROUTE_START_GRACE_MS 60000

void agent_release_orphans(struct agent *a, json_t *actions) {
        struct km_mount_table *t = NULL;
        uint64_t now = monotonic_ms();

        /*
         * Host FUSE helpers' groups (mount-PID) stay when their daemons end; else only the next helper removes
         * them.  A container's own goes when it exits; one left by an agent that was killed goes here.
         */
        if (a->cgroup_root >= 0) {
                cgroup_prune(a->cgroup_root, "mount-");
                cgroup_prune(a->cgroup_root, "ctr-");
        }
        for (struct ctr *c = a->ctrs, *next; c; c = next) {
                const char *target = json_string_value(json_object_get(json_object_get(c->state, "mount"), "target"));

                next = c->next;
                if (!target || c->stopping || c->execs > 0 || c->start.report_fd >= 0 || c->command_fd >= 0 ||
                    (c->pidfd >= 0 && c->mount_pending && now - c->started_ms < ROUTE_START_GRACE_MS))
                        continue;
                /* Read once, and only when a routed container is there (mountinfo never blocks on FUSE). */
                if (!t && km_mount_table_load(NULL, NULL, &t, NULL) < 0)
                        return;
                if (km_mount_table_find_target(t, target))
                        continue;
                if (c->pidfd < 0) {
                        /* Exited, and its dead mount is gone (gc, the kubelet's umount): no umount comes now. */
                        log_msg(KM_LOG_INFO, "agent: container %s served %s and has exited: removed", c->name, target);
                        if (actions)
                                action(actions, "released-orphan", c->name, target);
                        (void)state_container_remove(a->state_fd, c->name, NULL);
                        agent_ctr_forget(a, c);
                        continue;
                }
                log_msg(KM_LOG_INFO, "agent: container %s served %s, which is no longer mounted: removed", c->name,
                        target);
                if (actions)
                        action(actions, "released-orphan", c->name, target);
                c->stopping = c->remove_on_exit = true;
                agent_ctr_kill(a, c);
        }
        km_mount_table_free(t);
}

/*
 * One FUSE mount looked at in a thread of the gc worker: its daemon may be
 * stopped, or waiting for a hung server, and then the look never returns.
 * The result is read only after the thread wrote its index to report.
 */
struct probe {
        const char *target, *type, *kubelet_dir;
        size_t index;
        int report;
        uint64_t deadline_ms;
        bool go, started, finished, hung;
        bool dead;
        int umount_r;
        char message[KM_ERROR_MAX];
};

static void *probe_main(void *arg) {
        struct probe *p = arg;
        struct km_error err = {};
        int excode;

        /* Attributes from a forced sync: a dead FUSE root's cached ones would look fine. */
        p->dead = km_error_is_corrupted_mount(km_is_mount_point(NULL, p->target, NULL));
        if (p->dead) {
                /* In this thread (no timeout, no child process): the deadline bounds it. */
                p->umount_r = km_umount(NULL, p->target, p->kubelet_dir, KM_UMOUNT_CONFINE_REQUIRED, 0, &excode, &err);
                snprintf(p->message, sizeof(p->message), "%s", err.message);
        }
        (void)!write(p->report, &p->index, sizeof(p->index));
        return NULL;
}

static void probe_result(struct probe *p, json_t *actions) {
        char detail[KM_ERROR_MAX + 64];

        if (p->hung) {
                snprintf(detail, sizeof(detail),
                         "no answer in %d ms (its FUSE daemon is stopped, or waits for a hung server); left "
                         "mounted: kubemount umount --timeout=SECS forces it",
                         GC_PROBE_TIMEOUT_MS);
                action(actions, "hung-fuse", p->target, detail);
        } else if (!p->finished)
                action(actions, "check-failed", p->target, p->message);
        else if (p->dead && p->umount_r < 0)
                action(actions, "umount-failed", p->target, p->message);
        else if (p->dead)
                action(actions, "unmounted-dead-fuse", p->target, p->type);
}

/* Looks at the probes marked to go, GC_PROBES_PARALLEL at a time; each finishes or is hung at its deadline. */
static void probe_round(struct probe *probes, size_t n, int report[2], pthread_attr_t *attr) {
        size_t next = 0, running = 0, done;

        while (next < n || running > 0) {
                struct pollfd p = { .fd = report[0], .events = POLLIN };
                uint64_t now = monotonic_ms(), wait = GC_PROBE_TIMEOUT_MS;

                for (; next < n && running < GC_PROBES_PARALLEL; next++) {
                        struct probe *pr = &probes[next];
                        pthread_t th;

                        if (!pr->go)
                                continue;
                        pr->deadline_ms = now + GC_PROBE_TIMEOUT_MS;
                        pr->started = pthread_create(&th, attr, probe_main, pr) == 0;
                        if (pr->started)
                                running++;
                        else
                                snprintf(pr->message, sizeof(pr->message), "cannot start a thread to look at it");
                }
                for (size_t i = 0; i < next; i++) {
                        const struct probe *pr = &probes[i];
                        if (pr->go && pr->started && !pr->finished && !pr->hung && pr->deadline_ms < now + wait)
                                wait = pr->deadline_ms <= now ? 0 : pr->deadline_ms - now;
                }
                if (running > 0 && poll(&p, 1, (int)wait) > 0 && read(report[0], &done, sizeof(done)) == sizeof(done) &&
                    done < n && !probes[done].hung) {
                        probes[done].finished = true; /* (one that answers after its deadline stays hung) */
                        running--;
                }
                now = monotonic_ms();
                for (size_t i = 0; i < next; i++)
                        if (probes[i].go && probes[i].started && !probes[i].finished && !probes[i].hung &&
                            probes[i].deadline_ms <= now) {
                                probes[i].hung = true;
                                running--;
                        }
        }
}

/*
 * FUSE mounts below dir whose daemon is gone (ENOTCONN, ...): unmounted;
 * those that do not answer in time: reported as hung, never waited for.
 * In the gc worker, which exits right after: hung threads are left behind.
 */
static void gc_dead_mounts(const char *dir, json_t *actions) {
        struct km_mount_table *t = NULL;
        struct probe *probes;
        pthread_attr_t attr;
        size_t n = 0;
        int report[2];

        if (km_mount_table_load(NULL, NULL, &t, NULL) < 0 || pipe2(report, O_CLOEXEC) < 0 ||
            !(probes = calloc(km_mount_table_size(t) + 1, sizeof(*probes))))
                return;
        /* The latest mounted first: a dead mount below another goes before it. */
        for (size_t i = km_mount_table_size(t); i-- > 0;) {
                const struct km_mount *m = km_mount_table_at(t, i);
                const char *target = km_mount_target(m), *type = km_mount_fstype(m);

                if (!type || !startswith(type, "fuse") || !path_is_below(target, dir) || path_is_below(dir, target))
                        continue;
                probes[n] = (struct probe){
                        .target = target, .type = type, .kubelet_dir = dir, .index = n, .report = report[1], .go = true
                };
                n++;
        }
        (void)feature_available(0); /* loaded once, before the threads */
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        probe_round(probes, n, report, &attr);
        /* Looked at together, a dead mount whose dead submount was not gone yet: once more. */
        for (size_t i = 0; i < n; i++) {
                struct probe *p = &probes[i];
                p->go = p->finished && p->dead && p->umount_r == -EBUSY;
                if (p->go)
                        p->started = p->finished = false;
        }
        probe_round(probes, n, report, &attr);
        for (size_t i = 0; i < n; i++)
                probe_result(&probes[i], actions);
        /* The table and probes stay: a hung thread may still read them until the worker exits. */
}

/* In the gc worker: the mounts' part of the answer. */
static int gc_mounts_work(struct agent *a, json_t *ctx, int sock) {
        json_t *actions = json_array(), *m;
        int r;

        (void)a;
        if (!actions)
                return -ENOMEM;
        gc_dead_mounts(json_string_value(json_object_get(ctx, "kubelet_dir")), actions);
        m = json_pack("{s:o}", "actions", actions);
        r = m ? proto_send(sock, m, NULL, 0) : -ENOMEM;
        json_decref(m);
        return r;
}

/* In the loop: the state dir's actions and the worker's, to the client. */
static int gc_mounts_done(struct agent *a, int conn, json_t *ctx, json_t *answer, int *fds, size_t n_fds) {
        json_t *actions = json_object_get(ctx, "actions"), *m;
        char detail[128];

        (void)fds, (void)n_fds;
        if (json_is_array(json_object_get(answer, "actions")))
                json_array_extend(actions, json_object_get(answer, "actions"));
        else {
                snprintf(detail, sizeof(detail), "the mount check did not answer in %d ms", GC_WORKER_TIMEOUT_MS);
                action(actions, "check-failed", json_string_value(json_object_get(ctx, "kubelet_dir")), detail);
        }
        /* The containers whose dead mounts the worker just unmounted. */
        agent_release_orphans(a, actions);
        m = json_pack("{s:O}", "actions", actions);
        if (m)
                (void)proto_send(conn, m, NULL, 0);
        json_decref(m);
        return 0;
}

int agent_gc(struct agent *a, int conn, json_t *req, struct km_error *err) {
        const char *kubelet_dir = proto_kubelet_dir(req);
        json_t *actions = json_array(), *m;
        char **names = NULL;
        int r;

        if (!actions)
                return -ENOMEM;
        r = state_container_list(a->state_fd, &names, err);
        for (char **n = r < 0 ? NULL : names; n && *n; n++) {
                _cleanup_close_ int dir = state_container_dir(a->state_fd, *n, false, NULL);
                struct ctr *c = agent_find(a, *n);
                json_t *state = NULL;
                int rr = dir < 0 ? dir : read_json_file(dir, "state.json", &state, NULL);

                if (rr < 0 && c && c->state) {
                        /* Unreadable, but we know the container: write what we know. */
                        (void)agent_save_state(a, c);
                        action(actions, "rebuilt-state", *n, strerror(-rr));
                } else if (rr < 0) {
                        (void)state_container_remove(a->state_fd, *n, NULL);
                        action(actions, "removed-unreadable-state", *n, strerror(-rr));
                } else if (c && c->pidfd < 0 &&
                           streq(json_string_value(json_object_get(state, "status")) ?: "", "running")) {
                        (void)agent_save_state(a, c);
                        action(actions, "marked-exited", *n, NULL);
                } else if (!c && adopt(a, *n, state))
                        action(actions, "marked-exited", *n, NULL);
                json_decref(state);
        }
        km_strv_free(names);
        if (r < 0) {
                json_decref(actions);
                return r;
        }
        agent_release_orphans(a, actions);
        /* The mounts: a stopped FUSE daemon would block us, so a worker looks, and answers the client. */
        m = json_pack("{s:o, s:s}", "actions", actions, "kubelet_dir", kubelet_dir);
        if (!m)
                return error_set(err, -ENOMEM, "gc");
        r = agent_worker_start(a, conn, m, GC_WORKER_TIMEOUT_MS, gc_mounts_work, gc_mounts_done, NULL, 0);
        return r < 0 ? error_set(err, r, "gc: start the mount check") : 1;
}
