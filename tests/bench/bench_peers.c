/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, P2's peers: the smallest changes that have made crun or
 * runc accept the config `kubemount run --print-spec` prints, each tried
 * when the peer's error names its cause.  bench_vcs.c (check_config) applies
 * them one at a time, in the peer's own bundle, and prints what it changed.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

/*
 * Devices: in OCI, linux.devices only makes the nodes; runc drops its own
 * default rules for those paths and its cgroup denied them ("error reopening
 * /dev/null"): rules allowing exactly those nodes.
 */
static bool fix_devices(json_t *config, char *desc, size_t size) {
        json_t *linux_ = json_object_get(config, "linux"), *devices = json_object_get(linux_, "devices"), *d, *res,
               *rules;
        size_t i, n;

        if (!json_is_array(devices) || json_array_size(devices) == 0)
                return false;
        if (!(res = json_object_get(linux_, "resources")))
                json_object_set_new(linux_, "resources", res = json_object());
        if (!(rules = json_object_get(res, "devices")))
                json_object_set_new(res, "devices", rules = json_array());
        n = (size_t)snprintf(desc, size, "linux.resources.devices +=");
        json_array_foreach(devices, i, d) {
                const char *type = json_string_value(json_object_get(d, "type"));
                json_int_t major = json_integer_value(json_object_get(d, "major"));
                json_int_t minor = json_integer_value(json_object_get(d, "minor"));

                json_array_append_new(rules,
                                      json_pack("{s:b, s:s, s:I, s:I, s:s}", "allow", 1, "type", type ? type : "c",
                                                "major", major, "minor", minor, "access", "rwm"));
                if (n < size)
                        n += (size_t)snprintf(desc + n, size - n, " %s %lld:%lld", type ? type : "c", (long long)major,
                                              (long long)minor);
        }
        if (n < size)
                snprintf(desc + n, size - n, " (allow, rwm: the nodes linux.devices makes)");
        return true;
}

/*
 * sysfs: runc 1.1 mounts it inside the container's user namespace, which the
 * kernel refuses (EPERM) without a network namespace of that user namespace;
 * crun then binds the host's /sys by itself.  That bind, read-only.
 */
static bool fix_sysfs(json_t *config, char *desc, size_t size) {
        json_t *mounts = json_object_get(config, "mounts"), *m;
        size_t i;

        json_array_foreach(mounts, i, m) {
                const char *type = json_string_value(json_object_get(m, "type"));

                if (!type || strcmp(type, "sysfs") != 0)
                        continue;
                json_array_set_new(mounts, i,
                                   json_pack("{s:s, s:s, s:s, s:[s, s, s, s, s]}", "destination", "/sys", "type",
                                             "bind", "source", "/sys", "options", "rbind", "nosuid", "noexec", "nodev",
                                             "ro"));
                snprintf(desc, size,
                         "/sys an rbind of the host's, ro, instead of a new sysfs (runc 1.1 cannot mount one in a user "
                         "namespace without a network namespace of its own; crun falls back to that bind itself)");
                return true;
        }
        return false;
}

static const struct {
        const char *cause; /* in the peer's error */
        bool (*fix)(json_t *config, char *desc, size_t size);
} fixes[] = { { "/dev/", fix_devices }, { "sysfs", fix_sysfs } };

bool peer_config_fix(struct json_t *config, const char *error, unsigned *applied, char *desc, size_t size) {
        for (size_t f = 0; f < sizeof(fixes) / sizeof(fixes[0]); f++)
                if (!(*applied & 1u << f) && strstr(error, fixes[f].cause) && fixes[f].fix(config, desc, size)) {
                        *applied |= 1u << f;
                        return true;
                }
        return false;
}
