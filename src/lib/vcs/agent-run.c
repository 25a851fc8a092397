/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's run: a container made and started (see agent-run.h). */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "agent-broker.h"
#include "agent-idmap.h"
#include "agent-protocol.h"
#include "agent-run.h"
#include "agent-spare.h"
#include "broker-policy.h"
#include "launch.h"
#include "mountpoint.h"
#include "oci-runtime.h"
#include "sd-protocol.h"
#include "state-dir.h"
#include "tree-watch.h"

static void iso_now(char buf[32]) {
        time_t t = time(NULL);
        struct tm tm;

        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

/*
 * Propagation reaches the host only from a bind of a shared mount: nothing
 * fails otherwise, the mounts just stay in the container.  Say so.
 */
static json_t *shared_source_warnings(const struct container_spec *s) {
        json_t *w = json_array();

        for (size_t i = 0; w && i < s->n_mounts; i++) {
                const struct spec_mount *m = &s->mounts[i];
                struct km_mount_info info;
                char text[9000];

                if ((m->propagation & ~MS_REC) != MS_SHARED || !m->source ||
                    mount_info_of(m->source, &info, NULL) < 0 || (info.propagation & KM_PROPAGATION_SHARED))
                        continue;
                snprintf(text, sizeof(text),
                         "%s is on a %s mount in the host: mounts made in the container below %s will not reach "
                         "the host or pods (kubemount setup --shared %s)",
                         m->source, info.propagation & KM_PROPAGATION_SLAVE ? "slave" : "private", m->destination,
                         m->source);
                json_array_append_new(w, json_string(text));
        }
        return w;
}

/* The same container through crun or runc: the state dir is the bundle, config.json in it. */
static int run_with_runtime(struct agent *a, struct ctr *c, const struct launch_request *lrq, pid_t *pid,
                            struct km_error *err) {
        _cleanup_free_ char *root = agent_runtime_root(a), *bundle = NULL;
        struct runtime_request rq = {
                .runtime = c->runtime,
                .id = c->name,
                .log_dir_fd = lrq->log_dir_fd,
                .cgroup_root_fd = lrq->cgroup_root_fd,
                .cgroup_name = lrq->cgroup_name,
                .spec = c->spec,
                .confine = lrq->confine,
        };

        if (!root || asprintf(&bundle, "%s/containers/%s", a->state_dir, c->name) < 0)
                return error_set(err, -ENOMEM, "container %s", c->name);
        if (mkdir(root, 0700) < 0 && errno != EEXIST)
                return error_set(err, -errno, "runtime state %s", root);
        rq.root = root;
        rq.bundle = bundle;
        memcpy(rq.stdio, lrq->stdio, sizeof(rq.stdio));
        return runtime_run(&rq, pid, err);
}

/* The image a container runs and the mount it serves (routing), as the client said: strings only. */
static void record_image_and_mount(struct ctr *c, json_t *req) {
        json_t *image = json_object_get(req, "image"), *mount = json_object_get(req, "mount");
        const char *digest = json_string_value(json_object_get(image, "digest"));
        const char *target = json_string_value(json_object_get(mount, "target"));
        const char *type = json_string_value(json_object_get(mount, "type"));

        if (digest) {
                json_object_set_new(c->state, "image",
                                    json_string(json_string_value(json_object_get(image, "ref")) ?: ""));
                json_object_set_new(c->state, "digest", json_string(digest));
        }
        if (target && target[0] == '/')
                json_object_set_new(c->state, "mount", json_pack("{s:s, s:s?}", "target", target, "type", type));
        if (json_array_size(json_object_get(req, "mount_targets")))
                json_object_set_new(c->state, "mount_targets", json_incref(json_object_get(req, "mount_targets")));
}

/* The audit trail, host privilege given out included (the agent's log: the journal under systemd). */
static void container_start_event(struct ctr *c, const char *name, pid_t pid) {
        char pid_s[16];
        const char *pairs[] = { "KUBEMOUNT_CONTAINER",
                                name,
                                "KUBEMOUNT_PID",
                                pid_s,
                                "KUBEMOUNT_PRIVILEGED",
                                c->spec->id_count ? "0" : "1",
                                "KUBEMOUNT_IMAGE",
                                json_string_value(json_object_get(c->state, "image")),
                                "KUBEMOUNT_DIGEST",
                                json_string_value(json_object_get(c->state, "digest")),
                                NULL };

        snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
        log_event(c->spec->id_count ? KM_LOG_INFO : KM_LOG_NOTICE, MESSAGE_ID_CONTAINER_START, pairs,
                  "container %s: started%s, pid %d", name,
                  c->spec->id_count ? "" : " privileged (host capabilities, mounts of its own)", (int)pid);
}

/* Whether live container c has a target that overlaps path: its --mount-target ones, or (routed too) its mount's. */
static const char *ctr_target_over(struct ctr *c, const char *path, bool routed_too) {
        const char *routed = json_string_value(json_object_get(json_object_get(c->state, "mount"), "target"));
        struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
        json_t *t;
        size_t i;

        /* Gone, or exited and not yet reaped by the loop (rm -f answers first). */
        if (c->pidfd < 0 || c->forgotten || poll(&p, 1, 0) > 0)
                return NULL;
        if (routed_too && routed && broker_targets_overlap(routed, path))
                return routed;
        json_array_foreach(json_object_get(c->state, "mount_targets"), i,
                           t) if (json_is_string(t) &&
                                  broker_targets_overlap(json_string_value(t), path)) return json_string_value(t);
        return NULL;
}

/*
 * A run container's --mount-target paths (its broker's scope): each a
 * pod's volume or a plugin's dir below the kubelet dir, and neither these
 * nor a routed mount's target another live container's.
 */
static int check_mount_targets(struct agent *a, json_t *req, struct km_error *err) {
        _cleanup_free_ char *dir = strdup(proto_kubelet_dir(req));
        json_t *targets = json_object_get(req, "mount_targets"), *t;
        const char *routed = json_string_value(json_object_get(json_object_get(req, "mount"), "target")), *why, *other;
        size_t i;

        if (!dir)
                return -ENOMEM;
        path_simplify(dir);
        if (targets && (!json_is_array(targets) || json_array_size(targets) > BROKER_TARGETS_MAX))
                return error_set_plain(err, -EINVAL, "at most %d --mount-target paths", BROKER_TARGETS_MAX);
        json_array_foreach(targets, i, t) {
                const char *path = json_string_value(t);

                if (!path || broker_target_check(dir, path, &why) < 0)
                        return error_set_plain(err, -EINVAL, "--mount-target %s: %s", path ?: "(not a string)",
                                               why ?: "is not a string");
                for (struct ctr *c = a->ctrs; c; c = c->next)
                        if ((other = ctr_target_over(c, path, true)))
                                return error_set_plain(err, -EBUSY, "--mount-target %s: container %s has %s", path,
                                                       c->name, other);
        }
        for (struct ctr *c = a->ctrs; routed && c; c = c->next)
                if ((other = ctr_target_over(c, routed, false)))
                        return error_set_plain(err, -EBUSY, "the mount at %s: container %s has %s", routed, c->name,
                                               other);
        return 0;
}

/*
 * An image's tree, checked against its record before it runs (tree-watch.h:
 * once while nothing changes it).  -ESTALE when it differs: the client
 * unpacks it again and asks once more.
 */
/* 0 when req has no image tree to check, > 0 once its tree matches (*ret_kept: tree_watch_check's), -errno. */
static int check_rootfs(struct agent *a, json_t *req, uint64_t *ret_kept, struct km_error *err) {
        json_t *check = json_object_get(req, "rootfs_check");
        const char *store = json_string_value(json_object_get(check, "store"));
        const char *manifest = json_string_value(json_object_get(check, "manifest"));
        const char *root =
                json_string_value(json_object_get(json_object_get(json_object_get(req, "config"), "root"), "path"));
        int r;

        *ret_kept = 0;
        if (!check)
                return 0;
        if (!store || !manifest || !root)
                return error_set_plain(err, -EINVAL, "run: rootfs_check needs a store and a manifest digest");
        r = tree_watch_check(a->trees, store, manifest, root, ret_kept, err);
        if (r == 0 && err)
                err->code = -ESTALE; /* its message says why */
        return r == 0 ? -ESTALE : r;
}

/*
 * PID 1 is set up (or the runtime started it): the container is recorded as
 * running and the client answered.  > 0 when the client stays (a run that
 * waits for the exit), 0 when it is done with, -errno (nothing is left).
 */
static int run_started(struct agent *a, struct ctr *c, int conn, pid_t pid, int listener, struct km_error *err) {
        uint64_t start = 0;
        int r = 0;

        if (listener >= 0 && (r = agent_broker_listen(a, c, listener)) < 0)
                error_set(err, r, "container %s: the mount broker", c->name);
        if (r >= 0 && c->pidfd < 0 && (r = agent_ctr_watch(a, c, pid, true)) < 0)
                error_set(err, r, "container %s: pidfd", c->name);
        if (r < 0) {
                (void)kill(pid, SIGKILL);
                if (c->pidfd < 0)
                        (void)waitpid(pid, NULL, 0); /* else the loop reaps it */
                return r;
        }
        if (c->spare) {
                /* Waits for a run to claim it (agent-spare.h): nobody to answer, nothing of it to tell. */
                json_object_set_new(c->state, "status", json_string("spare"));
                (void)agent_save_state(a, c);
                (void)agent_ctr_timer(a, c, AGENT_SPARE_KEEP_MS);
                return 0;
        }
        json_t *warnings = shared_source_warnings(c->spec);
        (void)state_proc_starttime(a->proc_fd, pid, &start);
        json_object_set_new(c->state, "status", json_string("running"));
        json_object_set_new(c->state, "pid", json_integer(pid));
        json_object_set_new(c->state, "starttime", json_integer((json_int_t)start));
        if (c->runtime)
                json_object_set_new(c->state, "runtime", json_string(c->runtime));
        json_object_set_new(c->state, "privileged", json_boolean(!c->spec->id_count));
        if (c->spec->broker)
                json_object_set_new(c->state, "mounts_allowed", json_from_strv(c->spec->broker_types));
        if (c->kubelet_dir)
                json_object_set_new(c->state, "kubelet_dir", json_string(c->kubelet_dir));
        container_start_event(c, c->name, pid);
        c->mount_pending = json_object_get(c->state, "mount") != NULL;
        c->started_ms = monotonic_ms();
        (void)agent_save_state(a, c);
        if (c->start_timeout_ms > 0 || c->timer >= 0)
                (void)agent_ctr_timer(a, c, c->start_timeout_ms); /* 0: a claimed spare's keep disarmed */
        if (conn >= 0)
                (void)proto_reply(conn, json_pack("{s:b, s:s, s:i, s:o}", "started", 1, "name", c->name, "pid",
                                                  (int)pid, "warnings", warnings ?: json_array()));
        else
                json_decref(warnings);
        /*
         * A routed mount's container calls mount(2) at once: its kept broker worker is forked now,
         * after the answer, while the client checks its target.  Any other's on its first call
         * (server_take): most never make one, and a fork per container is a cost of every start.
         */
        if (c->mount_pending)
                agent_broker_server_start(a, c);
        if (c->command_fd >= 0) {
                /* Held: its client says go (agent_op_go) on this connection, or hangs up and it ends. */
                if (conn < 0)
                        agent_ctr_kill(a, c);
                c->hold_conn = conn;
                return conn >= 0 ? 1 : 0;
        }
        if (c->detached || conn < 0)
                return 0;
        c->remove_on_exit = true;
        agent_add_waiter(c, conn);
        return 1;
}

/* A run that failed after its container was in the table: nothing of it is left. */
static void run_failed(struct agent *a, struct ctr *c) {
        (void)state_container_remove(a->state_fd, c->name, NULL);
        agent_ctr_forget(a, c);
}

unsigned agent_run_max_starts(void) {
        const char *env = getenv("KUBEMOUNT_MAX_STARTS");
        long cpus = sysconf(_SC_NPROCESSORS_ONLN), n;
        char *end = NULL;

        n = env && *env ? strtol(env, &end, 10) : 0;
        if (end && !*end && n > 0 && n <= 1024)
                return (unsigned)n;
        if (env && *env)
                log_msg(KM_LOG_WARNING, "agent: KUBEMOUNT_MAX_STARTS=%s is not 1..1024: the default is used", env);
        return cpus > 1 ? (unsigned)(2 * cpus) : 2;
}

/* A run kept at the end of *tail's list. */
static int defer_onto(struct deferred_run **tail, int conn, json_t *req, const int *fds, size_t n_fds,
                      struct km_error *err) {
        struct deferred_run *d;
        size_t n = 0;

        for (; *tail; tail = &(*tail)->next)
                n++;
        if (n >= AGENT_DEFERRED_MAX)
                return error_set_plain(err, -EAGAIN, "agent: %zu runs wait for their start already; try again", n);
        d = calloc(1, sizeof(*d));
        if (!d)
                return error_set(err, -ENOMEM, "agent");
        d->conn = conn;
        d->req = json_incref(req);
        /* The loop closes the request's own after this call. */
        for (size_t i = 0; i < n_fds && i < ELEMENTSOF(d->fds); i++) {
                d->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
                if (d->fds[i] < 0) {
                        agent_run_deferred_free(d);
                        return error_set(err, -errno, "agent: keep a waiting run's stdio");
                }
                d->n_fds++;
        }
        *tail = d;
        return 1;
}

int agent_run_defer(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds, struct km_error *err) {
        return defer_onto(&a->deferred, conn, req, fds, n_fds, err);
}

struct deferred_run *agent_run_next_deferred(struct agent *a) {
        struct deferred_run *d = a->deferred;

        if (!d || a->starting >= a->max_starts)
                return NULL;
        a->deferred = d->next;
        return d;
}

void agent_run_deferred_free(struct deferred_run *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n_fds; i++)
                close(d->fds[i]);
        json_decref(d->req);
        free(d);
}

