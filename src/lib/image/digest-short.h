/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sha256 of a short buffer (a reference's name, a manifest) without
 * libcrypto, whose load costs a process that takes one digest 1-2 ms (a
 * routed mount names its image's reference record by one): the kernel's
 * crypto API (AF_ALG, algif_hash) where it has one, else libmd.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define DIGEST_SHORT_MAX (64 * 1024)
#define DIGEST_SHORT_LENGTH 32

/*
 * md = sha256(data); false when size is past DIGEST_SHORT_MAX (libcrypto
 * is faster there, and loaded for it anyway), or neither the kernel (no
 * AF_ALG, a policy refuses it, KUBEMOUNT_COMPAT=af-alg) nor libmd gives one.
 */
bool digest_short(const void *data, size_t size, unsigned char md[DIGEST_SHORT_LENGTH]);
