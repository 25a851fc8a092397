/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the unit tests.  Include after <cmocka.h>.
 *
 * Fixture files live in tests/data/; meson passes the directory in
 * KM_TEST_DATA_DIR (the compile-time default lets a test binary run by hand).
 */
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubemount.h"

#ifndef KM_TEST_DATA_DIR_DEFAULT
#define KM_TEST_DATA_DIR_DEFAULT "tests/data"
#endif

/*
 * A diagnostic line in the TAP stream ("# ..."); control characters (paths
 * with newlines) are shown as '?' so that they cannot break the protocol.
 */
__attribute__((format(printf, 1, 2))) static inline void test_note(const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        for (char *p = buf; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = '?';
        printf("# %s\n", buf);
}

/* The number of words of a NULL-terminated argv (built with an ARGV(...) literal). */
static inline int test_argc(const char *const *argv) {
        int n = 0;

        while (argv[n])
                n++;
        return n;
}

/* Path of a fixture under tests/data/ (static buffer, valid until the next call). */
static inline const char *test_data_path(const char *name) {
        static char path[PATH_MAX];
        const char *dir = getenv("KM_TEST_DATA_DIR");

        snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : KM_TEST_DATA_DIR_DEFAULT, name);
        return path;
}

/* A fresh directory under $TMPDIR (or /tmp); free() the result after rmdir. */
static inline char *test_mkdtemp(void) {
        const char *tmp = getenv("TMPDIR");
        char *path = NULL;

        assert_true(asprintf(&path, "%s/kubemount-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp") > 0);
        assert_non_null(mkdtemp(path));
        return path;
}

/* Writes size bytes to a new temp file and returns its malloc'ed path. */
static inline char *test_write_temp(const void *data, size_t size) {
        const char *tmp = getenv("TMPDIR");
        char *path = NULL;
        int fd;

        assert_true(asprintf(&path, "%s/kubemount-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp") > 0);
        fd = mkostemp(path, O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t)size);
        assert_int_equal(close(fd), 0);
        return path;
}

static inline char *test_write_temp_string(const char *s) {
        return test_write_temp(s, strlen(s));
}

static inline void test_unlink_and_free(char *path) {
        if (path) {
                unlink(path);
                free(path);
        }
}

static inline int test_rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

/* Removes the tree at path (a test's own temp dir) and frees path; NULL is nothing. */
static inline void test_rm_rf(char *path) {
        if (path) {
                nftw(path, test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                free(path);
        }
}

/* "a/b", allocated; fails the test when out of memory. */
static inline char *test_join(const char *a, const char *b) {
        char *p = NULL;

        assert_true(asprintf(&p, "%s/%s", a, b) > 0);
        return p;
}

/* Loads a fixture and fails the test on error. */
static inline struct km_mount_table *test_load_fixture(const char *name) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        int r = km_mount_table_load(NULL, test_data_path(name), &t, &err);

        if (r < 0)
                fail_msg("loading %s: %d %s", name, r, err.message);
        assert_non_null(t);
        return t;
}

/* The mount whose target is path; fails the test when there is none. */
static inline const struct km_mount *test_find(const struct km_mount_table *t, const char *path) {
        const struct km_mount *m = km_mount_table_find_target(t, path);

        if (!m)
                fail_msg("no mount at '%s'", path);
        return m;
}

/*
 * Runs child(TMP) in a forked process, TMP a new empty temp dir removed
 * afterwards.  For tests that mount: the child makes its own private mount
 * namespace and _exit()s 0 on success, 77 when it cannot (then the test
 * skips, as it does without root), anything else on failure.
 */
static inline void test_in_child_as_root(void (*child)(const char *tmp)) {
        char *tmp;
        int status;
        pid_t pid;

        if (geteuid() != 0) {
                test_note("skipped: needs root for a tmpfs in a private mount namespace");
                skip();
        }
        tmp = test_mkdtemp();
        fflush(stdout);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                child(tmp);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(rmdir(tmp), 0);
        free(tmp);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
                test_note("skipped: no mount namespace here");
                skip();
        }
        assert_int_equal(WEXITSTATUS(status), 0);
}
