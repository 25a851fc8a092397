/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Libraries loaded on first use (libmount, libcurl, libarchive, libcrypto,
 * jansson, libcap, libseccomp): what kubemount's start-up would otherwise pay
 * on every exec, a kubelet on every mount.  Each LIB-dl.h lists its symbols
 * and declares their sym_* pointers; the user of each defines them and
 * dlopen_LIB() with DEFINE_DLOPEN.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "util.h"

struct dl_symbol {
        const char *name;
        void **ptr;
};

/* dlopen()s soname and fills every pointer; 0, or -EOPNOTSUPP with the reason logged. Never dlclose'd. */
int dl_load(const char *soname, const struct dl_symbol *syms, size_t n);
/* Why the last dl_load() of soname failed ("libx.so.1: cannot open shared object file: ..."). */
const char *dl_load_error(void);

#define DL_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
#define DL_DEFINE_SYM(f) __typeof__(sym_##f) sym_##f;
#define DL_SYMBOL(f) { #f, (void **)&sym_##f },
/*
 * The pointers of LIST (declared by LIB-dl.h), bool NAME_ready, and
 * int dlopen_NAME(void): loads once (thread-safe), then answers from memory.
 */
#define DEFINE_DLOPEN(name, soname, LIST)                                                                              \
        LIST(DL_DEFINE_SYM)                                                                                            \
        bool name##_ready;                                                                                             \
        static int name##_result = -EOPNOTSUPP;                                                                        \
        static void name##_load(void) {                                                                                \
                static const struct dl_symbol syms[] = { LIST(DL_SYMBOL) };                                            \
                name##_result = dl_load(soname, syms, ELEMENTSOF(syms));                                               \
                if (name##_result >= 0)                                                                                \
                        __atomic_store_n(&name##_ready, true, __ATOMIC_RELEASE);                                       \
        }                                                                                                              \
        int dlopen_##name(void) {                                                                                      \
                static pthread_once_t once = PTHREAD_ONCE_INIT;                                                        \
                pthread_once(&once, name##_load);                                                                      \
                return name##_result;                                                                                  \
        }

/* Aborts naming lib and sym: a call that no dlopen_LIB() preceded is a bug, and must not become a call through NULL. */
_Noreturn void dl_not_loaded(const char *lib, const char *sym);
static inline void dl_require(const bool *ready, const char *lib, const char *sym) {
        if (__builtin_expect(!__atomic_load_n(ready, __ATOMIC_ACQUIRE), 0))
                dl_not_loaded(lib, sym);
}
/*
 * sym_f, checked: LIB-dl.h maps each plain name f to this, so call sites keep
 * the library's names and prototypes.  For libraries whose entry points load
 * them (dlopen_NAME() with an error to return), never on the spot: a load in a
 * forked child inside a container would take the container's copy.
 */
#define DL_REQUIRE(name, f) (*(dl_require(&name##_ready, #name, #f), sym_##f))
