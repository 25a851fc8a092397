/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Libraries loaded on first use (libmount, libcurl, libarchive, libcrypto):
 * what kubemount's start-up would otherwise pay on every exec.  Each
 * LIB-dl.h lists its symbols; the user of each defines its sym_* pointers and
 * dlopen_LIB() with DEFINE_DLOPEN.
 */
#pragma once

#include <pthread.h>

#include "util.h"

struct dl_symbol {
        const char *name;
        void **ptr;
};

/* dlopen()s soname and fills every pointer; 0, or -EOPNOTSUPP with the reason logged. Never dlclose'd. */
int dl_load(const char *soname, const struct dl_symbol *syms, size_t n);

#define DL_DEFINE_SYM(f) __typeof__(f) *sym_##f;
#define DL_SYMBOL(f) { #f, (void **)&sym_##f },
/* The pointers of LIST, and int dlopen_NAME(void): loads once (thread-safe), then answers from memory. */
#define DEFINE_DLOPEN(name, soname, LIST)                                                                              \
        LIST(DL_DEFINE_SYM)                                                                                            \
        static int name##_loaded = -EOPNOTSUPP;                                                                        \
        static void name##_load(void) {                                                                                \
                static const struct dl_symbol syms[] = { LIST(DL_SYMBOL) };                                            \
                name##_loaded = dl_load(soname, syms, ELEMENTSOF(syms));                                               \
        }                                                                                                              \
        int dlopen_##name(void) {                                                                                      \
                static pthread_once_t once = PTHREAD_ONCE_INIT;                                                        \
                pthread_once(&once, name##_load);                                                                      \
                return name##_loaded;                                                                                  \
        }
