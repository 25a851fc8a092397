/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fresh store for each store test (test-store.c, test-store-rootfs.c):
 * BASE, a new temp dir, and STORE_DIR = BASE/store (not created), removed
 * with everything below it, 0555 image dirs included.  Include after
 * <cmocka.h> and test-helpers.h.
 */
#pragma once

#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

static char *base, *store_dir;

static int store_fixture_setup(void) {
        base = test_mkdtemp();
        assert_true(asprintf(&store_dir, "%s/store", base) > 0);
        return 0;
}

/* Image dirs may be 0555: made writable on the way in, removed on the way out. */
static int store_fixture_rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        (void)ftw;
        (void)(type == FTW_D ? chmod(path, 0700) : remove(path));
        return 0;
}

static int teardown(void **state) {
        (void)state;
        nftw(base, store_fixture_rm_entry, 16, FTW_PHYS);
        nftw(base, store_fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(store_dir);
        free(base);
        return 0;
}

/* STORE/... formatted into one of 8 rotating static buffers. */
__attribute__((format(printf, 1, 2))) static const char *P(const char *fmt, ...) {
        static char bufs[8][PATH_MAX + 64];
        static unsigned next;
        char *b = bufs[next++ % 8], rel[PATH_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        snprintf(b, sizeof(bufs[0]), "%s/%s", store_dir, rel);
        return b;
}