void agent_run_conn_gone(struct agent *a, int conn) {
        for (struct deferred_run **p = &a->deferred; *p;)
                if ((*p)->conn == conn) {
                        struct deferred_run *d = *p;
                        *p = d->next;
                        agent_run_deferred_free(d);
                } else
                        p = &(*p)->next;
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (c->claim_waiter && c->claim_waiter->conn == conn)
                        agent_run_deferred_free(TAKE_PTR(c->claim_waiter));
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (c->start_conn == conn) {
                        c->start_conn = -EBADF;
                        /* Its run's client is gone: a run that is not detached ends with it, as once running. */
                        if (!c->detached || c->start.hold)
                                agent_ctr_kill(a, c);
                } else if (c->hold_conn == conn) {
                        /* Before its go nobody will say it: it ends.  After, its command runs on, and it stays. */
                        c->hold_conn = -EBADF;
                        if (!c->held_go)
                                agent_ctr_kill(a, c);
                }
}

int agent_run_start_done(struct agent *a, struct ctr *c, int *ret_conn) {
        struct km_error err = {};
        int listener = -EBADF, r;

        *ret_conn = TAKE_FD(c->start_conn);
        if (c->claim_waiter) {
                /* First in line: it claims this spare now, or (the spare failed) starts as any run. */
                c->claim_waiter->next = a->deferred;
                a->deferred = TAKE_PTR(c->claim_waiter);
        }
        agent_unwatch(a, c->start.report_fd);
        a->starting--;
        r = launch_container_finish(&c->start, c->spec->broker ? &listener : NULL,
                                    c->start.hold ? &c->command_fd : NULL, &err);
        if (r >= 0)
                r = run_started(a, c, *ret_conn, c->start.pid, listener, &err);
        if (r < 0) {
                if (*ret_conn >= 0)
                        (void)proto_send_error(*ret_conn, err.code < 0 ? err.code : r,
                                               err.message[0] ? err.message : strerror(-r));
                run_failed(a, c);
        }
        return r;
}

