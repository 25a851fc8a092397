/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Macros and inline helpers of no file's own, below everything (as systemd's
 * macro.h): attributes, the cleanup functions of libc's types, TAKE_PTR and
 * TAKE_FD, streq.  Only libc headers here, so that any file, syscalls.c
 * included, may use them without depending on util.c.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KM_EXPORT __attribute__((visibility("default")))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) {
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes *fd if open and marks it closed (-EBADF). */
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
        *fd = -EBADF;
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)
/* json_decrefp() of jansson-dl.h, for files that include it. */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* Declares a cleanup function freep_NAME for pointers of TYPE freed by FUNC. */
#define DEFINE_CLEANUP(type, func)                                                                                     \
        static inline void func##p(type **p) {                                                                         \
                if (*p)                                                                                                \
                        func(*p);                                                                                      \
        }

/* libc's own types; kubemount.h's are in util.h. */
DEFINE_CLEANUP(DIR, closedir)

#define TAKE_PTR(p)                                                                                                    \
        ({                                                                                                             \
                __typeof__(p) _p = (p);                                                                                \
                (p) = NULL;                                                                                            \
                _p;                                                                                                    \
        })
#define TAKE_FD(fd)                                                                                                    \
        ({                                                                                                             \
                int _fd = (fd);                                                                                        \
                (fd) = -EBADF;                                                                                         \
                _fd;                                                                                                   \
        })

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}
static inline bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}
