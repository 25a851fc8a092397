/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Spare containers (see agent-spare.h). */
#include <stdlib.h>
#include <sys/inotify.h>

#include "agent-protocol.h"
#include "agent-spare.h"
#include "state-dir.h"
#include "util.h"

void agent_spares_init(struct agent *a) {
        const char *env = getenv("KUBEMOUNT_SPARES");

        a->spares_off = env && streq(env, "0");
        for (size_t i = 0; i < AGENT_SPARE_KINDS; i++)
                a->spare_inotify[i] = -EBADF;
}

int agent_spare_inotify(struct agent *a, struct spare_kind *k) {
        int *fd = &a->spare_inotify[k - a->spares];

        if (*fd < 0 && (*fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
                *fd = -errno;
        return *fd;
}

/* What runs of one kind may differ in: at the top of a request, in its config, in its process. */
static const char *const own_request[] = { "name", "mount", "mount_targets", "timeout_ms", "hold", "config", NULL };
static const char *const own_config[] = { "process", NULL };
static const char *const own_process[] = { "args", NULL };

static bool listed(const char *const *keys, const char *key) {
        for (; *keys; keys++)
                if (streq(*keys, key))
                        return true;
        return false;
}

/* Whether objects x and y have the same members, those named in skip aside. */
static bool equal_but(json_t *x, json_t *y, const char *const *skip) {
        const char *key;
        json_t *v;

        if (!json_is_object(x) || !json_is_object(y))
                return false;
        json_object_foreach(x, key, v) {
                if (!listed(skip, key) && !json_equal(v, json_object_get(y, key)))
                        return false;
        }
        json_object_foreach(y, key, v) {
                if (!listed(skip, key) && !json_object_get(x, key))
                        return false;
        }
        return true;
}

/* Whether req is a run of kind k: all but its command, name, targets and timeout the same. */
static bool kind_matches(const struct spare_kind *k, json_t *req) {
        json_t *config = json_object_get(req, "config"), *kconfig = json_object_get(k->req, "config");

        return (json_object_get(req, "hold") != NULL) == k->held && equal_but(req, k->req, own_request) &&
               equal_but(config, kconfig, own_config) &&
               equal_but(json_object_get(config, "process"), json_object_get(kconfig, "process"), own_process);
}

/* Whether a spare can serve runs like req: not a detached run that logs, not one through crun or runc. */
static bool kind_serves(json_t *req) {
        const char *runtime = json_string_value(json_object_get(req, "runtime"));

        return (json_object_get(req, "hold") || !json_is_true(json_object_get(req, "detach"))) &&
               (!runtime || streq(runtime, "embedded"));
}

/* A spare's own request: req's, less its name, targets and timeout; its command a placeholder. */
static json_t *spare_request(json_t *req) {
        json_t *s = agent_request_copy(req), *hold = json_object_get(req, "hold");

        if (!s)
                return NULL;
        for (const char *const *key = (const char *const[]){ "name", "mount", "mount_targets", "timeout_ms", NULL };
             *key; key++)
                (void)json_object_del(s, *key);
        json_t *shown = json_object_get(json_object_get(json_object_get(req, "config"), "process"), "args");

        /* Never run: a run's claim brings its command.  The one config.json shows, not the held one. */
        if (hold &&
            json_object_set_new(s, "hold", json_pack("{s:O}", "args", shown ?: json_object_get(hold, "args"))) < 0) {
                json_decref(s);
                return NULL;
        }
        return s;
}

static void kind_clear_spare(struct agent *a, struct spare_kind *k) {
        if (k->ctr) {
                k->ctr->stopping = true;
                agent_ctr_kill(a, k->ctr);
                k->ctr->spare = NULL;
                k->ctr = NULL;
        }
}

static void kind_clear(struct agent *a, struct spare_kind *k) {
        kind_clear_spare(a, k);
        json_decref(k->req);
        *k = (struct spare_kind){};
}

/* Ready, or (report_fd >= 0) setting up: a run may wait for it. */
static bool spare_usable(struct ctr *c) {
        return c && c->pidfd >= 0 && (c->start.report_fd >= 0 || c->command_fd >= 0) && !c->stopping;
}

/*
 * Whether c is where a start would slow a client down: starting, between
 * its answer and its go, running a held command (its mount calls come), or
 * a run's command its client waits for.
 */
static bool in_critical_window(struct ctr *c) {
        return !c->spare &&
               (c->start.report_fd >= 0 || (c->hold_conn >= 0 && !c->held_go) || (c->held_go && c->command_fd >= 0) ||
                (!c->detached && c->pidfd >= 0) || c->brokering > 0 || c->execs > 0);
}

struct ctr *agent_spare_take(struct agent *a, json_t *req, uint64_t tree_kept) {
        struct spare_kind *k = NULL, *lru = &a->spares[0];

        if (a->spares_off || !kind_serves(req))
                return NULL;
        for (size_t i = 0; i < AGENT_SPARE_KINDS && !k; i++) {
                if (a->spares[i].req && kind_matches(&a->spares[i], req))
                        k = &a->spares[i];
                else if (!a->spares[i].req || (lru->req && a->spares[i].used_ms < lru->used_ms))
                        lru = &a->spares[i];
        }
        if (!k) {
                /* A new kind: in the slot used least lately (its spare, if any, is stopped). */
                json_t *s = spare_request(req);

                if (!s)
                        return NULL;
                kind_clear(a, lru);
                k = lru;
                k->req = s;
                k->held = json_object_get(req, "hold") != NULL;
        }
        k->used_ms = monotonic_ms();
        /*
         * Made from a tree checked before a change since, or from a root or a source its path no longer leads to
         * (start-pins.h): it goes, and the next one is made from what this run finds.
         */
        if (k->ctr &&
            (k->ctr->tree_kept != tree_kept ||
             (k->ctr->start.report_fd < 0 && !start_pins_hold(&k->ctr->pins, k->ctr->spec, proto_kubelet_dir(req))))) {
                log_msg(KM_LOG_DEBUG, "agent: spare %s: what it was made from changed since: dropped", k->ctr->name);
                kind_clear_spare(a, k);
                return NULL;
        }
        return spare_usable(k->ctr) ? k->ctr : NULL;
}

bool agent_spare_wanted(struct agent *a) {
        uint64_t now = monotonic_ms();

        if (a->spares_off || a->deferred || a->starting > 0)
                return false;
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (in_critical_window(c))
                        return false;
        for (size_t i = 0; i < AGENT_SPARE_KINDS; i++)
                if (a->spares[i].req && !a->spares[i].ctr && now - a->spares[i].used_ms < AGENT_SPARE_KEEP_MS)
                        return true;
        return false;
}

struct spare_kind *agent_spare_due(struct agent *a) {
        uint64_t now = monotonic_ms();

        for (size_t i = 0; i < AGENT_SPARE_KINDS; i++) {
                struct spare_kind *k = &a->spares[i];

                if (k->req && !k->ctr && now - k->used_ms < AGENT_SPARE_KEEP_MS)
                        return k;
        }
        return NULL;
}

void agent_spare_failed(struct spare_kind *k) {
        /* One that cannot start (its image gone, ids used up) is not tried again until its kind runs. */
        k->used_ms = 0;
}

json_t *agent_request_copy(json_t *req) {
        json_t *seccomp = json_object_get(json_object_get(json_object_get(req, "config"), "linux"), "seccomp");
        json_t *copy = json_deep_copy(req);

        /* One tree of it: the agent compiles a profile once, comparing by pointer first (json_equal). */
        if (copy && json_is_object(seccomp))
                (void)json_object_set_new(json_object_get(json_object_get(copy, "config"), "linux"), "seccomp",
                                          json_incref(seccomp));
        return copy;
}

bool agent_only_spares(struct agent *a) {
        for (struct ctr *c = a->ctrs; c; c = c->next)
                if (!c->spare)
                        return false;
        return true;
}

void agent_spares_done(struct agent *a) {
        for (size_t i = 0; i < AGENT_SPARE_KINDS; i++) {
                /* Nothing of an unclaimed one is kept: killed, and its state gone with the agent. */
                if (a->spares[i].ctr)
                        (void)state_container_remove(a->state_fd, a->spares[i].ctr->name, NULL);
                kind_clear(a, &a->spares[i]);
                closep(&a->spare_inotify[i]);
        }
}
