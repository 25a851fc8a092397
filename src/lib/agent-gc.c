/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's reconciliation: at start-up, and on `kubemount gc`. */
#include <fcntl.h>
#include <sys/stat.h>

#include "agent-internal.h"
#include "proto.h"
#include "state.h"

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
        bool live = streq(json_string_value(json_object_get(state, "status")) ?: "", "running") &&
                    state_is_live(a, state);
        struct km_error err = {};
        struct ctr *c;

        if (dir < 0)
                return false;
        if (live && state_read_json(dir, "config.json", &config, NULL) == 0)
                (void)spec_from_json(config, &spec, &err);
        json_decref(config);
        c = agent_ctr_new(a, name, TAKE_PTR(spec), TAKE_FD(dir), &err);
        if (!c)
                return false;
        c->state = json_incref(state);
        snprintf(c->cgroup, sizeof(c->cgroup), "ctr-%s", name);
        c->detached = true;
        if (json_is_string(json_object_get(state, "runtime")))
                c->runtime = strdup(json_string_value(json_object_get(state, "runtime")));
        if (live && agent_ctr_watch(a, c, (pid_t)json_integer_value(json_object_get(state, "pid")), false) == 0)
                return false;
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

                if (dir >= 0 && state_read_json(dir, "state.json", &state, NULL) == 0)
                        (void)adopt(a, *n, state);
                json_decref(state);
        }
        km_strv_free(names);
}

static void action(json_t *actions, const char *what, const char *name, const char *detail) {
        json_array_append_new(actions, json_pack("{s:s, s:s, s:s?}", "action", what, "name", name, "detail", detail));
}

/* FUSE mounts below dir whose daemon is gone (ENOTCONN, ...): unmounted. */
static void gc_dead_mounts(const char *dir, json_t *actions) {
        struct km_mount_table *t = NULL;

        if (km_mount_table_load(NULL, &t, NULL) < 0)
                return;
        for (size_t i = km_mount_table_size(t); i-- > 0;) {
                const struct km_mount *m = km_mount_table_at(t, i);
                const char *target = km_mount_target(m), *type = km_mount_fstype(m);
                struct km_error err = {};
                int excode;

                if (!type || !startswith(type, "fuse") || !path_is_below(target, dir) || path_is_below(dir, target))
                        continue;
                /* Attributes from a forced sync: a dead FUSE root's cached ones would look fine. */
                if (!km_error_is_corrupted_mount(km_is_mount_point(target, NULL)))
                        continue;
                if (km_umount(target, NULL, 0, 5000, &excode, &err) < 0)
                        action(actions, "umount-failed", target, err.message);
                else
                        action(actions, "unmounted-dead-fuse", target, type);
        }
        km_mount_table_free(t);
}

int agent_gc(struct agent *a, int conn, json_t *req, struct km_error *err) {
        const char *kubelet_dir = json_string_value(json_object_get(req, "kubelet_dir")) ?: "/var/lib/kubelet";
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
                int rr = dir < 0 ? dir : state_read_json(dir, "state.json", &state, NULL);

                if (rr < 0 && c && c->state) {
                        /* Unreadable, but we know the container: write what we know. */
                        (void)agent_save_state(a, c);
                        action(actions, "rebuilt-state", *n, strerror(-rr));
                } else if (rr < 0) {
                        (void)state_container_remove(a->state_fd, *n, NULL);
                        action(actions, "removed-unreadable-state", *n, strerror(-rr));
                } else if (c && c->pidfd < 0 && streq(json_string_value(json_object_get(state, "status")) ?: "", "running")) {
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
        gc_dead_mounts(kubelet_dir, actions);
        m = json_pack("{s:o}", "actions", actions);
        r = m ? proto_send(conn, m, NULL, 0) : -ENOMEM;
        json_decref(m);
        return r < 0 ? r : 0;
}
