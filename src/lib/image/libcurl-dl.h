/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcurl, loaded on first use: libcurl brings some 40 libraries (TLS, Kerberos,
 * LDAP, HTTP/2 ...) whose loading would cost ~10 ms on every kubemount exec,
 * and only pulls need it.
 * Prototypes come from <curl/curl.h>, so every call is still type-checked.
 */
#pragma once

#include <curl/curl.h>

#include "dl.h"

#define KM_LIBCURL_SYMBOLS(X)                                                                                          \
        X(curl_easy_cleanup)                                                                                           \
        X(curl_easy_getinfo)                                                                                           \
        X(curl_easy_init)                                                                                              \
        X(curl_easy_perform)                                                                                           \
        X(curl_easy_reset)                                                                                             \
        X(curl_easy_setopt)                                                                                            \
        X(curl_easy_strerror)                                                                                          \
        X(curl_free)                                                                                                   \
        X(curl_global_init)                                                                                            \
        X(curl_slist_append)                                                                                           \
        X(curl_slist_free_all)                                                                                         \
        X(curl_url)                                                                                                    \
        X(curl_url_cleanup)                                                                                            \
        X(curl_url_get)                                                                                                \
        X(curl_url_set)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBCURL_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

/* 0 once libcurl is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libcurl(void);