/*
 * The spec of config, or of a held run: config with the held command's args
 * (and env, if given) in its process, checked as the config's own are.
 */
static int held_spec(json_t *config, json_t *hold, struct container_spec **ret, struct km_error *err) {
        _cleanup_json_ json_t *c = NULL, *p = NULL;
        json_t *env = json_object_get(hold, "env");

        if (!hold)
                return spec_from_json(config, ret, err);
        if (!json_is_object(hold) || !json_is_array(json_object_get(hold, "args")))
                return error_set_plain(err, -EINVAL, "run: a held command needs its args");
        c = json_copy(config);
        p = json_copy(json_object_get(config, "process"));
        if (!c || !p || json_object_set_new(p, "args", json_incref(json_object_get(hold, "args"))) < 0 ||
            (env && json_object_set_new(p, "env", json_incref(env)) < 0) ||
            json_object_set_new(c, "process", json_incref(p)) < 0)
                return error_set(err, -ENOMEM, "run");
        return spec_from_json(c, ret, err);
}

static int held_send_go(struct ctr *c, struct km_error *err) {
        if (send(c->command_fd, "g", 1, MSG_NOSIGNAL) != 1)
                return error_set(err, -errno, "go: container %s: its PID 1", c->name);
        return 0;
}

/* c's held command was told to start (held_send_go): conn is answered when it ends. */
static int held_went(struct agent *a, struct ctr *c, int conn, struct km_error *err) {
        if (agent_watch(a, c->command_fd, &c->command_w) < 0 || agent_add_waiter(c, conn) < 0) {
                agent_ctr_kill(a, c);
                return error_set(err, -ENOMEM, "go: container %s", c->name);
        }
        c->held_go = true;
        c->mount_pending = false;
        /* Not staying: it ends with its command, and its client is answered then, with it gone. */
        c->remove_on_exit |= !c->held_stays;
        return 1;
}

