/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rm_rf_at (a container's writable layer, filled by the container): whole
 * trees go, symlinks are removed and never followed (what they point at
 * stays), directories without permissions go too, a tree deeper than the
 * fd limit goes with a few fds, a missing name is fine, a file is unlinked;
 * a mount point below stops it with -EBUSY and nothing of the mounted
 * filesystem is touched (that one needs root and a throwaway mount
 * namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rm-rf.h"
#include "test-helpers.h"

static void put(int dfd, const char *name, const char *text) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        assert_int_equal(close(fd), 0);
}

static bool exists(int dfd, const char *name) {
        struct stat st;

        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_tree(void **state) {
        char *tmp = test_mkdtemp(), what[256];
        int top = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(top >= 0);
        /* Outside the tree: what its links point at. */
        assert_int_equal(mkdirat(top, "outside", 0700), 0);
        put(top, "outside/keep", "keep");
        /* The tree: files, a whiteout-like node, links out, a directory nobody may enter. */
        assert_int_equal(mkdirat(top, "layer", 0700), 0);
        assert_int_equal(mkdirat(top, "layer/upper", 0755), 0);
        assert_int_equal(mkdirat(top, "layer/upper/bin", 0755), 0);
        put(top, "layer/upper/bin/mount.nfs", "pwned");
        assert_int_equal(mkfifoat(top, "layer/upper/bin/fifo", 0600), 0);
        assert_int_equal(symlinkat("../../../outside", top, "layer/upper/out"), 0);
        assert_int_equal(symlinkat(tmp, top, "layer/upper/abs"), 0);
        assert_int_equal(mkdirat(top, "layer/work", 0700), 0);
        assert_int_equal(mkdirat(top, "layer/work/work", 0700), 0);
        put(top, "layer/work/work/x", "x");
        if (geteuid() == 0) /* overlayfs leaves work/work so; only root gets in there */
                assert_int_equal(fchmodat(top, "layer/work/work", 0, 0), 0);

        assert_int_equal(rm_rf_at(top, "layer", what, sizeof(what)), 0);
        assert_false(exists(top, "layer"));
        assert_true(exists(top, "outside/keep"));
        /* Gone already, and a file where a tree was expected. */
        assert_int_equal(rm_rf_at(top, "layer", what, sizeof(what)), 0);
        put(top, "file", "x");
        assert_int_equal(rm_rf_at(top, "file", NULL, 0), 0);
        assert_false(exists(top, "file"));
        assert_int_equal(symlinkat("outside", top, "link"), 0);
        assert_int_equal(rm_rf_at(top, "link", NULL, 0), 0);
        assert_false(exists(top, "link"));
        assert_true(exists(top, "outside/keep"));

        assert_int_equal(rm_rf_at(top, "outside", NULL, 0), 0);
        close(top);
        assert_int_equal(rmdir(tmp), 0);
        free(tmp);
}

/* A chain deeper than RLIMIT_NOFILE: one fd per level would run out. */
static void test_deep(void **state) {
        char *tmp = test_mkdtemp();
        int top = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
        struct rlimit old, low;

        assert_true(top >= 0);
        assert_int_equal(mkdirat(top, "deep", 0755), 0);
        fd = openat(top, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < 500; i++) {
                int next;

                put(fd, "f", "x");
                assert_int_equal(mkdirat(fd, "d", 0755), 0);
                next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                assert_true(next >= 0);
                close(fd);
                fd = next;
        }
        close(fd);
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
        low = (struct rlimit){ 64, old.rlim_max }; /* the soft limit only: it can be raised again */
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        assert_int_equal(rm_rf_at(top, "deep", NULL, 0), 0);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
        assert_false(exists(top, "deep"));
        close(top);
        assert_int_equal(rmdir(tmp), 0);
        free(tmp);
}

/* In a child with a private mount namespace: a tmpfs mounted in the tree. */
static _Noreturn void mount_child(const char *tmp) {
        char what[256], path[4096];
        int top;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                _exit(77);
        top = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (top < 0 || mkdirat(top, "layer", 0700) < 0 || mkdirat(top, "layer/m", 0700) < 0)
                _exit(1);
        snprintf(path, sizeof(path), "%s/layer/m", tmp);
        if (mount("tmpfs", path, "tmpfs", 0, "size=64k") < 0)
                _exit(1);
        put(top, "layer/m/mounted", "keep");
        if (rm_rf_at(top, "layer", what, sizeof(what)) != -EBUSY || strcmp(what, "m") != 0)
                _exit(2);
        if (!exists(top, "layer/m/mounted"))
                _exit(3);
        if (umount2(path, MNT_DETACH) < 0 || rm_rf_at(top, "layer", what, sizeof(what)) != 0)
                _exit(4);
        _exit(0);
}

static void test_mount_point(void **state) {
        test_in_child_as_root(mount_child);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tree),
                cmocka_unit_test(test_deep),
                cmocka_unit_test(test_mount_point),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
