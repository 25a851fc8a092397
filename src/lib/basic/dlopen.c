/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loading a library on first use (see dl.h). */
#include <dlfcn.h>

#include "dl.h"

/* Written only when a load fails, which ends the use of that library: no lock. */
static char load_error[256];

int dl_load(const char *soname, const struct dl_symbol *syms, size_t n) {
        void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

        if (!dl) {
                snprintf(load_error, sizeof(load_error), "%s", dlerror());
                log_msg(KM_LOG_ERR, "cannot load %s: %s", soname, load_error);
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < n; i++)
                if (!(*syms[i].ptr = dlsym(dl, syms[i].name))) {
                        snprintf(load_error, sizeof(load_error), "%s lacks %s", soname, syms[i].name);
                        log_msg(KM_LOG_ERR, "%s", load_error);
                        return -EOPNOTSUPP;
                }
        return 0; /* never dlclose'd: libmount keeps global state, the others are cheap to keep */
}

const char *dl_load_error(void) {
        return load_error[0] ? load_error : "unknown error";
}

_Noreturn void dl_not_loaded(const char *lib, const char *sym) {
        fprintf(stderr, "%s: internal error: %s() called before %s was loaded\n", program_invocation_short_name, sym,
                lib);
        abort();
}
