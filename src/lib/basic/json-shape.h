/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Checking the shape of JSON that comes from outside (an OCI config, a
 * registry's manifest, a seccomp profile), with every refusal naming the
 * place of the bad value: "config.json: mounts[3].destination: must be
 * absolute".  A place is a chain of struct json_at on the stack, from the
 * value up to its document.
 */
#pragma once

#include "jansson-dl.h"

#include "util.h"

struct json_at {
        const struct json_at *up; /* NULL: the document itself, a struct json_doc */
        const char *key;          /* a member; NULL: element i of an array */
        size_t i;
};

/* The root of every place in a document: its name, and how refusals of its shape read. */
struct json_doc {
        struct json_at at;   /* { NULL, "config.json" } */
        int code;            /* of a wrong type, an absent value or a NUL byte: -EINVAL, or -EBADMSG */
        const char *missing; /* what an absent required value "is required" or is ("missing") */
        bool null_is_absent; /* a null member reads as absent (how Go writes nil slices and pointers) */
        size_t string_max;   /* longer strings are refused with -E2BIG; 0: any length */
};

#define JSON_AT(up, key) (&(const struct json_at){ (up), (key), 0 })
#define JSON_AT_I(up, i) (&(const struct json_at){ (up), NULL, (i) })
/* A member and its place: the first two arguments of the json_want*() checks. */
#define JSON_FIELD(obj, up, key) json_object_get((obj), (key)), JSON_AT(up, key)

/* "config.json: mounts[3].destination" into buf (cut to size); the length it would have. */
size_t json_at_format(const struct json_at *at, char *buf, size_t size);
/* Sets err to "PLACE: WHY" (no strerror suffix) and returns r. */
int json_fail(struct km_error *err, int r, const struct json_at *at, const char *fmt, ...) _printf_(4, 5);
/* "an object", "a string", ... for messages such as "must be an array, not a string". */
const char *json_type_name(json_type t);

/*
 * v (NULL: absent) is of type t (JSON_TRUE: a boolean), else the document's
 * refusal; absent is fine unless required.  A string must hold no NUL byte
 * (jansson keeps those of json_stringn) and fit the document's string_max.
 */
int json_want(json_t *v, const struct json_at *at, json_type t, bool required, struct km_error *err);
/* json_want() of obj[key], with *ret the member or NULL when absent (or null, where that is absent). */
int json_want_member(json_t *obj, const struct json_at *up, const char *key, json_type t, bool required, json_t **ret,
                     struct km_error *err);
/* A string: *ret its value, NULL when absent. */
int json_want_str(json_t *v, const struct json_at *at, bool required, const char **ret, struct km_error *err);
/* An integer in 0..max (-ERANGE otherwise); *ret is left alone when absent. */
int json_want_int(json_t *v, const struct json_at *at, bool required, long long max, long long *ret,
                  struct km_error *err);
/* A boolean; *ret is left alone when absent. */
int json_want_bool(json_t *v, const struct json_at *at, bool *ret, struct km_error *err);
/* An array of at most max entries (-E2BIG otherwise). */
int json_want_array(json_t *v, const struct json_at *at, size_t max, bool required, struct km_error *err);