/* The held command of c starts; conn is answered when it ends. */
static int held_go(struct agent *a, struct ctr *c, int conn, struct km_error *err) {
        int r = held_send_go(c, err);

        return r < 0 ? r : held_went(a, c, conn, err);
}

int agent_op_go(struct agent *a, int conn, json_t *req, struct km_error *err) {
        const char *name = proto_string(req, "name");
        struct ctr *c = name ? agent_find(a, name) : NULL;

        if (!c || c->command_fd < 0 || c->held_go || c->hold_conn != conn)
                return error_set_plain(err, -EINVAL, "go: container %s holds no command for this client",
                                       name ?: "(no name)");
        return held_go(a, c, conn, err);
}

/*
 * Whether c's client is answered at its command's exit code rather than at
 * PID 1's exit, 0.4 ms later (the kernel tears its namespaces down first):
 * PID 1 ends with the command, nothing of it stays, and its name was made
 * here (no run may come for it again), its root no overlay (whose layer,
 * in its state dir, PID 1's namespace may still hold).
 */
static bool answers_at_status(const struct ctr *c) {
        return !c->held_stays && c->remove_on_exit && !c->detached && !c->named && !c->spec->root_overlay;
}

int agent_run_command_done(struct agent *a, struct ctr *c, int *ret_code) {
        int code = -1, conn = c->hold_conn;
        ssize_t n = recv(c->command_fd, &code, sizeof(code), MSG_DONTWAIT);

        *ret_code = -1;
        agent_unwatch_close(a, &c->command_fd);
        c->hold_conn = -EBADF;
        if (n == sizeof(code) && code >= 0 && answers_at_status(c)) {
                /* Its record first, as at PID 1's exit: whoever is answered finds it gone. */
                (void)state_container_remove(a->state_fd, c->name, NULL);
                c->answered = true;
                *ret_code = code;
                return -EBADF;
        }
        /* No code (PID 1 died), or PID 1 ends with the command: its exit answers the client (a waiter). */
        if (conn < 0 || n != sizeof(code) || !c->held_stays)
                return -EBADF;
        for (size_t i = 0; i < ELEMENTSOF(c->waiters); i++)
                if (c->waiters[i] == conn)
                        c->waiters[i] = -EBADF;
        (void)proto_reply(conn, json_pack("{s:i, s:b}", "exit", code, "timed_out", false));
        return conn;
}

