/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's container table and the epoll set behind it (see agent-containers.h). */
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <time.h>

#include "agent-containers.h"
#include "fileio.h"
#include "oci-runtime.h"
#include "secrets.h"
#include "syscalls.h"

int agent_watch(struct agent *a, int fd, struct watch *w) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };
        return epoll_ctl(a->epoll, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

void agent_unwatch(struct agent *a, int fd) {
        (void)epoll_ctl(a->epoll, EPOLL_CTL_DEL, fd, NULL);
}

void agent_unwatch_close(struct agent *a, int *fd) {
        if (*fd >= 0)
                agent_unwatch(a, *fd);
        closep(fd);
}

int agent_watch_pid(struct agent *a, pid_t pid, struct watch *w) {
        int fd = sys_pidfd_open(pid, 0), r;

        if (fd < 0)
                return fd;
        r = agent_watch(a, fd, w);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* ---- containers ----------------------------------------------------------- */

struct ctr *agent_find(struct agent *a, const char *name) {
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

void agent_ctr_server_end(struct agent *a, struct ctr *c) {
        if (c->server_pidfd >= 0)
                (void)sys_pidfd_send_signal(c->server_pidfd, SIGKILL, NULL, 0);
        closep(&c->server_pidfd);
        agent_unwatch_close(a, &c->server_sock);
        agent_unwatch_close(a, &c->server_timer);
        json_decref(c->server_call);
        c->server_call = NULL;
        if (c->server_replied != MAP_FAILED)
                (void)munmap((void *)c->server_replied, sizeof(*c->server_replied));
        c->server_replied = MAP_FAILED;
}

void agent_ctr_forget(struct agent *a, struct ctr *c) {
        for (struct ctr **p = &a->ctrs; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        agent_ctr_server_end(a, c);
        if (c->start.report_fd >= 0)
                a->starting--; /* (the agent ends) */
        agent_unwatch_close(a, &c->start.report_fd);
        agent_unwatch_close(a, &c->command_fd);
        agent_unwatch_close(a, &c->pidfd);
        agent_unwatch_close(a, &c->timer);
        closep(&c->dir_fd);
        if (c->spare)
                c->spare->ctr = NULL;
        c->spare = NULL;
        json_decref(TAKE_PTR(c->spare_config));
        if (c->config_process)
                a->configs_due--;
        json_decref(TAKE_PTR(c->config_process));
        start_pins_done(&c->pins);
        spec_free(c->spec);
        free(c->runtime);
        if (c->has_seccomp)
                seccomp_program_done(&c->seccomp);
        json_decref(c->state);
        /* Freed with c, after the batch of events (agent_ctr_free): one may still point at a listener. */
        for (struct broker_listener *l = c->listeners; l; l = l->next)
                agent_unwatch_close(a, &l->fd);
        km_strv_free(c->brokered);
        free(c->brokered_ids);
        free(c->kubelet_dir);
        c->brokered = NULL, c->brokered_ids = NULL, c->n_brokered = 0, c->kubelet_dir = NULL;
        c->spec = NULL, c->runtime = NULL, c->state = NULL, c->has_seccomp = false;
        c->forgotten = true;
        c->next = a->forgotten;
        a->forgotten = c;
}

int agent_state_mask(json_t *state) {
        static const char *const keys[] = { "command", "env" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                json_t *v = json_object_get(state, keys[i]);

                if (!json_is_array(v))
                        continue;
                v = streq(keys[i], "env") ? secret_mask_json_env(v) : secret_mask_json_argv(v);
                if (!v || json_object_set_new(state, keys[i], v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * state.json, and what ps shows, hold the command with its secrets masked
 * (THREATS 32): the state in memory is masked here, before its first write;
 * only the bundle's config.json (0600) keeps the real one, for the runtime.
 */
int agent_save_state(struct agent *a, struct ctr *c) {
        _cleanup_free_ char *text = NULL;
        struct km_error err = {};
        int r;

        r = agent_state_mask(c->state);
        if (r < 0)
                return r;
        text = json_dumps(c->state, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        r = write_file_replace(c->dir_fd, "state.json", text, strlen(text), 0600, &err);
        if (r < 0)
                log_msg(KM_LOG_WARNING, "container %s: %s", c->name, err.message);
        return r;
}

/*
 * A compiled copy of a filter.  Compiling takes milliseconds, more than the
 * rest of a container start: the last profile is kept (they are all the default one).
 */
static int agent_seccomp(struct agent *a, json_t *profile, struct seccomp_program *ret, struct km_error *err) {
        size_t size;
        int r;

        if (!a->seccomp_json || !json_equal(a->seccomp_json, profile)) {
                struct seccomp_program p = {};

                r = seccomp_compile(profile, &p, err);
                if (r < 0)
                        return r;
                seccomp_program_done(&a->seccomp_cached);
                json_decref(a->seccomp_json);
                a->seccomp_cached = p;
                a->seccomp_json = json_incref(profile);
        }
        size = a->seccomp_cached.prog.len * sizeof(struct sock_filter);
        ret->prog.len = a->seccomp_cached.prog.len;
        ret->prog.filter = malloc(size);
        if (!ret->prog.filter)
                return error_set(err, -ENOMEM, "seccomp");
        memcpy(ret->prog.filter, a->seccomp_cached.prog.filter, size);
        return 0;
}

/* A (new or adopted) container, with its spec and compiled filter for exec. */
struct ctr *agent_ctr_new(struct agent *a, const char *name, struct container_spec *spec, int dir_fd,
                          struct km_error *err) {
        struct ctr *c = calloc(1, sizeof(*c));
        int r;

        if (!c) {
                error_set(err, -ENOMEM, "container %s", name);
                return NULL;
        }
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->w.kind = WATCH_PID1;
        c->timer_w.kind = WATCH_TIMER;
        c->server_w.kind = WATCH_BROKER_SERVER;
        c->server_timer_w.kind = WATCH_BROKER_SERVER_TIMER;
        c->start_w.kind = WATCH_START;
        c->command_w.kind = WATCH_COMMAND;
        c->command_fd = c->hold_conn = -EBADF;
        c->start = (struct launch_pending){ .pid = -1, .report_fd = -EBADF };
        c->start_conn = -EBADF;
        c->pins = START_PINS_INIT;
        c->pidfd = c->timer = c->server_pidfd = c->server_sock = c->server_timer = -EBADF;
        c->server_replied = MAP_FAILED;
        c->dir_fd = dir_fd;
        c->spec = spec;
        for (size_t i = 0; i < ELEMENTSOF(c->waiters); i++)
                c->waiters[i] = -EBADF;
        c->next = a->ctrs;
        a->ctrs = c;
        if (spec && spec->seccomp) {
                r = agent_seccomp(a, spec->seccomp, &c->seccomp, err);
                if (r < 0) {
                        agent_ctr_forget(a, c);
                        return NULL;
                }
                c->has_seccomp = true;
                /* The same profile (json_equal): one tree for all, not one per container (~100 KB each). */
                json_decref(spec->seccomp);
                spec->seccomp = json_incref(a->seccomp_json);
        }
        return c;
}

void agent_ctr_free(struct ctr *c) {
        while (c->listeners) {
                struct broker_listener *l = c->listeners;

                c->listeners = l->next;
                free(l);
        }
        free(c);
}

int agent_ctr_watch(struct agent *a, struct ctr *c, pid_t pid, bool ours) {
        c->pid = pid;
        c->ours = ours;
        c->pidfd = agent_watch_pid(a, pid, &c->w);
        return c->pidfd < 0 ? c->pidfd : 0;
}

int agent_ctr_timer(struct agent *a, struct ctr *c, int ms) {
        struct itimerspec t = { .it_value = { ms / 1000, (long)(ms % 1000) * 1000000L } };

        if (c->timer < 0) {
                c->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (c->timer < 0 || agent_watch(a, c->timer, &c->timer_w) < 0)
                        return -errno;
        }
        return timerfd_settime(c->timer, 0, &t, NULL) < 0 ? -errno : 0;
}

void agent_ctr_signal(struct ctr *c, int sig) {
        if (c->pidfd >= 0)
                (void)sys_pidfd_send_signal(c->pidfd, sig, NULL, 0);
}

char *agent_runtime_root(struct agent *a) {
        char *root;

        return asprintf(&root, "%s/runtime", a->state_dir) < 0 ? NULL : root;
}

void agent_ctr_kill(struct agent *a, struct ctr *c) {
        _cleanup_free_ char *root = c->runtime ? agent_runtime_root(a) : NULL;

        /* Killing a runtime's monitor would leave the container running: the runtime kills it. */
        if (root && runtime_kill(c->runtime, root, c->name, SIGKILL, NULL) == 0)
                return;
        agent_ctr_signal(c, SIGKILL);
}

int agent_add_waiter(struct ctr *c, int conn) {
        for (size_t i = 0; i < ELEMENTSOF(c->waiters); i++)
                if (c->waiters[i] < 0) {
                        c->waiters[i] = conn;
                        return 0;
                }
        return -EBUSY;
}
