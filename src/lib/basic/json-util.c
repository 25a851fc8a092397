/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jansson's loader (jansson-dl.h) and small helpers (json-util.h). */
#include "json-util.h"

DEFINE_DLOPEN(jansson, "libjansson.so.4", KM_JANSSON_SYMBOLS)

void jansson_load_or_exit(void) {
        if (dlopen_jansson() >= 0)
                return;
        /* As the dynamic loader did at start-up when jansson was linked: one line (unless logged), status 127. */
        if (!log_enabled(KM_LOG_ERR))
                fprintf(stderr, "%s: cannot load libjansson.so.4: %s\n", program_invocation_short_name,
                        dl_load_error());
        _exit(127);
}

const char *json_type_name(json_type t) {
        switch (t) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return "an integer";
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
                return "null";
        }
        return "a JSON value";
}
