/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unpack_layer on layers written here with libarchive into memfds
 * (unpack-fixture.h): hostile entries (THREATS 22), bombs (23),
 * compressions; layers over layers and unpack_remove_tree in
 * test-unpack-layers.c.
 *
 * Each test unpacks into BASE/root; BASE/canary is outside the root and
 * must come out unchanged.  Ownership is checked only as root; the cases
 * that aim at the machine's /etc run in a child whose /etc is a fresh tmpfs
 * in a private mount namespace (root only), so a bug cannot touch the real one.
 */
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

#include "unpack-fixture.h"

/* ---- formats ---- */

static int sample_layer(char filter) {
        int fd;
        struct archive *a = tw_new(filter, &fd);

        tw_dir(a, "./", 0755);
        tw_dir(a, "./etc/", 0755);
        tw_file(a, "./etc/hostname", 0644, "vcs\n");
        tw_symlink(a, "./etc/alias", "hostname");
        tw_hardlink(a, "./etc/hard", "./etc/hostname");
        tw_node(a, "./etc/pipe", AE_IFIFO);
        tw_file(a, "usr//bin/./tool", 0755, "#!/bin/sh\n"); /* parents made on the way */
        return tw_done(a, fd);
}

static void test_plain_gzip_zstd(void **state) {
        const char filters[] = { 'n', 'g', 'z' };

        for (size_t i = 0; i < ELEMENTSOF(filters); i++) {
                struct unpack_stats st = {};
                struct km_error err = {};
                struct stat a, b;
                char link[64] = "";

                test_note("filter %c", filters[i]);
                assert_int_equal(apply(sample_layer(filters[i]), NULL, &st, &err), 0);
                assert_int_equal(st.entries, 7);
                assert_int_equal(st.bytes, 14);
                assert_content("etc/hostname", "vcs\n");
                assert_int_equal(readlinkat(F->rootfd, "etc/alias", link, sizeof(link)), 8);
                assert_int_equal(fstatat(F->rootfd, "etc/hostname", &a, 0), 0);
                assert_int_equal(fstatat(F->rootfd, "etc/hard", &b, 0), 0);
                assert_int_equal(a.st_ino, b.st_ino);
                assert_true(S_ISFIFO(mode_of("etc/pipe")));
                assert_int_equal(mode_of("usr/bin") & 07777, 0755);
                assert_int_equal(mode_of("usr/bin/tool") & 07777, 0755);
                assert_int_equal(a.st_mtime, 1500000000);
                fresh_root();
        }
}

static void test_empty_and_garbage(void **state) {
        int fd = memfd_create("layer", MFD_CLOEXEC);
        struct km_error err = {};

        apply_ok(fcntl(fd, F_DUPFD_CLOEXEC, 3));
        assert_int_equal(write(fd, "garbage, not a tar archive at all", 33), 33);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_true(apply(fd, NULL, NULL, &err) < 0);
        assert_non_null(strstr(err.message, "layer: "));
}

/* ---- THREATS 22 ---- */

static void test_dotdot_refused(void **state) {
        apply_refused(one_entry("etc/../../x", AE_IFREG, NULL), -EPERM, "layer: entry 'etc/../../x': '..' refused");
        apply_refused(one_entry("../x", AE_IFREG, NULL), -EPERM, "layer: entry '../x': '..' refused");
        apply_refused(one_entry("a/..", AE_IFDIR, NULL), -EPERM, NULL);
        apply_refused(one_entry("/../x", AE_IFREG, NULL), -EPERM, "layer: entry '/../x': '..' refused");
        assert_int_equal(count_entries(F->rootfd, "."), 0);
}

