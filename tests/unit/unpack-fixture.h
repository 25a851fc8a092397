/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fixture of test-unpack.c and test-unpack-layers.c: BASE/root to
 * unpack into, BASE/canary outside it that must come out unchanged, and
 * layers written with libarchive into memfds (tw_*), applied (apply*).
 */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "test-helpers.h"
#include "unpack-tree.h"
#include "unpack.h"

#define CANARY "canary contents\n"
#define MiB (1024 * 1024)

struct fixture {
        char *base;
        int basefd, rootfd;
};

static struct fixture *F;

/* ---- writing layers ---- */

static inline struct archive *tw_new(char filter, int *ret_fd) {
        struct archive *a = archive_write_new();

        *ret_fd = memfd_create("layer", MFD_CLOEXEC);
        assert_true(*ret_fd >= 0);
        assert_non_null(a);
        assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
        if (filter == 'g')
                assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
        else if (filter == 'z')
                assert_int_equal(archive_write_add_filter_zstd(a), ARCHIVE_OK);
        assert_int_equal(archive_write_open_fd(a, *ret_fd), ARCHIVE_OK);
        return a;
}

/* Closes the writer; the layer fd is rewound for reading. */
static inline int tw_done(struct archive *a, int fd) {
        assert_int_equal(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static inline struct archive_entry *ent(const char *name, mode_t type, mode_t perm) {
        struct archive_entry *e = archive_entry_new();

        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, type);
        archive_entry_set_perm(e, perm);
        archive_entry_set_mtime(e, 1500000000, 0);
        return e;
}

static inline void put(struct archive *a, struct archive_entry *e, const void *data, size_t len) {
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        if (len)
                assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
        archive_entry_free(e);
}

static inline void tw_file(struct archive *a, const char *name, mode_t perm, const char *data) {
        struct archive_entry *e = ent(name, AE_IFREG, perm);

        archive_entry_set_size(e, strlen(data));
        put(a, e, data, strlen(data));
}

#define tw_dir(a, name, perm) put(a, ent(name, AE_IFDIR, perm), NULL, 0)

/* A symlink (type AE_IFLNK), a hard link (AE_IFREG) to target, or a node (target NULL). */
static inline void tw_link(struct archive *a, const char *name, mode_t type, const char *target) {
        struct archive_entry *e = ent(name, type, type == AE_IFLNK ? 0777 : 0644);

        if (type == AE_IFLNK)
                archive_entry_set_symlink(e, target);
        else if (target)
                archive_entry_set_hardlink(e, target);
        archive_entry_set_rdev(e, makedev(1, 3));
        put(a, e, NULL, 0);
}
#define tw_symlink(a, name, target) tw_link(a, name, AE_IFLNK, target)
#define tw_hardlink(a, name, target) tw_link(a, name, AE_IFREG, target)
#define tw_node(a, name, type) tw_link(a, name, type, NULL)

/* A layer of one entry (a file with data "x" unless type says otherwise). */
static inline int one_entry(const char *name, mode_t type, const char *target) {
        int fd;
        struct archive *a = tw_new('n', &fd);

        if (type == AE_IFLNK)
                tw_symlink(a, name, target);
        else if (target)
                tw_hardlink(a, name, target);
        else if (type == AE_IFDIR)
                tw_dir(a, name, 0755);
        else
                tw_file(a, name, 0644, "x");
        return tw_done(a, fd);
}

/* ---- applying and looking ---- */

/* Applies the layer (and closes its fd). */
static inline int apply(int fd, const struct unpack_limits *lim, struct unpack_stats *st, struct km_error *err) {
        int r = unpack_layer(fd, F->rootfd, lim, st, err);

        if (r < 0)
                test_note("unpack: %d %s", r, err->message);
        close(fd);
        return r;
}

#define apply_ok(fd) assert_int_equal(apply(fd, NULL, NULL, &(struct km_error){}), 0)

static inline void apply_refused(int fd, int expected, const char *message) {
        struct km_error err = {};

        assert_int_equal(apply(fd, NULL, NULL, &err), expected);
        if (message)
                assert_string_equal(err.message, message);
}

#define exists(path) (fstatat(F->rootfd, path, &(struct stat){}, AT_SYMLINK_NOFOLLOW) == 0)

static inline mode_t mode_of(const char *path) {
        struct stat st;

        assert_int_equal(fstatat(F->rootfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mode;
}

static inline void assert_content_at(int dirfd, const char *path, const char *want) {
        char buf[256] = "";
        int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, want);
}
#define assert_content(path, want) assert_content_at(F->rootfd, path, want)

static inline int count_entries(int dirfd, const char *path) {
        DIR *d = fdopendir(openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        int n = 0;

        assert_non_null(d);
        for (struct dirent *de; (de = readdir(d));)
                n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
        closedir(d);
        return n;
}

/* BASE holds only root/ and canary/, and canary/ is as setup() made it. */
static inline void assert_canary(void) {
        struct stat st;

        assert_int_equal(count_entries(F->basefd, "."), 2);
        assert_int_equal(count_entries(F->basefd, "canary"), 2);
        assert_int_equal(count_entries(F->basefd, "canary/etc"), 0);
        assert_int_equal(fstatat(F->basefd, "canary/victim", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1 && (st.st_mode & 07777) == 0600);
        assert_content_at(F->basefd, "canary/victim", CANARY);
}

/* An empty BASE/root in place of the old one. */
static inline void fresh_root(void) {
        if (F->rootfd >= 0) {
                close(F->rootfd);
                assert_int_equal(unpack_remove_tree(F->basefd, "root"), 0);
        }
        assert_int_equal(mkdirat(F->basefd, "root", 0755), 0);
        F->rootfd = openat(F->basefd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(F->rootfd >= 0);
}

static inline int setup(void **state) {
        int fd;

        F = calloc(1, sizeof(*F));
        assert_non_null(F);
        F->base = test_mkdtemp();
        F->basefd = open(F->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(F->basefd >= 0);
        F->rootfd = -EBADF;
        fresh_root();
        assert_int_equal(mkdirat(F->basefd, "canary", 0755), 0);
        assert_int_equal(mkdirat(F->basefd, "canary/etc", 0755), 0);
        fd = openat(F->basefd, "canary/victim", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, CANARY, strlen(CANARY)), strlen(CANARY));
        close(fd);
        *state = F;
        return 0;
}

static inline int teardown(void **state) {
        assert_canary();
        close(F->rootfd);
        assert_int_equal(unpack_remove_tree(F->basefd, "root"), 0);
        assert_int_equal(unpack_remove_tree(F->basefd, "canary"), 0);
        close(F->basefd);
        assert_int_equal(rmdir(F->base), 0);
        free(F->base);
        free(F);
        return 0;
}

/*
 * Runs fn in a child in a private mount namespace (root only), with the
 * fixture's fds reopened there: fds from before unshare() still walk the
 * old namespace's mounts.  fn exits 0 on success, 77 to skip.
 */
static inline void run_private(void (*fn)(void)) {
        int status;
        pid_t pid;

        if (geteuid() != 0) {
                test_note("SKIP: needs root for a private mount namespace");
                return;
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(77);
                close(F->rootfd);
                close(F->basefd);
                F->basefd = open(F->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
                F->rootfd = openat(F->basefd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
                fn();
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                test_note("SKIP: no private mount namespace here");
        else
                assert_int_equal(WEXITSTATUS(status), 0);
}
