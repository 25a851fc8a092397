/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What makes a VCS container unprivileged, in its config.json: a "user"
 * namespace whose root is an unprivileged host id, a "cgroup" namespace,
 * and the mount broker's annotation.  The launcher (launch.c) enters the
 * user namespace last, in the command, so the mount, pid and network
 * namespaces stay the host root's: the container cannot mount by itself
 * even without seccomp.  Its binds keep the propagation they were given:
 * the broker mounts in its namespace, and an rshared bind carries that
 * mount to the host as it would a privileged container's.
 */
#include <ctype.h>
#include <sched.h>
#include <sys/mount.h>

#include "json-shape.h"
#include "mount-flags.h"
#include "options.h"
#include "spec-unpriv.h"

static const struct json_doc CONFIG = { { NULL, "config.json", 0 }, -EINVAL, "is required", false, 4096 };

int spec_idmap(uid_t *ret_host_id, uint32_t *ret_count, struct km_error *err) {
        const char *env = getenv("KUBEMOUNT_IDMAP");
        unsigned long long host, count;
        char *end;

        *ret_host_id = SPEC_IDMAP_DEFAULT_HOST_ID;
        *ret_count = SPEC_IDMAP_DEFAULT_COUNT;
        if (!env || !*env)
                return 0;
        errno = 0;
        host = strtoull(env, &end, 10);
        if (errno || end == env || *end != ':' || !isdigit((unsigned char)end[1]))
                goto bad;
        count = strtoull(end + 1, &end, 10);
        /* Host root may not be in it, and the range must fit below the overflow id. */
        if (errno || *end || host == 0 || count == 0 || count > 65536 || host + count > UINT32_MAX - 1)
                goto bad;
        *ret_host_id = (uid_t)host;
        *ret_count = (uint32_t)count;
        return 0;
bad:
        return error_set_plain(err, -EINVAL,
                               "KUBEMOUNT_IDMAP=%s: must be HOSTID:COUNT, HOSTID > 0, COUNT 1..65536 "
                               "(default %u:%u)",
                               env, SPEC_IDMAP_DEFAULT_HOST_ID, SPEC_IDMAP_DEFAULT_COUNT);
}

int spec_make_unprivileged(json_t *root, const struct vcs_inputs *in, struct km_error *err) {
        json_t *linux_ = json_object_get(root, "linux"), *ns = json_object_get(linux_, "namespaces");
        _cleanup_free_ char *types = NULL;
        json_t *annotations;
        size_t len = 1;
        uint32_t count;
        uid_t host;
        int r;

        if ((r = spec_idmap(&host, &count, err)) < 0)
                return r;
        for (char *const *t = in->allow_mounts; t && *t; t++) {
                const char *why;

                if (fstype_validate(*t, &why) < 0 || strchr(*t, ','))
                        return error_set_plain(err, -EINVAL, "vcs: allowed mount type '%s': %s", *t,
                                               strchr(*t, ',') ? "has a ','" : why);
                len += strlen(*t) + 1;
        }
        if (!(types = calloc(1, len)))
                return error_set(err, -ENOMEM, "vcs: config.json");
        for (char *const *t = in->allow_mounts; t && *t; t++) {
                if (*types)
                        strcat(types, ",");
                strcat(types, *t);
        }
        annotations = json_object_get(root, "annotations");
        if (!annotations && json_object_set_new(root, "annotations", annotations = json_object()) < 0)
                return error_set(err, -ENOMEM, "vcs: config.json: annotations");
        if (json_array_append_new(ns, json_pack("{s:s}", "type", "user")) < 0 ||
            json_array_append_new(ns, json_pack("{s:s}", "type", "cgroup")) < 0 ||
            json_object_set_new(linux_, "uidMappings",
                                json_pack("[{s:i, s:I, s:I}]", "containerID", 0, "hostID", (json_int_t)host, "size",
                                          (json_int_t)count)) < 0 ||
            json_object_set_new(linux_, "gidMappings",
                                json_pack("[{s:i, s:I, s:I}]", "containerID", 0, "hostID", (json_int_t)host, "size",
                                          (json_int_t)count)) < 0 ||
            json_object_set_new(linux_, "rootfsPropagation", json_string("rslave")) < 0 ||
            json_object_set_new(annotations, SPEC_ANNOTATION_BROKER, json_string(types)) < 0)
                return error_set(err, -ENOMEM, "vcs: config.json: the user namespace");
        return 0;
}

