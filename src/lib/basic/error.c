/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Error objects and the debug logging hook. */
#include <stdarg.h>

#include "util.h"

KM_EXPORT const char *km_version(void) {
        return KM_VERSION;
}

int error_set(struct km_error *err, int r, const char *fmt, ...) {
        if (err) {
                va_list ap;
                int n;

                err->code = r;
                va_start(ap, fmt);
                n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
                if (r < 0 && n >= 0 && (size_t)n < sizeof(err->message))
                        snprintf(err->message + n, sizeof(err->message) - n, ": %s", strerror(-r));
        }
        return r;
}

int error_set_plain(struct km_error *err, int r, const char *fmt, ...) {
        if (err) {
                va_list ap;

                err->code = r;
                va_start(ap, fmt);
                vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
        }
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