/* What of a run's request c keeps: whether it is detached, whether its held command's PID 1 stays, its timeout. */
static void ctr_take_request(struct ctr *c, json_t *req) {
        json_int_t timeout_ms = json_integer_value(json_object_get(req, "timeout_ms"));

        c->detached = json_is_true(json_object_get(req, "detach"));
        c->named = json_object_get(req, "name") != NULL;
        c->held_stays = json_is_true(json_object_get(json_object_get(req, "hold"), "stays"));
        c->start_timeout_ms = timeout_ms > 0 && timeout_ms < INT_MAX ? (int)timeout_ms : 0;
}

/*
 * The container of req, made and its PID 1 started (answered when it
 * reports: agent_run_start_done); or, with kind, a spare of that kind
 * (req its own request, no client, no stdio yet).
 */
static int run_start(struct agent *a, int conn, json_t *req, const int *fds, const char *name, struct spare_kind *kind,
                     struct km_error *err) {
        bool detach = json_is_true(json_object_get(req, "detach"));
        json_t *hold = json_object_get(req, "hold");
        const char *runtime = proto_string(req, "runtime");
        _cleanup_(spec_freep) struct container_spec *spec = NULL;
        _cleanup_free_ char *config = NULL;
        _cleanup_close_ int dir = -EBADF;
        char created[32];
        struct ctr *c;
        int r;

        if ((r = agent_idmap_assign(a, json_object_get(req, "config"), err)) < 0)
                return r;
        r = held_spec(json_object_get(req, "config"), hold, &spec, err);
        if (r < 0)
                return r;
        dir = state_container_dir(a->state_fd, name, true, err);
        if (dir < 0)
                return dir;
        config = json_dumps(json_object_get(req, "config"), JSON_INDENT(2));
        if (!config || (r = write_file_replace(dir, "config.json", config, strlen(config), 0600, err)) < 0) {
                (void)state_container_remove(a->state_fd, name, NULL);
                return config ? r : -ENOMEM;
        }
        c = agent_ctr_new(a, name, TAKE_PTR(spec), TAKE_FD(dir), err);
        if (!c) {
                (void)state_container_remove(a->state_fd, name, NULL);
                return err->code;
        }
        if (runtime && !streq(runtime, "embedded") && !(c->runtime = runtime_resolve(runtime, err))) {
                run_failed(a, c);
                return err->code;
        }
        snprintf(c->cgroup, sizeof(c->cgroup), "ctr-%s", name);
        ctr_take_request(c, req);
        iso_now(created);
        c->state =
                json_pack("{s:s, s:s, s:s, s:O, s:s, s:b}", "name", name, "status", "creating", "created", created,
                          "command",
                          json_object_get(json_object_get(req, "config"), "process")
                                  ? json_object_get(json_object_get(json_object_get(req, "config"), "process"), "args")
                                  : json_null(),
                          "rootfs", c->spec->root_path, "detached", detach);
        if (!c->state || (kind && !(c->spare_config = json_incref(json_object_get(req, "config"))))) {
                run_failed(a, c);
                return error_set(err, -ENOMEM, "container %s", name);
        }
        if (kind) {
                c->spare = kind;
                c->remove_on_exit = true; /* unclaimed, nothing of it stays */
                kind->ctr = c;
                /* Its groups keep this name once it is claimed (a v2 group cannot be renamed). */
                json_object_set_new(c->state, "cgroup", json_string(c->cgroup));
        }
        /* Its targets count from now: another run for them while this one starts finds them taken. */
        record_image_and_mount(c, req);
        if (c->spec->id_count && c->runtime) {
                run_failed(a, c);
                return error_set_plain(err, -EOPNOTSUPP,
                                       "container %s: an unprivileged container needs kubemount's own launcher "
                                       "(its mount broker): add --privileged to run it with %s",
                                       name, c->runtime);
        }
        int devnull3[3] = { a->devnull, a->devnull, a->devnull };
        const struct seccomp_program *broker = NULL;
        int userns = -EBADF;
        pid_t pid;
        struct launch_request rq = {
                .spec = c->spec,
                .seccomp = c->has_seccomp ? &c->seccomp : NULL,
                .host_mntns_fd = a->host_ns,
                .template_mntns_fd = a->template_ns,
                /* A short run lives in the agent's cgroup (not its caller's); a daemon gets its own. */
                .cgroup_root_fd = a->cgroup_root,
                .cgroup_name = detach ? c->cgroup : NULL,
                /* A held command's output is its client's; what it leaves running writes there too, or nowhere. */
                .log_dir_fd = detach && !hold && !kind ? c->dir_fd : -EBADF,
                .state_dir_fd = c->dir_fd,
                .confine = proto_kubelet_dir(req),
                .hold = hold != NULL || kind,
                .stays = c->held_stays,
                .spare = kind != NULL,
        };
        memcpy(rq.stdio, (detach && !hold) || kind ? devnull3 : fds, sizeof(rq.stdio));
        r = agent_broker_prepare(a, c, rq.confine, &userns, &broker, err);
        /* A spare is set up from what it pins, to be claimed only while its paths still lead there. */
        if (r >= 0 && kind && c->spec->root_overlay && !json_object_get(req, "rootfs_check"))
                r = error_set_plain(err, -EOPNOTSUPP, "an overlay over an unwatched tree");
        if (r >= 0 && kind &&
            (r = start_pins_open(&c->pins, c->spec, rq.confine, agent_spare_inotify(a, kind), err)) >= 0)
                rq.pinned_fds = c->pins.fds;
        rq.userns_fd = userns;
        rq.broker = broker;
        if (r >= 0 && c->runtime && rq.hold)
                r = error_set_plain(err, -EOPNOTSUPP, "container %s: a held command needs kubemount's own launcher",
                                    name);
        if (r >= 0 && c->runtime) {
                /* crun or runc: it returns once the container runs. */
                r = run_with_runtime(a, c, &rq, &pid, err);
                if (r >= 0)
                        r = run_started(a, c, conn, pid, -EBADF, err);
                if (r < 0)
                        run_failed(a, c);
                return r;
        }
        if (r >= 0)
                r = launch_container_start(&rq, &c->start, err);
        start_pins_release(&c->pins); /* its trees are cloned: kept, they would keep their mounts busy */
        /* Watched from now: a PID 1 that dies while it sets up is reaped (agent.c answers the run then). */
        if (r >= 0 && (r = agent_ctr_watch(a, c, c->start.pid, true)) < 0) {
                error_set(err, r, "container %s: pidfd", name);
                (void)kill(c->start.pid, SIGKILL);
                (void)waitpid(c->start.pid, NULL, 0);
        }
        if (r >= 0 && (r = agent_watch(a, c->start.report_fd, &c->start_w)) < 0)
                error_set(err, r, "container %s: its start", name);
        if (r < 0) {
                closep(&c->start.report_fd);
                if (c->pidfd >= 0)
                        agent_ctr_kill(a, c);
                run_failed(a, c);
                return r;
        }
        c->start_conn = conn;
        a->starting++;
        return 1; /* answered when PID 1 reports: agent_run_start_done() */
}

