/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jansson's pointers and loader (jansson-dl.h), below every file that uses it. */
#include <stdio.h>

#include "jansson-dl.h"

DEFINE_DLOPEN(jansson, "libjansson.so.4", KM_JANSSON_SYMBOLS)

int jansson_require(struct km_error *err) {
        if (dlopen_jansson() >= 0)
                return 0;
        return error_set_plain(err, -EOPNOTSUPP, "cannot load libjansson.so.4: %s", dl_load_error());
}

json_t *json_from_strv(char *const *v) {
        json_t *a = json_array();

        for (; a && v && *v; v++)
                if (json_array_append_new(a, json_string(*v)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

void jansson_load_or_exit(void) {
        if (dlopen_jansson() >= 0)
                return;
        /* As the dynamic loader did at start-up when jansson was linked: one line (unless logged), status 127. */
        if (!log_enabled(KM_LOG_ERR))
                fprintf(stderr, "%s: cannot load libjansson.so.4: %s\n", program_invocation_short_name,
                        dl_load_error());
        _exit(127);
}
