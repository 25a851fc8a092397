/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An assert() that NDEBUG cannot turn off: a broken invariant is a finding. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(expr)                                                                                                    \
        do {                                                                                                           \
                if (!(expr)) {                                                                                         \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr);                       \
                        abort();                                                                                       \
                }                                                                                                      \
        } while (0)

/*
 * The input as an argv after argv[0]: a malloc'ed copy (returned, to be
 * freed) cut into words at NUL bytes; a trailing NUL adds no empty word.
 * argv has room for max + 2 entries.  Returns the copy; *argc is set.
 */
static inline char *fuzz_argv(const uint8_t *data, size_t size, char **argv, int max, int *argc) {
        char *buf = malloc(size + 1);

        check(buf);
        memcpy(buf, data, size);
        buf[size] = '\0';
        *argc = 1;
        for (size_t start = 0; start < size && *argc <= max;) {
                size_t len = strnlen(buf + start, size - start);
                argv[(*argc)++] = buf + start;
                start += len + 1;
        }
        argv[*argc] = NULL;
        return buf;
}