/* Absolute names are read inside the root, as containerd and umoci read them. */
static void test_absolute_inside_root(void **state) {
        char abs[PATH_MAX];
        int fd;
        struct archive *a = tw_new('n', &fd);

        tw_file(a, "/abs", 0644, "abs");
        tw_file(a, "//etc///x", 0600, "x");
        snprintf(abs, sizeof(abs), "%s/canary/victim", F->base); /* the real canary's own absolute path */
        tw_file(a, abs, 0644, "pwned?");
        tw_hardlink(a, "/hard", "/etc/x");
        apply_ok(tw_done(a, fd));
        assert_content("abs", "abs");
        assert_content("etc/x", "x");
        assert_int_equal(mode_of("etc/x") & 07777, 0600);
        assert_content(abs + 1, "pwned?"); /* BASE/root/BASE/canary/victim, not BASE/canary/victim */
        assert_content("hard", "x");
        assert_int_equal(count_entries(F->rootfd, "."), 4); /* abs, etc, hard and the first component of BASE */
}

/* A layer as umoci insert writes it: "/" for the root, then relative names. */
static void test_umoci_root_entry(void **state) {
        struct unpack_stats st = {};
        struct km_error err = {};
        int fd;
        struct archive *a = tw_new('g', &fd);

        tw_dir(a, "/", 0755);
        tw_dir(a, "etc/", 0755);
        tw_file(a, "etc/x", 0644, "hi\n");
        assert_int_equal(apply(tw_done(a, fd), NULL, &st, &err), 0);
        assert_int_equal(st.entries, 3);
        assert_content("etc/x", "hi\n");
        assert_int_equal(count_entries(F->rootfd, "."), 1);
}

static void test_symlink_out_then_through(void **state) {
        char abs[PATH_MAX], inner[PATH_MAX];
        struct km_error err = {};
        int fd;
        struct archive *a;

        /* The link's target does not exist inside the root: refused, nothing written anywhere. */
        snprintf(abs, sizeof(abs), "%s/canary", F->base);
        a = tw_new('n', &fd);
        tw_symlink(a, "link", abs);
        tw_file(a, "link/victim", 0644, "pwned");
        assert_true(apply(tw_done(a, fd), NULL, NULL, &err) < 0);
        assert_non_null(strstr(err.message, "layer: entry 'link/victim': "));
        a = tw_new('n', &fd);
        tw_symlink(a, "rel", "../../canary");
        tw_file(a, "rel/victim", 0644, "pwned");
        assert_true(apply(tw_done(a, fd), NULL, NULL, &err) < 0);

        /* With the target made inside the root, the file lands there. */
        a = tw_new('n', &fd);
        snprintf(inner, sizeof(inner), "%s/canary/", F->base + 1);
        for (char *s = inner; (s = strchr(s, '/')); s++) {
                *s = '\0';
                tw_dir(a, inner, 0755);
                *s = '/';
        }
        tw_symlink(a, "link2", abs);
        tw_file(a, "link2/victim", 0644, "inside");
        tw_symlink(a, "rel2", "../../../../../../../../../../../");
        tw_file(a, "rel2/top", 0644, "top");
        apply_ok(tw_done(a, fd));
        snprintf(inner, sizeof(inner), "%s/canary/victim", F->base + 1);
        assert_content(inner, "inside");
        assert_content("top", "top");
}

static void test_hardlinks_out_refused(void **state) {
        char abs[PATH_MAX];
        struct km_error err = {};
        int fd;
        struct archive *a;

        apply_refused(one_entry("h", AE_IFREG, "../canary/victim"), -EPERM,
                      "layer: entry 'h': hard link target: '..' refused");
        /* Absolute targets are read inside the root, where there is no such file. */
        apply_refused(one_entry("h", AE_IFREG, "/etc/shadow"), -ENOENT, NULL);
        snprintf(abs, sizeof(abs), "%s/canary/victim", F->base);
        apply_refused(one_entry("h", AE_IFREG, abs), -ENOENT, NULL);
        assert_false(exists("h"));

        /* Through a symlink: resolved inside the root, where there is no such file. */
        snprintf(abs, sizeof(abs), "%s/canary", F->base);
        a = tw_new('n', &fd);
        tw_symlink(a, "c", abs);
        tw_hardlink(a, "h", "c/victim");
        assert_int_equal(apply(tw_done(a, fd), NULL, NULL, &err), -ENOENT);
        assert_false(exists("h"));
        apply_refused(one_entry("missing-target", AE_IFREG, "nothing-here"), -ENOENT, NULL);
}

