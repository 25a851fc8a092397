/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fresh store for each store test (test-store.c, test-store-rootfs.c):
 * BASE, a new temp dir, and STORE_DIR = BASE/store (not created), removed
 * with everything below it, 0555 image dirs included; open_store() and
 * count().  Include after <cmocka.h>, test-helpers.h and store.h.
 */
#pragma once

#include <dirent.h>
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

static struct store *open_store(void) {
        struct km_error err = {};
        struct store *s = NULL;
        int r = store_open(store_dir, &s, &err);

        if (r < 0)
                fail_msg("store_open %s: %d %s", store_dir, r, err.message);
        return s;
}

/* Entries of STORE/REL ("." and ".." not counted); -1 if it cannot be opened. */
static int count(const char *rel) {
        DIR *d = opendir(P("%s", rel));
        struct dirent *de;
        int n = 0;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        closedir(d);
        return n;
}
