/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container description: an OCI runtime-spec config.json.  kubemount
 * generates one for a VCS container (spec_generate_vcs) and reads one back
 * (spec_parse) into the subset its launcher implements.  The same JSON is a
 * bundle for crun or runc.
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec-def.h"
#include "spec-unpriv.h"
#include "util.h"

/* Parses and validates config.json text; refuses what the launcher cannot do faithfully. */
int spec_parse(const char *json, size_t size, struct container_spec **ret, struct km_error *err);
int spec_from_json(json_t *root, struct container_spec **ret, struct km_error *err);
void spec_free(struct container_spec *s);
/* A command's args (and env, unless NULL: *ret_env NULL) checked as process.args and process.env are. */
int spec_command(json_t *args, json_t *env, char ***ret_args, char ***ret_env, struct km_error *err);
DEFINE_CLEANUP(struct container_spec, spec_free)

/*
 * The OCI config for a VCS container: new mount, pid, uts and ipc namespaces
 * (+ network unless host_network); fresh /proc, /dev (tmpfs with null, zero,
 * full, random, urandom, tty, fuse; devpts; shm), /sys read-only; the VCS
 * capability set (spec_vcs_capabilities) bounding/effective/permitted, none
 * inheritable or ambient; noNewPrivileges; the default seccomp profile
 * (seccomp_default_profile); masked and read-only /proc paths like runc's
 * defaults; rootfsPropagation "rshared" when a bind is shared, else "rslave".
 * Returns a new reference, or NULL with err set.
 */
json_t *spec_generate_vcs(const struct vcs_inputs *in, struct km_error *err);
/* The environment spec_generate_vcs() gives the command: PATH and HOME, then in->env (by key). */
json_t *spec_vcs_env(const struct vcs_inputs *in);

/* The VCS default capabilities as a mask (see spec.c for the list and why). */
uint64_t spec_vcs_capabilities(void);
