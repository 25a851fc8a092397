/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An assert() that NDEBUG cannot turn off: a broken invariant is a finding. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define check(expr)                                                                                        \
        do {                                                                                               \
                if (!(expr)) {                                                                             \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr);           \
                        abort();                                                                           \
                }                                                                                          \
        } while (0)
