/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmd (message digests from the BSDs; on every Debian and Ubuntu system, as
 * dpkg needs it), loaded on first use: a short buffer's sha256 where the
 * kernel has no AF_ALG (digest-short.c).  0.09 ms to load, where
 * libcrypto takes 1.1-1.8 ms (measured on this machine).  Prototypes come
 * from <sha2.h>; never included beside <openssl/sha.h>, which defines some
 * of the same names.
 */
#pragma once

#include <sha2.h>

#include "dl.h"

#define KM_LIBMD_SYMBOLS(X)                                                                                            \
        X(SHA256Final)                                                                                                 \
        X(SHA256Init)                                                                                                  \
        X(SHA256Update)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBMD_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

/* 0 once libmd is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libmd(void);