/* One mapping of exactly one range from container id 0: what the launcher implements. */
static int parse_mapping(json_t *maps, const struct json_at *at, uid_t *ret_host, uint32_t *ret_count,
                         struct km_error *err) {
        long long container = -1, host = -1, size = -1;
        json_t *m;
        int r;

        if ((r = json_want_array(maps, at, 1, true, err)) < 0)
                return r;
        if (json_array_size(maps) != 1)
                return json_fail(err, -EOPNOTSUPP, at, "must hold exactly one range");
        m = json_array_get(maps, 0);
        at = JSON_AT_I(at, 0);
        if ((r = json_want(m, at, JSON_OBJECT, true, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(m, at, "containerID"), true, UINT32_MAX - 1, &container, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(m, at, "hostID"), true, UINT32_MAX - 1, &host, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(m, at, "size"), true, UINT32_MAX - 1, &size, err)) < 0)
                return r;
        if (container != 0)
                return json_fail(err, -EOPNOTSUPP, JSON_AT(at, "containerID"), "must be 0");
        /* Host root mapped in would own every host file the container can reach. */
        if (host == 0)
                return json_fail(err, -EINVAL, JSON_AT(at, "hostID"), "must not be 0 (host root)");
        if (size == 0 || host + size > UINT32_MAX - 1)
                return json_fail(err, -EINVAL, JSON_AT(at, "size"), "must be > 0 and end below 4294967295");
        *ret_host = (uid_t)host;
        *ret_count = (uint32_t)size;
        return 0;
}

int spec_parse_unprivileged(struct container_spec *s, json_t *root, struct km_error *err) {
        const struct json_at *lnx = JSON_AT(&CONFIG.at, "linux"), *ann = JSON_AT(&CONFIG.at, "annotations");
        json_t *linux_ = json_object_get(root, "linux"), *annotations = json_object_get(root, "annotations");
        const char *types = NULL;
        uint32_t gid_count;
        size_t n_types = 0;
        int r;

        if ((r = json_want_str(JSON_FIELD(annotations, ann, SPEC_ANNOTATION_BROKER), false, &types, err)) < 0)
                return r;
        if (!(s->namespaces & CLONE_NEWUSER)) {
                if (types)
                        return json_fail(err, -EINVAL, JSON_AT(ann, SPEC_ANNOTATION_BROKER),
                                         "needs a \"user\" namespace");
                return 0;
        }
        if ((r = parse_mapping(json_object_get(linux_, "uidMappings"), JSON_AT(lnx, "uidMappings"), &s->host_uid,
                               &s->id_count, err)) < 0 ||
            (r = parse_mapping(json_object_get(linux_, "gidMappings"), JSON_AT(lnx, "gidMappings"), &s->host_gid,
                               &gid_count, err)) < 0)
                return r;
        if (gid_count != s->id_count)
                return json_fail(err, -EOPNOTSUPP, JSON_AT(lnx, "gidMappings"), "must be as large as uidMappings");
        if (s->uid >= s->id_count || s->gid >= s->id_count)
                return json_fail(err, -EINVAL, JSON_AT(&CONFIG.at, "process"), "user is outside the id mappings");
        s->broker = types != NULL;
        for (const char *t = types; t && *t;) {
                size_t n = strcspn(t, ",");
                _cleanup_free_ char *one = strndup(t, n);
                const char *why;

                if (!one)
                        return error_set(err, -ENOMEM, "config.json");
                if (fstype_validate(one, &why) < 0)
                        return json_fail(err, -EINVAL, JSON_AT(ann, SPEC_ANNOTATION_BROKER), "'%s': %s", one, why);
                if ((r = strv_append(&s->broker_types, &n_types, one)) < 0)
                        return error_set(err, r, "config.json");
                t += n + (t[n] == ',');
        }
        return 0;
}
