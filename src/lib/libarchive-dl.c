/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libarchive loaded on first use (see libarchive-dl.h). */
#include <dlfcn.h>
#include <pthread.h>

#include "libarchive-dl.h"

#define KM_DEFINE_SYM(f) __typeof__(f) *sym_##f;
KM_LIBARCHIVE_SYMBOLS(KM_DEFINE_SYM)
#undef KM_DEFINE_SYM

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -EOPNOTSUPP;

static void load(void) {
        void *dl = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);

        if (!dl) {
                km_log(KM_LOG_ERR, "cannot load libarchive: %s", dlerror());
                return;
        }
#define KM_LOAD_SYM(f)                                                                                               \
        if (!(sym_##f = (__typeof__(f) *)dlsym(dl, #f))) {                                                           \
                km_log(KM_LOG_ERR, "libarchive lacks %s", #f);                                                       \
                return;                                                                                              \
        }
        KM_LIBARCHIVE_SYMBOLS(KM_LOAD_SYM)
#undef KM_LOAD_SYM
        loaded = 0; /* never dlclose'd */
}

int dlopen_libarchive(void) {
        pthread_once(&once, load);
        return loaded;
}
