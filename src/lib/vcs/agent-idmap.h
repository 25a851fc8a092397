/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each unprivileged container's ids: a range of host ids of its own (what
 * Incus calls an isolated idmap), so that one compromised client owns
 * nothing of another's (its writable layer, its FUSE daemon's files), and
 * the user namespace of that range.  The client's config.json names the
 * pool's start and the range's size (KUBEMOUNT_IDMAP, default
 * 1879048192:65536); the agent moves the range to the first slot of that
 * size no running container's range overlaps, and writes it into the
 * config.json it keeps, so that an agent after a restart finds every
 * adopted container's range there.
 */
#pragma once

#include "agent-containers.h"

/*
 * Moves config's uidMappings and gidMappings (one range each, from
 * container id 0, as spec-unpriv.c writes them) to a free slot: HOSTID +
 * k * SIZE for the smallest k that overlaps no running container's range
 * and ends below 4294967295.  A config with no mappings (privileged) is
 * left alone.  0, or -EINVAL/-ENOSPC with err set.
 */
int agent_idmap_assign(struct agent *a, json_t *config, struct km_error *err);

/* The user namespace of spec's range, kept for the next container of that range: an fd the agent owns. */
int agent_userns_of(struct agent *a, const struct container_spec *spec, struct km_error *err);
void agent_userns_done(struct agent *a);
