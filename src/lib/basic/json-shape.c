/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shape checks of outside JSON that name the place of a bad value (see json-shape.h). */
#include "json-shape.h"

static const struct json_doc *doc_of(const struct json_at *at) {
        while (at->up)
                at = at->up;
        return (const struct json_doc *)at; /* the root is the first member of its json_doc */
}

size_t json_at_format(const struct json_at *at, char *buf, size_t size) {
        size_t n = at->up ? json_at_format(at->up, buf, size) : 0;
        int k;

        if (n >= size)
                return n;
        if (at->key)
                k = snprintf(buf + n, size - n, "%s%s", !at->up ? "" : !at->up->up ? ": " : ".", at->key);
        else
                k = snprintf(buf + n, size - n, "[%zu]", at->i);
        return n + (k > 0 ? (size_t)k : 0);
}

int json_fail(struct km_error *err, int r, const struct json_at *at, const char *fmt, ...) {
        char where[256], why[KM_ERROR_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        json_at_format(at, where, sizeof(where));
        return error_set_plain(err, r, "%s: %s", where, why);
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

static bool is_absent(json_t *v, const struct json_at *at, const struct json_doc *doc) {
        return !v || (json_is_null(v) && doc->null_is_absent && at->key);
}

int json_want(json_t *v, const struct json_at *at, json_type t, bool required, struct km_error *err) {
        const struct json_doc *doc = doc_of(at);

        if (is_absent(v, at, doc))
                return required ? json_fail(err, doc->code, at, "%s", doc->missing) : 0;
        if (json_typeof(v) != t && !(t == JSON_TRUE && json_is_boolean(v)))
                return json_fail(err, doc->code, at, "must be %s, not %s", json_type_name(t),
                                 json_type_name(json_typeof(v)));
        if (t != JSON_STRING)
                return 0;
        if (doc->string_max && json_string_length(v) > doc->string_max)
                return json_fail(err, -E2BIG, at, "longer than %zu bytes", doc->string_max);
        /* Built in memory (json_stringn), a string may hide a NUL that C would cut at. */
        if (strlen(json_string_value(v)) != json_string_length(v))
                return json_fail(err, doc->code, at, "contains a NUL byte");
        return 0;
}

int json_want_member(json_t *obj, const struct json_at *up, const char *key, json_type t, bool required, json_t **ret,
                     struct km_error *err) {
        const struct json_at *at = JSON_AT(up, key);
        json_t *v = json_object_get(obj, key);
        int r = json_want(v, at, t, required, err);

        *ret = r < 0 || is_absent(v, at, doc_of(at)) ? NULL : v;
        return r;
}

int json_want_str(json_t *v, const struct json_at *at, bool required, const char **ret, struct km_error *err) {
        int r = json_want(v, at, JSON_STRING, required, err);

        *ret = r < 0 || is_absent(v, at, doc_of(at)) ? NULL : json_string_value(v);
        return r;
}

int json_want_int(json_t *v, const struct json_at *at, bool required, long long max, long long *ret,
                  struct km_error *err) {
        int r = json_want(v, at, JSON_INTEGER, required, err);

        if (r < 0 || is_absent(v, at, doc_of(at)))
                return r;
        if (json_integer_value(v) < 0 || json_integer_value(v) > max)
                return json_fail(err, -ERANGE, at, "must be between 0 and %lld", max);
        *ret = json_integer_value(v);
        return 0;
}

int json_want_bool(json_t *v, const struct json_at *at, bool *ret, struct km_error *err) {
        int r = json_want(v, at, JSON_TRUE, false, err);

        if (r >= 0 && !is_absent(v, at, doc_of(at)))
                *ret = json_is_true(v);
        return r;
}

int json_want_array(json_t *v, const struct json_at *at, size_t max, bool required, struct km_error *err) {
        int r = json_want(v, at, JSON_ARRAY, required, err);

        if (r >= 0 && json_is_array(v) && json_array_size(v) > max)
                return json_fail(err, -E2BIG, at, "more than %zu entries", max);
        return r;
}
