/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcap, loaded on first use: only containers need it.  The plain names map
 * to the checked pointers (DL_REQUIRE), with <sys/capability.h>'s
 * prototypes.  caps.c loads it in its entry points; caps_apply() runs in
 * the container's child and only uses what the parent loaded.
 */
#pragma once

#include <sys/capability.h>

#include "dl.h"

#define KM_LIBCAP_SYMBOLS(X)                                                                                           \
        X(cap_drop_bound)                                                                                              \
        X(cap_free)                                                                                                    \
        X(cap_from_name)                                                                                               \
        X(cap_get_ambient)                                                                                             \
        X(cap_get_bound)                                                                                               \
        X(cap_get_flag)                                                                                                \
        X(cap_get_proc)                                                                                                \
        X(cap_init)                                                                                                    \
        X(cap_max_bits)                                                                                                \
        X(cap_reset_ambient)                                                                                           \
        X(cap_set_ambient)                                                                                             \
        X(cap_set_flag)                                                                                                \
        X(cap_set_proc)                                                                                                \
        X(cap_to_name)

KM_LIBCAP_SYMBOLS(DL_DECLARE_SYM)
extern bool libcap_ready;

/* 0 once libcap is loaded (thread-safe, once), else -EOPNOTSUPP with the reason logged. */
int dlopen_libcap(void);

#define cap_drop_bound DL_REQUIRE(libcap, cap_drop_bound)
#define cap_free DL_REQUIRE(libcap, cap_free)
#define cap_from_name DL_REQUIRE(libcap, cap_from_name)
#define cap_get_ambient DL_REQUIRE(libcap, cap_get_ambient)
#define cap_get_bound DL_REQUIRE(libcap, cap_get_bound)
#define cap_get_flag DL_REQUIRE(libcap, cap_get_flag)
#define cap_get_proc DL_REQUIRE(libcap, cap_get_proc)
#define cap_init DL_REQUIRE(libcap, cap_init)
#define cap_max_bits DL_REQUIRE(libcap, cap_max_bits)
#define cap_reset_ambient DL_REQUIRE(libcap, cap_reset_ambient)
#define cap_set_ambient DL_REQUIRE(libcap, cap_set_ambient)
#define cap_set_flag DL_REQUIRE(libcap, cap_set_flag)
#define cap_set_proc DL_REQUIRE(libcap, cap_set_proc)
#define cap_to_name DL_REQUIRE(libcap, cap_to_name)
