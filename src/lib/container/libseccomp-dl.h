/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libseccomp, loaded on first use: only compiling a container's seccomp
 * profile needs it (seccomp_compile() loads it; loading the compiled filter
 * after fork is a plain syscall).  The plain names map to the checked
 * pointers (DL_REQUIRE), with <seccomp.h>'s prototypes.
 */
#pragma once

#include <seccomp.h>

#include "dl.h"

#define KM_LIBSECCOMP_SYMBOLS(X)                                                                                       \
        X(seccomp_attr_set)                                                                                            \
        X(seccomp_export_bpf)                                                                                          \
        X(seccomp_init)                                                                                                \
        X(seccomp_notify_alloc)                                                                                        \
        X(seccomp_notify_free)                                                                                         \
        X(seccomp_notify_id_valid)                                                                                     \
        X(seccomp_notify_receive)                                                                                      \
        X(seccomp_notify_respond)                                                                                      \
        X(seccomp_release)                                                                                             \
        X(seccomp_rule_add_array)                                                                                      \
        X(seccomp_syscall_resolve_name)

KM_LIBSECCOMP_SYMBOLS(DL_DECLARE_SYM)
extern bool libseccomp_ready;

/* The compiled filter of ctx as a program (seccomp.c): libseccomp 2.5 exports only to an fd. */
struct sock_fprog;
struct km_error;
int seccomp_export(scmp_filter_ctx ctx, struct sock_fprog *ret, struct km_error *err);
/* A filter context (seccomp.c), libseccomp loaded first; no_new_privs is left to the launcher. */
int seccomp_context_new(uint32_t default_action, scmp_filter_ctx *ret, struct km_error *err);

/* 0 once libseccomp is loaded (thread-safe, once), else -EOPNOTSUPP with the reason logged. */
int dlopen_libseccomp(void);

#define seccomp_attr_set DL_REQUIRE(libseccomp, seccomp_attr_set)
#define seccomp_export_bpf DL_REQUIRE(libseccomp, seccomp_export_bpf)
#define seccomp_init DL_REQUIRE(libseccomp, seccomp_init)
#define seccomp_notify_alloc DL_REQUIRE(libseccomp, seccomp_notify_alloc)
#define seccomp_notify_free DL_REQUIRE(libseccomp, seccomp_notify_free)
#define seccomp_notify_id_valid DL_REQUIRE(libseccomp, seccomp_notify_id_valid)
#define seccomp_notify_receive DL_REQUIRE(libseccomp, seccomp_notify_receive)
#define seccomp_notify_respond DL_REQUIRE(libseccomp, seccomp_notify_respond)
#define seccomp_release DL_REQUIRE(libseccomp, seccomp_release)
#define seccomp_rule_add_array DL_REQUIRE(libseccomp, seccomp_rule_add_array)
#define seccomp_syscall_resolve_name DL_REQUIRE(libseccomp, seccomp_syscall_resolve_name)
