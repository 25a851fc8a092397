/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jansson, loaded on first use: the mount, umount and is-mountpoint paths
 * (and the nsenter shim) never touch JSON, and each library the loader maps
 * costs every exec.  Include this instead of <jansson.h>: every json_*
 * function below becomes a checked call through its sym_* pointer, with
 * <jansson.h>'s prototype, so call sites are unchanged and type-checked.
 *
 * A call loads jansson itself if no one did (pthread_once), so no path can
 * reach a NULL pointer; if that load fails, the process ends with one line
 * naming the library and status 127, as the dynamic loader's own start-up
 * failure did when jansson was linked.  Commands that know they need JSON
 * (the CLI's container and image commands) call dlopen_jansson() first, for
 * an error of their own and a load before any fork or namespace switch.
 *
 * A function missing here (or one of <jansson.h>'s inline helpers that call
 * a real symbol, such as json_object_set) is a link error, since nothing
 * links jansson: add it to the list.
 */
#pragma once

#include <jansson.h>

#include "dl.h"

#define KM_JANSSON_SYMBOLS(X)                                                                                          \
        X(json_array)                                                                                                  \
        X(json_array_append_new)                                                                                       \
        X(json_array_extend)                                                                                           \
        X(json_array_get)                                                                                              \
        X(json_array_set_new)                                                                                          \
        X(json_array_size)                                                                                             \
        X(json_copy)                                                                                                   \
        X(json_deep_copy)                                                                                              \
        X(json_delete)                                                                                                 \
        X(json_dumpf)                                                                                                  \
        X(json_dumps)                                                                                                  \
        X(json_equal)                                                                                                  \
        X(json_false)                                                                                                  \
        X(json_integer)                                                                                                \
        X(json_integer_value)                                                                                          \
        X(json_load_file)                                                                                              \
        X(json_loadb)                                                                                                  \
        X(json_loads)                                                                                                  \
        X(json_null)                                                                                                   \
        X(json_object)                                                                                                 \
        X(json_object_del)                                                                                             \
        X(json_object_get)                                                                                             \
        X(json_object_iter)                                                                                            \
        X(json_object_iter_key)                                                                                        \
        X(json_object_iter_next)                                                                                       \
        X(json_object_iter_value)                                                                                      \
        X(json_object_key_to_iter)                                                                                     \
        X(json_object_set_new)                                                                                         \
        X(json_pack)                                                                                                   \
        X(json_sprintf)                                                                                                \
        X(json_string)                                                                                                 \
        X(json_string_length)                                                                                          \
        X(json_string_value)                                                                                           \
        X(json_stringn)                                                                                                \
        X(json_true)                                                                                                   \
        X(json_unpack)

KM_JANSSON_SYMBOLS(DL_DECLARE_SYM)
extern bool jansson_ready;

/* 0 once jansson is loaded (thread-safe, once), else -EOPNOTSUPP with the reason logged. */
int dlopen_jansson(void);
/*
 * dlopen_jansson() with the reason in err.  The library's entry points that use
 * JSON call it first: a load inside a host namespace switch would take the
 * host's libjansson, and a failed one would end the caller's process.
 */
int jansson_require(struct km_error *err);
/* dlopen_jansson(), or the one-line error and _exit(127). */
void jansson_load_or_exit(void);
/* A JSON array of the strings of NULL-terminated v (NULL: empty), or NULL without memory. */
json_t *json_from_strv(char *const *v);

static inline void jansson_need(void) {
        if (__builtin_expect(!__atomic_load_n(&jansson_ready, __ATOMIC_ACQUIRE), 0))
                jansson_load_or_exit();
}
#define JANSSON(f) (*(jansson_need(), sym_##f))

#define json_array JANSSON(json_array)
#define json_array_append_new JANSSON(json_array_append_new)
#define json_array_extend JANSSON(json_array_extend)
#define json_array_get JANSSON(json_array_get)
#define json_array_set_new JANSSON(json_array_set_new)
#define json_array_size JANSSON(json_array_size)
#define json_copy JANSSON(json_copy)
#define json_deep_copy JANSSON(json_deep_copy)
#define json_delete JANSSON(json_delete)
#define json_dumpf JANSSON(json_dumpf)
#define json_dumps JANSSON(json_dumps)
#define json_equal JANSSON(json_equal)
#define json_false JANSSON(json_false)
#define json_integer JANSSON(json_integer)
#define json_integer_value JANSSON(json_integer_value)
#define json_load_file JANSSON(json_load_file)
#define json_loadb JANSSON(json_loadb)
#define json_loads JANSSON(json_loads)
#define json_null JANSSON(json_null)
#define json_object JANSSON(json_object)
#define json_object_del JANSSON(json_object_del)
#define json_object_get JANSSON(json_object_get)
#define json_object_iter JANSSON(json_object_iter)
#define json_object_iter_key JANSSON(json_object_iter_key)
#define json_object_iter_next JANSSON(json_object_iter_next)
#define json_object_iter_value JANSSON(json_object_iter_value)
#define json_object_key_to_iter JANSSON(json_object_key_to_iter)
#define json_object_set_new JANSSON(json_object_set_new)
#define json_pack JANSSON(json_pack)
#define json_sprintf JANSSON(json_sprintf)
#define json_string JANSSON(json_string)
#define json_string_length JANSSON(json_string_length)
#define json_string_value JANSSON(json_string_value)
#define json_stringn JANSSON(json_stringn)
#define json_true JANSSON(json_true)
#define json_unpack JANSSON(json_unpack)

/*
 * <jansson.h>'s inline helpers that call real symbols (json_decref calls
 * json_delete), redone over the pointers.  Object-like macros, so that
 * _cleanup_(json_decrefp) and DEFINE_CLEANUP(json_t, json_decref) are covered.
 */
static inline void km_json_decref(json_t *json) {
        if (json && json->refcount != (size_t)-1 && JSON_INTERNAL_DECREF(json) == 0)
                json_delete(json);
}
static inline void km_json_decrefp(json_t **json) {
        if (json) {
                km_json_decref(*json);
                *json = NULL;
        }
}
static inline int km_json_array_append(json_t *array, json_t *value) {
        return json_array_append_new(array, json_incref(value));
}
#define json_decref km_json_decref
#define json_decrefp km_json_decrefp
#define json_array_append km_json_array_append
