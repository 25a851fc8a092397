/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenSSL's libcrypto, loaded on first use: only digests (pulls, imports)
 * and registry credentials need it, not every kubemount exec.
 * Prototypes come from <openssl/evp.h>, so every call is still type-checked.
 */
#pragma once

#include <openssl/evp.h>

#include "dl.h"

#define KM_LIBCRYPTO_SYMBOLS(X)                                                                                        \
        X(EVP_DecodeBlock)                                                                                             \
        X(EVP_DigestFinal_ex)                                                                                          \
        X(EVP_DigestInit_ex)                                                                                           \
        X(EVP_DigestUpdate)                                                                                            \
        X(EVP_EncodeBlock)                                                                                             \
        X(EVP_MD_CTX_free)                                                                                             \
        X(EVP_MD_CTX_new)                                                                                              \
        X(EVP_sha256)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBCRYPTO_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

/* 0 once libcrypto is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libcrypto(void);
