/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loading a library on first use (see dl.h). */
#include <dlfcn.h>

#include "dl.h"

int dl_load(const char *soname, const struct dl_symbol *syms, size_t n) {
        void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

        if (!dl) {
                log_msg(KM_LOG_ERR, "cannot load %s: %s", soname, dlerror());
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < n; i++)
                if (!(*syms[i].ptr = dlsym(dl, syms[i].name))) {
                        log_msg(KM_LOG_ERR, "%s lacks %s", soname, syms[i].name);
                        return -EOPNOTSUPP;
                }
        return 0; /* never dlclose'd: libmount keeps global state, the others are cheap to keep */
}
