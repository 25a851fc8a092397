/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount status: routing at a glance (issue 11, point 5). */
#include <pthread.h>
#include <time.h>

#include "cli.h"
#include "route-internal.h"
#include "vcs-route.h"

static const char status_help[] =
        "Usage: kubemount [GLOBAL OPTIONS] status [--json]\n"
        "\n"
        "Routing at a glance, in the host mount namespace:\n"
        "  propagation  whether the kubelet dir is on a shared mount (kubemount check)\n"
        "  agent        whether the VCS agent answers (status never starts one)\n"
        "  mapping      each type of the table: who mounts it now (host or container)\n"
        "               and why; \"(privileged)\" when its containers hold host\n"
        "               capabilities (the entry's \"privileged\": true)\n"
        "  mounts       each routed mount: its container, image, digest, and health:\n"
        "               ok, corrupted (its FUSE daemon is gone: ENOTCONN), hung (no\n"
        "               answer in 2 s), not-mounted (gc releases the container), or\n"
        "               stopped (the container ended, the mount may be left);\n"
        "               \"(privileged)\" when the container holds host capabilities\n"
        "  images       the images in the store\n"
        "\n"
        "Exit status: 0 healthy, 1 something above is not (each named), 2 usage.\n";

#define PROBE_TIMEOUT_MS 2000

struct probe {
        const struct km_host *host;
        int result;
        char target[]; /* its own copy: a hung probe outlives the list it came from */
};

static void *probe_main(void *arg) {
        struct probe *p = arg;
        p->result = km_is_mount_point(p->host, p->target, NULL);
        return NULL;
}

/* A routed mount's health; a stopped daemon would block a look forever, so a thread looks, for so long. */
static const char *mount_health(struct cli *cli, const char *target, bool running) {
        struct probe *p = calloc(1, sizeof(*p) + strlen(target) + 1);
        struct timespec until;
        pthread_t th;

        if (!p)
                return "unknown";
        p->host = cli->host;
        p->result = -ETIMEDOUT;
        strcpy(p->target, target);
        if (pthread_create(&th, NULL, probe_main, p) != 0) {
                free(p);
                return "unknown";
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += PROBE_TIMEOUT_MS / 1000;
        if (pthread_timedjoin_np(th, NULL, &until) != 0) {
                pthread_detach(th); /* p stays with it: the process exits soon */
                return "hung";
        }
        int r = p->result;
        free(p);
        if (km_error_is_corrupted_mount(r))
                return "corrupted";
        if (r == 0)
                return "not-mounted";
        if (r < 0)
                return "unknown";
        return running ? "ok" : "stopped";
}

static json_t *mapping_json(struct cli *cli, bool *healthy) {
        _cleanup_(km_router_freep) struct km_router *r = NULL;
        const struct vcs_map *m;
        json_t *a = json_array();
        struct km_error err = {};

        if (!a || cli_router_new(cli, &r) < 0 || router_map(r, &m, &err) < 0) {
                cli_error("status: the type table: %s", err.message[0] ? err.message : "out of memory");
                *healthy = false;
                return a;
        }
        *healthy &= m->n_warnings == 0;
        for (size_t i = 0; i < m->n_warnings; i++)
                json_array_append_new(a, json_pack("{s:s}", "warning", m->warnings[i]));
        for (size_t i = 0; i < m->n; i++) {
                const struct vcs_entry *e = &m->entries[i];
                struct route_decision d;

                if (route_decide(r, e->type, &d, &err) < 0)
                        continue;
                json_array_append_new(a,
                                      json_pack("{s:s, s:s, s:s, s:s?, s:b, s:s}", "type", e->type, "route",
                                                route_kind_to_string(d.route), "policy", vcs_policy_to_string(d.policy),
                                                "image", e->image, "privileged", e->privileged, "reason", d.reason));
        }
        return a;
}

/* The agent's containers that serve mounts, with their health; *alive whether an agent answered. */
static json_t *mounts_json(struct cli *cli, bool *alive, bool *healthy) {
        _cleanup_(km_agent_freep) struct km_agent *a = NULL;
        _cleanup_free_ char *text = NULL;
        json_t *out = json_array(), *doc = NULL, *e, *item;
        size_t i;

        *alive = km_agent_new(cli->host, NULL, &a) >= 0 && vcs_agent_alive(a) > 0;
        if (!*alive || km_vcs_list(a, &text, NULL) < 0 || !(doc = json_loads(text, 0, NULL)))
                return out;
        json_array_foreach(json_object_get(doc, "containers"), i, e) {
                json_t *m = json_object_get(e, "mount");
                const char *target = json_string_value(json_object_get(m, "target"));
                const char *health;

                if (!target)
                        continue;
                health = mount_health(cli, target, json_is_true(json_object_get(e, "running")));
                *healthy &= streq(health, "ok");
                item = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:s}", "target", target, "type",
                                 json_object_get(m, "type"), "container", json_object_get(e, "name"), "image",
                                 json_object_get(e, "image"), "digest", json_object_get(e, "digest"), "health", health);
                /* As the agent recorded it; an older agent's state has none, and neither has this. */
                if (item && json_is_boolean(json_object_get(e, "privileged")))
                        json_object_set_new(item, "privileged",
                                            json_boolean(json_is_true(json_object_get(e, "privileged"))));
                json_array_append_new(out, item);
        }
        json_decref(doc);
        return out;
}

