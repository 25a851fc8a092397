/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "EPERM" for EPERM (glibc 2.32), "E123" for a number it has no name for: the test programs' output. */
#pragma once

#include <stdio.h>
#include <string.h>

static inline const char *errname(int e) {
        static char buf[32];
        const char *n = strerrorname_np(e);

        if (n)
                return n;
        snprintf(buf, sizeof(buf), "E%d", e);
        return buf;
}