/*
 * Spare c (agent-spare.h) becomes the container req asks for: its command,
 * env and stdio sent to its PID 1, its state dir renamed, its state and
 * config.json req's.  0 when it cannot be (c is stopped; req starts as
 * usual), else as a started run: answered now.  What the client does not
 * wait for (config.json) comes after its answer, or its command's go.
 */
static int run_claim(struct agent *a, struct ctr *c, int conn, json_t *req, const int *fds, const char *name,
                     struct km_error *err) {
        json_t *hold = json_object_get(req, "hold"),
               *process = json_object_get(json_object_get(req, "config"), "process");
        _cleanup_(km_strv_freep) char **args = NULL, **env = NULL;
        char created[32];
        int r;

        /* Checked as a run of its own would be; the rest of its spec is the spare's, of the same kind. */
        r = spec_command(json_object_get(hold ?: process, "args"), json_object_get(hold, "env"), &args, &env, err);
        if (r < 0)
                return r;
        if (launch_claim(c->command_fd, args, env, json_is_true(json_object_get(hold, "stays")), fds) < 0 ||
            state_container_rename(a->state_fd, c->name, name) < 0 || (!hold && held_send_go(c, NULL) < 0)) {
                c->stopping = true;
                agent_ctr_kill(a, c);
                return 0;
        }
        log_msg(KM_LOG_DEBUG, "agent: run %s: spare %s claimed", name, c->name);
        c->spare->ctr = NULL;
        c->spare = NULL;
        c->remove_on_exit = false;
        start_pins_done(&c->pins);
        snprintf(c->name, sizeof(c->name), "%s", name);
        km_strv_free(c->spec->args);
        c->spec->args = TAKE_PTR(args);
        if (env) {
                km_strv_free(c->spec->env);
                c->spec->env = TAKE_PTR(env);
        }
        ctr_take_request(c, req);
        iso_now(created);
        json_object_set_new(c->state, "name", json_string(name));
        json_object_set_new(c->state, "created", json_string(created));
        json_object_set_new(c->state, "command", json_incref(json_object_get(process, "args")) ?: json_null());
        record_image_and_mount(c, req);
        r = run_started(a, c, conn, c->pid, -EBADF, err);
        /* Not held: its command went already, its client waits for the exit. */
        if (r > 0 && !hold && (r = held_went(a, c, conn, err)) > 0)
                c->hold_conn = -EBADF;
        if (!c->forgotten && process && !c->config_process) {
                c->config_process = json_incref(process);
                a->configs_due++;
        }
        return r;
}

