/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Error objects and the debug logging hook. */
#include <stdarg.h>

#include "util.h"

KM_EXPORT const char *km_version(void) {
        return KM_VERSION;
}

/* FMT, then ": SUFFIX" if there is one and room for it. */
static int error_vset(struct km_error *err, int r, const char *suffix, const char *fmt, va_list ap) {
        int n;

        if (!err)
                return r;
        err->code = r;
        n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
        if (suffix && n >= 0 && (size_t)n < sizeof(err->message))
                snprintf(err->message + n, sizeof(err->message) - n, ": %s", suffix);
        return r;
}

int error_set(struct km_error *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_vset(err, r, r < 0 ? strerror(-r) : NULL, fmt, ap);
        va_end(ap);
        return r;
}

int error_set_plain(struct km_error *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_vset(err, r, NULL, fmt, ap);
        va_end(ap);
        return r;
}

int error_wrap(struct km_error *err, int r, const char *fmt, ...) {
        char inner[KM_ERROR_MAX];
        va_list ap;

        if (!err)
                return r;
        /* A callee that set nothing: what error_set() would say. */
        if (err->code == 0)
                snprintf(inner, sizeof(inner), "%s", r < 0 ? strerror(-r) : "");
        else
                snprintf(inner, sizeof(inner), "%.*s", (int)sizeof(err->message), err->message);
        va_start(ap, fmt);
        error_vset(err, r, *inner ? inner : NULL, fmt, ap);
        va_end(ap);
        return r;
}

static km_log_fn log_fn;
static void *log_userdata;
static int log_max_level = -1;

KM_EXPORT void km_log_set(km_log_fn fn, void *userdata, int max_level) {
        log_fn = fn;
        log_userdata = userdata;
        log_max_level = fn ? max_level : -1;
}

bool log_enabled(int level) {
        return log_fn && level <= log_max_level;
}

static _Thread_local const char *const *log_fields_current;

KM_EXPORT const char *const *km_log_fields(void) {
        return log_fields_current;
}

void log_event(int level, const char *message_id, const char *const *pairs, const char *fmt, ...) {
        const char *fields[16] = {};
        char buf[1024], id[64], kv[14][512];
        size_t n = 0;
        va_list ap;

        if (!log_fn)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        snprintf(id, sizeof(id), "MESSAGE_ID=%s", message_id);
        fields[n++] = id;
        for (size_t i = 0; pairs && pairs[i] && n < ELEMENTSOF(kv) + 1; i += 2)
                if (pairs[i + 1]) {
                        snprintf(kv[n - 1], sizeof(kv[0]), "%s=%s", pairs[i], pairs[i + 1]);
                        fields[n] = kv[n - 1];
                        n++;
                }
        /* An event reaches the sink whatever its max_level: km_log_fields() tells it apart. */
        log_fields_current = fields;
        log_fn(level, buf, log_userdata);
        log_fields_current = NULL;
}

void log_msg(int level, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        if (!log_enabled(level))
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        log_fn(level, buf, log_userdata);
}