/* The store's images (the store is $KUBEMOUNT_STORE_DIR's: the registry settings play no part). */
static json_t *images_json(struct cli *cli) {
        _cleanup_free_ char *text = NULL;
        json_t *doc = NULL, *list;

        if (km_image_list(cli->host, NULL, &text, NULL) >= 0)
                doc = json_loads(text, 0, NULL);
        list = json_incref(json_object_get(doc, "images")) ?: json_array();
        json_decref(doc);
        return list;
}

static void print_text(json_t *s) {
        json_t *p = json_object_get(s, "propagation"), *e;
        size_t i;

        printf("propagation: %s\n", json_string_value(json_object_get(p, "message")) ?: "?");
        printf("agent:       %s\n", json_is_true(json_object_get(s, "agent")) ? "running" : "not running");
        printf("\n%-20s %-10s %s\n", "TYPE", "ROUTE", "WHY");
        json_array_foreach(json_object_get(s, "mapping"), i, e) {
                const char *route = json_string_value(json_object_get(e, "route")) ?: "?";
                bool privileged = json_is_true(json_object_get(e, "privileged")) && streq(route, "container");

                if (json_object_get(e, "warning"))
                        printf("warning: %s\n", json_string_value(json_object_get(e, "warning")));
                else
                        printf("%-20s %-10s %s%s\n", json_string_value(json_object_get(e, "type")), route,
                               json_string_value(json_object_get(e, "reason")), privileged ? " (privileged)" : "");
        }
        printf("\n%-12s %-24s %-19s %s\n", "HEALTH", "CONTAINER", "DIGEST", "MOUNT");
        json_array_foreach(json_object_get(s, "mounts"), i, e)
                printf("%-12s %-24s %-19.19s %s on %s%s\n", json_string_value(json_object_get(e, "health")),
                       json_string_value(json_object_get(e, "container")) ?: "?",
                       json_string_value(json_object_get(e, "digest")) ?: "-",
                       json_string_value(json_object_get(e, "type")) ?: "?",
                       json_string_value(json_object_get(e, "target")),
                       json_is_true(json_object_get(e, "privileged")) ? " (privileged)" : "");
        printf("\n%-48s %s\n", "IMAGE", "MANIFEST");
        json_array_foreach(json_object_get(s, "images"), i, e)
                printf("%-48s %.19s\n", json_string_value(json_object_get(e, "ref")) ?: "?",
                       json_string_value(json_object_get(e, "manifest")) ?: "?");
}

int cmd_status(struct cli *cli, int argc, char **argv) {
        bool healthy = true, propagation_ok, alive;
        int optind_ret, r = cli_simple_options(cli, argc, argv, status_help, &optind_ret);
        json_t *s;

        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        if (optind_ret < argc) {
                cli_error("status: unexpected argument '%s'", argv[optind_ret]);
                return EXIT_USAGE;
        }
        s = json_pack("{s:o, s:o, s:o}", "propagation", cli_propagation_of(cli, cli->kubelet_dir, &propagation_ok),
                      "mapping", mapping_json(cli, &healthy), "mounts", mounts_json(cli, &alive, &healthy));
        if (!s)
                return EXIT_USAGE;
        json_object_set_new(s, "agent", json_boolean(alive));
        json_object_set_new(s, "images", images_json(cli));
        healthy &= propagation_ok;
        json_object_set_new(s, "healthy", json_boolean(healthy));
        if (cli->json) {
                if (cli_print_json(s) < 0)
                        return EXIT_USAGE;
        } else {
                print_text(s);
                json_decref(s);
        }
        return healthy ? EXIT_OK : EXIT_NO;
}
