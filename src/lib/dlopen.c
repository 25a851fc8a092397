/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The libraries loaded on first use (see dl.h). */
#include <dlfcn.h>

#include "dl.h"
#include "libarchive-dl.h"
#include "libcrypto-dl.h"
#include "libcurl-dl.h"
#include "libmount-dl.h"

int dl_load(const char *soname, const struct dl_symbol *syms, size_t n) {
        void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

        if (!dl) {
                km_log(KM_LOG_ERR, "cannot load %s: %s", soname, dlerror());
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < n; i++)
                if (!(*syms[i].ptr = dlsym(dl, syms[i].name))) {
                        km_log(KM_LOG_ERR, "%s lacks %s", soname, syms[i].name);
                        return -EOPNOTSUPP;
                }
        return 0; /* never dlclose'd: libmount keeps global state, the others are cheap to keep */
}

DEFINE_DLOPEN(libmount, "libmount.so.1", KM_LIBMOUNT_SYMBOLS)
DEFINE_DLOPEN(libcurl, "libcurl.so.4", KM_LIBCURL_SYMBOLS)
DEFINE_DLOPEN(libarchive, "libarchive.so.13", KM_LIBARCHIVE_SYMBOLS)
DEFINE_DLOPEN(libcrypto, "libcrypto.so.3", KM_LIBCRYPTO_SYMBOLS)
