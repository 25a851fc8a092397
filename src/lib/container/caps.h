/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Capabilities of a container process, through libcap. */
#pragma once

#include <stdint.h>

#include "util.h"

struct caps_sets {
        uint64_t bounding, effective, permitted, inheritable, ambient; /* 1ULL << CAP_* */
};

/*
 * Loads libcap (libcap-dl.h): 0, or -EOPNOTSUPP with err set.  The launcher
 * calls it before forking anything that will caps_apply(): a load there,
 * inside the container, would take the container's libcap.
 */
int caps_load(struct km_error *err);

/*
 * CAP_* number of a name such as "CAP_SYS_ADMIN" (case-insensitive, libcap's
 * table), -EINVAL, or -EOPNOTSUPP if libcap cannot be loaded.
 */
int caps_from_name(const char *name);
/* "CAP_SYS_ADMIN"-style name of a number; static storage, NULL if unknown (or libcap cannot be loaded). */
const char *caps_to_name(int cap);

/*
 * Applies the sets to the calling process, in the order a runtime must:
 * drop from the bounding set what is not in it, set inheritable, permitted
 * and effective, then clear and raise the ambient set.  Must run with
 * CAP_SETPCAP; call after setuid/setgid (which would clear them) and before
 * execve.  Returns 0 or -errno with err naming the step; -EOPNOTSUPP if
 * caps_load() did not succeed before (it never loads libcap itself).
 */
int caps_apply(const struct caps_sets *sets, struct km_error *err);

/* The calling process's current sets (for tests and `kubemount exec` checks). */
int caps_get_current(struct caps_sets *ret);