void agent_run_configs_write(struct agent *a) {
        for (struct ctr *c = a->ctrs; c && a->configs_due; c = c->next) {
                if (!c->config_process)
                        continue;
                json_t *config = json_copy(c->spare_config);
                _cleanup_free_ char *text =
                        config && !json_object_set_new(config, "process", json_incref(c->config_process))
                                ? json_dumps(config, JSON_INDENT(2))
                                : NULL;

                json_decref(config);
                if (text)
                        (void)write_file_replace(c->dir_fd, "config.json", text, strlen(text), 0600, NULL);
                json_decref(TAKE_PTR(c->config_process));
                json_decref(TAKE_PTR(c->spare_config));
                a->configs_due--;
        }
}

int agent_run_spare_start(struct agent *a, struct spare_kind *kind) {
        _cleanup_json_ json_t *req = agent_request_copy(kind->req); /* its id range is written into it */
        struct km_error err = {};
        uint64_t kept = 0;
        char name[32];
        int r;

        snprintf(name, sizeof(name), "spare-%u", ++a->spare_serial);
        if (agent_find(a, name) || state_container_remove(a->state_fd, name, NULL) < 0)
                return -EEXIST;
        /* The tree it runs from as a run would check it; a claim takes it only under the same kept check. */
        r = req ? check_rootfs(a, req, &kept, &err) : -ENOMEM;
        if (r >= 0)
                r = run_start(a, -EBADF, req, NULL, name, kind, &err);
        if (r >= 0 && kind->ctr)
                kind->ctr->tree_kept = kept;
        if (r < 0)
                log_msg(KM_LOG_DEBUG, "agent: spare %s: %s", name, err.message);
        return r;
}

