/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small jansson helpers (see json-util.h). */
#include "json-util.h"

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