static void test_hardlink_to_symlink_links_the_symlink(void **state) {
        struct stat a, b;
        int fd;
        struct archive *arch = tw_new('n', &fd);

        tw_symlink(arch, "s", "/etc/shadow");
        tw_hardlink(arch, "h", "s");
        tw_dir(arch, "d/", 0755);
        apply_ok(tw_done(arch, fd));
        assert_int_equal(fstatat(F->rootfd, "s", &a, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(fstatat(F->rootfd, "h", &b, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISLNK(b.st_mode));
        assert_int_equal(a.st_ino, b.st_ino);
        apply_refused(one_entry("h2", AE_IFREG, "d"), -EPERM, "layer: entry 'h2': hard link to a directory refused");
}

static void test_root_names_refused(void **state) {
        apply_refused(one_entry(".", AE_IFLNK, "/etc"), -EPERM, "layer: entry '.': names the root");
        apply_refused(one_entry("./", AE_IFLNK, "/etc"), -EPERM, NULL);
        apply_refused(one_entry("/", AE_IFLNK, "/etc"), -EPERM, "layer: entry '/': names the root");
        apply_refused(one_entry("//", AE_IFLNK, "/etc"), -EPERM, NULL);
        apply_refused(one_entry("/.", AE_IFLNK, "/etc"), -EPERM, NULL);
        apply_refused(one_entry(".", AE_IFREG, NULL), -EPERM, NULL);
        /* A hard link named "/"; then the root directory itself, ignored. */
        apply_refused(one_entry("/", AE_IFREG, "etc"), -EPERM, NULL);
        apply_ok(one_entry("./", AE_IFDIR, NULL));
        apply_ok(one_entry("/", AE_IFDIR, NULL));
        assert_int_equal(count_entries(F->rootfd, "."), 0);
}

static void test_devices_skipped_setuid_dropped(void **state) {
        struct unpack_stats st = {};
        struct km_error err = {};
        int fd;
        struct archive *a = tw_new('g', &fd);

        tw_dir(a, "dev", 0755);
        tw_node(a, "dev/null", AE_IFCHR);
        tw_node(a, "dev/sda", AE_IFBLK);
        tw_file(a, "bin/su", 04755, "su");
        tw_file(a, "bin/wall", 02755, "wall");
        tw_dir(a, "shared", 02775);
        tw_dir(a, "tmp", 01777);
        assert_int_equal(apply(tw_done(a, fd), NULL, &st, &err), 0);
        assert_int_equal(st.skipped, 2);
        assert_false(exists("dev/null"));
        assert_false(exists("dev/sda"));
        assert_int_equal(mode_of("bin/su") & 07777, 0755);
        assert_int_equal(mode_of("bin/wall") & 07777, 0755);
        assert_int_equal(mode_of("shared") & 07777, 0775);
        assert_int_equal(mode_of("tmp") & 07777, 01777);
}

static void test_bad_whiteouts_refused(void **state) {
        static const char *const bad[] = { ".wh.", "d/.wh.", ".wh..wh..opqX", "d/.wh..wh.foo", ".wh..", ".wh..." };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                apply_refused(one_entry(bad[i], AE_IFREG, NULL), -EINVAL, NULL);
        apply_refused(one_entry(".wh.", AE_IFREG, NULL), -EINVAL, "layer: entry '.wh.': invalid whiteout");
}

/* Layout files (image.c): a regular file below the dir, no symlink, no FIFO that would block (issue 9 item 15). */
static void test_open_file(void **state) {
        int dfd = openat(F->basefd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

        assert_true(dfd >= 0);
        assert_int_equal(mkdirat(dfd, "blobs", 0755), 0);
        fd = openat(dfd, "blobs/f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(mkfifoat(dfd, "fifo", 0644), 0);
        assert_int_equal(symlinkat("blobs/f", dfd, "link"), 0);
        assert_int_equal(symlinkat("blobs", dfd, "dirlink"), 0);
        fd = unpack_open_file(dfd, "blobs/f");
        assert_true(fd >= 0);
        assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY);
        close(fd);
        assert_int_equal(unpack_open_file(dfd, "fifo"), -EBADMSG); /* at once: a blocking open would hang here */
        assert_int_equal(unpack_open_file(dfd, "blobs"), -EBADMSG);
        assert_int_equal(unpack_open_file(dfd, "link"), -ELOOP);
        assert_int_equal(unpack_open_file(dfd, "dirlink/f"), -ELOOP);
        assert_int_equal(unpack_open_file(dfd, "../canary/victim"), -EXDEV);
        assert_int_equal(unpack_open_file(dfd, "missing"), -ENOENT);
        close(dfd);
}

/* With a tmpfs on /etc, so that a bug cannot touch the machine's. */
static void etc_child(void) {
        struct stat before, after;
        char buf[64] = "";
        int fd;
        struct archive *a;
        struct km_error err = {};

        if (mount("tmpfs", "/etc", "tmpfs", 0, "mode=0755") < 0)
                _exit(77);
        fd = open("/etc/passwd", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "root:x:0:0::/root:/bin/sh\n", 26) != 26 || close(fd) < 0 ||
            stat("/etc/passwd", &before) < 0)
                _exit(2);
        a = tw_new('n', &fd);
        tw_symlink(a, "link", "/etc");
        tw_file(a, "link/passwd", 0644, "pwned");
        if (unpack_layer(tw_done(a, fd), F->rootfd, NULL, NULL, &err) != -ENOENT)
                _exit(3);
        a = tw_new('n', &fd);
        tw_dir(a, "etc", 0755);
        tw_symlink(a, "link", "/etc");
        tw_file(a, "link/passwd", 0644, "inside");
        tw_hardlink(a, "shadow", "/etc/shadow"); /* the root's etc/shadow: there is none */
        if (unpack_layer(tw_done(a, fd), F->rootfd, NULL, NULL, &err) != -ENOENT)
                _exit(4);
        fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof(buf)) != 26 || stat("/etc/passwd", &after) < 0 ||
            after.st_ino != before.st_ino || after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)
                _exit(5);
        fd = openat(F->rootfd, "etc/passwd", O_RDONLY | O_CLOEXEC);
        memset(buf, 0, sizeof(buf));
        if (fd < 0 || read(fd, buf, sizeof(buf)) != 6 || !streq(buf, "inside"))
                _exit(6);
        /* "/etc/passwd" as a name and as a hard link target: both the root's. */
        a = tw_new('n', &fd);
        tw_file(a, "/etc/passwd", 0644, "abs");
        tw_hardlink(a, "/etc/hard", "/etc/passwd");
        if (unpack_layer(tw_done(a, fd), F->rootfd, NULL, NULL, &err) != 0 || stat("/etc/passwd", &after) < 0 ||
            after.st_ino != before.st_ino || after.st_size != 26 || access("/etc/hard", F_OK) == 0)
                _exit(7);
        fd = openat(F->rootfd, "etc/hard", O_RDONLY | O_CLOEXEC);
        memset(buf, 0, sizeof(buf));
        if (fd < 0 || read(fd, buf, sizeof(buf)) != 3 || !streq(buf, "abs"))
                _exit(8);
        _exit(0);
}

static void test_link_to_etc_then_passwd(void **state) {
        run_private(etc_child);
}

/* ---- THREATS 23 ---- */

static void test_gzip_bomb_stopped(void **state) {
        static const struct unpack_limits lim = { .max_bytes = 1 * MiB };
        _cleanup_free_ char *zeros = calloc(1, MiB);
        struct km_error err = {};
        struct stat st;
        int fd;
        struct archive *a = tw_new('g', &fd);
        struct archive_entry *e = ent("zeros", AE_IFREG, 0644);

        assert_non_null(zeros);
        archive_entry_set_size(e, 10 * MiB);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        for (int i = 0; i < 10; i++)
                assert_int_equal(archive_write_data(a, zeros, MiB), MiB);
        archive_entry_free(e);
        tw_done(a, fd);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(st.st_size < 64 * 1024);
        assert_int_equal(apply(fd, &lim, NULL, &err), -EFBIG);
        assert_string_equal(err.message, "layer: entry 'zeros': layer larger than max_bytes (1048576)");
        fresh_root(); /* the caller drops the partial layer */
}

/* The image's budget counts the layers before this one (item 16 of issue 9). */
static void test_image_budget(void **state) {
        struct unpack_limits lim = { .max_image_bytes = MiB, .image_bytes_before = 600 * 1024 };
        _cleanup_free_ char *data = calloc(1, 500 * 1024 + 1);
        struct unpack_stats st = {};
        struct km_error err = {};
        int fd;
        struct archive *a;

        assert_non_null(data);
        memset(data, 'x', 500 * 1024);
        a = tw_new('g', &fd);
        tw_file(a, "small", 0644, "fits");
        tw_file(a, "big", 0644, data);
        assert_int_equal(apply(tw_done(a, fd), &lim, &st, &err), -EFBIG);
        assert_string_equal(err.message,
                            "layer: entry 'big': the image unpacks to more than its limit of 1048576 bytes");
        fresh_root();
        lim.image_bytes_before = 2 * MiB; /* already over: nothing more fits */
        assert_int_equal(apply(one_entry("x", AE_IFREG, NULL), &lim, NULL, &err), -EFBIG);
        fresh_root();
        lim.image_bytes_before = 400 * 1024;
        a = tw_new('g', &fd);
        tw_file(a, "big", 0644, data);
        assert_int_equal(apply(tw_done(a, fd), &lim, &st, &err), 0);
        assert_int_equal(st.bytes, 500 * 1024);
}

static void test_too_many_entries_stopped(void **state) {
        static const struct unpack_limits lim = { .max_entries = 1000 };
        struct unpack_stats st = {};
        struct km_error err = {};
        char name[32];
        int fd;
        struct archive *a = tw_new('z', &fd);

        for (int i = 0; i < 2000; i++) {
                snprintf(name, sizeof(name), "f%d", i);
                tw_file(a, name, 0644, "");
        }
        assert_int_equal(apply(tw_done(a, fd), &lim, &st, &err), -EFBIG);
        assert_string_equal(err.message, "layer: entry 'f1000': more than max_entries (1000) entries");
        assert_int_equal(st.entries, 1001);
}

static void test_big_file_stopped(void **state) {
        static const struct unpack_limits lim = { .max_file = 1 * MiB };
        _cleanup_free_ char *zeros = calloc(1, 2 * MiB);
        struct km_error err = {};
        int fd;
        struct archive *a = tw_new('n', &fd);
        struct archive_entry *e = ent("big", AE_IFREG, 0644);

        archive_entry_set_size(e, 2 * MiB);
        put(a, e, zeros, 2 * MiB);
        assert_int_equal(apply(tw_done(a, fd), &lim, NULL, &err), -EFBIG);
        assert_string_equal(err.message, "layer: entry 'big': file larger than max_file (1048576)");
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
                T(test_plain_gzip_zstd),
                T(test_empty_and_garbage),
                T(test_dotdot_refused),
                T(test_absolute_inside_root),
                T(test_umoci_root_entry),
                T(test_symlink_out_then_through),
                T(test_hardlinks_out_refused),
                T(test_hardlink_to_symlink_links_the_symlink),
                T(test_root_names_refused),
                T(test_devices_skipped_setuid_dropped),
                T(test_bad_whiteouts_refused),
                T(test_open_file),
                T(test_link_to_etc_then_passwd),
                T(test_gzip_bomb_stopped),
                T(test_image_budget),
                T(test_too_many_entries_stopped),
                T(test_big_file_stopped),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
