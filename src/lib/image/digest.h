/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Content digests ("sha256:<64 hex>") through OpenSSL's libcrypto. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define DIGEST_SHA256_PREFIX "sha256:"
#define DIGEST_STRING_MAX (7 + 64 + 1)

/* Exactly "sha256:" and 64 lowercase hex digits (no other algorithm is accepted). */
bool digest_is_valid(const char *digest);

struct digest_ctx; /* incremental sha256 */
struct digest_ctx *digest_new(void);
void digest_update(struct digest_ctx *c, const void *data, size_t size);
/* "sha256:..." into out; frees nothing (call digest_free). */
void digest_final(struct digest_ctx *c, char out[DIGEST_STRING_MAX]);
void digest_free(struct digest_ctx *c);
DEFINE_CLEANUP(struct digest_ctx, digest_free)

/* One-shot helpers. */
void digest_buffer(const void *data, size_t size, char out[DIGEST_STRING_MAX]);
/* Reads fd to its end; -errno on read errors; *ret_size gets the byte count. */
int digest_fd(int fd, char out[DIGEST_STRING_MAX], uint64_t *ret_size);
