/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenSSL's libcrypto, loaded on first use: only digests (pulls, imports)
 * and registry credentials need it, not every kubemount exec.
 * Prototypes come from <openssl/evp.h> and <openssl/sha.h>, so every call is still type-checked.
 */
#pragma once

/* Before any OpenSSL header: the SHA256_* functions are deprecated (digest.c says why they are used). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "dl.h"

#define KM_LIBCRYPTO_SYMBOLS(X)                                                                                        \
        X(EVP_DecodeBlock)                                                                                             \
        X(EVP_EncodeBlock)                                                                                             \
        X(SHA256_Final)                                                                                                \
        X(SHA256_Init)                                                                                                 \
        X(SHA256_Update)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBCRYPTO_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

/* 0 once libcrypto is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libcrypto(void);
