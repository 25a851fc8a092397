/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Each unprivileged container's ids (see agent-idmap.h). */
#include "agent-idmap.h"
#include "userns.h"

#define ID_LIMIT UINT32_MAX /* (uid_t)-1 is no id, and a range must end below it */

/* Whether [host, host + count) overlaps the range of a running container's. */
static bool range_taken(struct agent *a, uint64_t host, uint64_t count) {
        for (struct ctr *c = a->ctrs; c; c = c->next) {
                const struct container_spec *s = c->spec;

                if (c->pidfd < 0 || c->forgotten || !s || !s->id_count)
                        continue;
                if (host < (uint64_t)s->host_uid + s->id_count && (uint64_t)s->host_uid < host + count)
                        return true;
                if (host < (uint64_t)s->host_gid + s->id_count && (uint64_t)s->host_gid < host + count)
                        return true;
        }
        return false;
}

/* The single range of maps (spec-unpriv.c's shape): its object, or NULL. */
static json_t *only_range(json_t *maps, uint64_t *ret_host, uint64_t *ret_count) {
        json_t *m = json_array_size(maps) == 1 ? json_array_get(maps, 0) : NULL;
        json_t *host = json_object_get(m, "hostID"), *size = json_object_get(m, "size");

        if (!json_is_integer(host) || !json_is_integer(size) || json_integer_value(host) <= 0 ||
            json_integer_value(size) <= 0)
                return NULL;
        *ret_host = (uint64_t)json_integer_value(host);
        *ret_count = (uint64_t)json_integer_value(size);
        return m;
}

int agent_idmap_assign(struct agent *a, json_t *config, struct km_error *err) {
        json_t *linux_ = json_object_get(config, "linux");
        json_t *uids = json_object_get(linux_, "uidMappings"), *gids = json_object_get(linux_, "gidMappings");
        uint64_t host, count, ghost, gcount;
        json_t *u, *g;

        if (!uids && !gids)
                return 0; /* privileged: the host's ids */
        u = only_range(uids, &host, &count);
        g = only_range(gids, &ghost, &gcount);
        /* spec_from_json() names what is wrong with any other shape. */
        if (!u || !g || ghost != host || gcount != count)
                return 0;
        for (uint64_t h = host; h + count < ID_LIMIT; h += count)
                if (!range_taken(a, h, count)) {
                        if (json_object_set_new(u, "hostID", json_integer((json_int_t)h)) < 0 ||
                            json_object_set_new(g, "hostID", json_integer((json_int_t)h)) < 0)
                                return error_set(err, -ENOMEM, "id map");
                        return 0;
                }
        return error_set_plain(err, -ENOSPC, "no free range of %llu host ids from %llu (running containers hold them)",
                               (unsigned long long)count, (unsigned long long)host);
}

int agent_userns_of(struct agent *a, const struct container_spec *spec, struct km_error *err) {
        struct agent_userns *free_slot = NULL;
        int fd;

        for (size_t i = 0; i < ELEMENTSOF(a->userns); i++) {
                struct agent_userns *u = &a->userns[i];

                if (u->fd >= 0 && u->uid == spec->host_uid && u->gid == spec->host_gid && u->count == spec->id_count)
                        return u->fd;
                if (u->fd < 0 && !free_slot)
                        free_slot = u;
        }
        fd = userns_create(spec->host_uid, spec->host_gid, spec->id_count, err);
        if (fd < 0)
                return fd;
        if (!free_slot) {
                /* Full: the oldest goes (a container that runs holds its namespace through its processes). */
                free_slot = &a->userns[a->userns_next++ % ELEMENTSOF(a->userns)];
                closep(&free_slot->fd);
        }
        *free_slot = (struct agent_userns){ fd, spec->host_uid, spec->host_gid, spec->id_count };
        return fd;
}

void agent_userns_done(struct agent *a) {
        for (size_t i = 0; i < ELEMENTSOF(a->userns); i++)
                closep(&a->userns[i].fd);
}
