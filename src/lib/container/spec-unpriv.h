/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "jansson-dl.h"
#include "spec-def.h"

/* Unprivileged (spec-unpriv.c): a "user" and a "cgroup" namespace, the id map, binds rslave, the broker. */
int spec_make_unprivileged(json_t *root, const struct vcs_inputs *in, struct km_error *err);
/* The id map of unprivileged containers: $KUBEMOUNT_IDMAP ("HOSTID:COUNT"), else SPEC_IDMAP_DEFAULT_*. */
int spec_idmap(uid_t *ret_host_id, uint32_t *ret_count, struct km_error *err);
#define SPEC_IDMAP_DEFAULT_HOST_ID 1879048192u /* 0x70000000: above systemd-nspawn's range, below 2^31 */
#define SPEC_IDMAP_DEFAULT_COUNT 65536u
/* The "user" namespace's mappings and the broker's annotation, read into s (spec.c calls it). */
int spec_parse_unprivileged(struct container_spec *s, json_t *root, struct km_error *err);