/* The default profile a client names (SECCOMP_DEFAULT_NAME) is the agent's one tree of it. */
static int seccomp_by_name(struct agent *a, json_t *req, struct km_error *err) {
        json_t *linux_ = json_object_get(json_object_get(req, "config"), "linux");
        const char *name = json_string_value(json_object_get(linux_, "seccomp"));

        if (!name)
                return 0;
        if (!streq(name, SECCOMP_DEFAULT_NAME))
                return error_set_plain(err, -EINVAL, "run: config.json: linux.seccomp: no profile named '%s'", name);
        if (!a->seccomp_default && !(a->seccomp_default = seccomp_default_profile()))
                return error_set(err, -ENOMEM, "run: the default seccomp profile");
        if (json_object_set_new(linux_, "seccomp", json_incref(a->seccomp_default)) < 0)
                return error_set(err, -ENOMEM, "run");
        return 0;
}

int agent_op_run(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds, struct km_error *err) {
        bool detach = json_is_true(json_object_get(req, "detach"));
        json_t *hold = json_object_get(req, "hold");
        const char *name = proto_string(req, "name");
        uint64_t kept;
        struct ctr *c;
        char generated[32];
        int r;

        if (a->starting >= a->max_starts)
                return agent_run_defer(a, conn, req, fds, n_fds, err);
        if (!name) {
                snprintf(generated, sizeof(generated), "run-%d-%lx", (int)getpid(), (unsigned long)random());
                name = generated;
        }
        if (!state_name_is_valid(name))
                return error_set_plain(err, -EINVAL, "invalid container name '%s'", name);
        c = agent_find(a, name);
        if (c && c->pidfd >= 0)
                return error_set_plain(err, -EEXIST, "container %s is running", name);
        if (c) {
                /* An exited one of that name (a retry after a crash): its state makes way. */
                (void)state_container_remove(a->state_fd, name, NULL);
                agent_ctr_forget(a, c);
        }
        if (hold && !detach)
                return error_set_plain(err, -EINVAL, "run: a held command's container is detached");
        if ((!detach || hold) && n_fds != 3)
                return error_set_plain(err, -EINVAL, "run: stdin, stdout and stderr are needed");
        if ((!detach || hold) && (r = proto_refuse_terminals("run", fds, n_fds, err)) < 0)
                return r;
        if ((r = seccomp_by_name(a, req, err)) < 0 || (r = check_mount_targets(a, req, err)) < 0 ||
            (r = check_rootfs(a, req, &kept, err)) < 0)
                return r;
        c = agent_spare_take(a, req, kept);
        /* Its spare is half set up already: this run waits for it rather than start from nothing. */
        if (c && c->start.report_fd >= 0 && !c->claim_waiter)
                return defer_onto(&c->claim_waiter, conn, req, fds, n_fds, err);
        if (c && c->start.report_fd < 0 && (r = run_claim(a, c, conn, req, fds, name, err)) != 0)
                return r;
        return run_start(a, conn, req, fds, name, NULL, err);
}
