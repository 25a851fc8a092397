/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unpack_layer over earlier layers (whiteouts, opaque directories, a file
 * that replaces a directory and back, symlinked directories, sparse files,
 * ownership and times) and unpack_remove_tree (deep trees, links, mounts),
 * on the fixture of unpack-fixture.h.
 */
#include "unpack-fixture.h"

/* ---- layers over layers ---- */

static void test_whiteouts_and_opaque_across_layers(void **state) {
        int fd;
        struct archive *a = tw_new('g', &fd);

        tw_dir(a, "a", 0755);
        tw_file(a, "a/f1", 0644, "f1");
        tw_dir(a, "a/sub", 0755);
        tw_file(a, "a/sub/g", 0644, "g");
        tw_dir(a, "b", 0755);
        tw_file(a, "b/keep", 0644, "keep");
        tw_file(a, "b/gone", 0644, "gone");
        tw_symlink(a, "b/gone-link", "/etc");
        tw_dir(a, "c", 0755);
        tw_file(a, "c/old", 0644, "old");
        tw_dir(a, "c/olddir", 0755);
        tw_file(a, "c/olddir/x", 0644, "x");
        tw_dir(a, "c/olddir/deep", 0755);
        tw_file(a, "c/early", 0644, "lower early");
        tw_file(a, "m/x/y", 0644, "y");
        tw_file(a, "m/other", 0644, "o");
        apply_ok(tw_done(a, fd));

        a = tw_new('g', &fd);
        tw_file(a, "b/.wh.gone", 0644, "");
        tw_file(a, "b/.wh.gone-link", 0644, "");
        tw_file(a, "a/.wh.sub", 0644, "");
        tw_file(a, "a/.wh.never-existed", 0644, "");
        tw_file(a, "nodir/.wh.x", 0644, "");
        tw_dir(a, "c", 0750);
        tw_file(a, "c/early", 0644, "upper early"); /* before the marker: this layer's, kept */
        tw_file(a, "c/olddir/kept", 0644, "kept");  /* parent from the lower layer, not declared */
        tw_file(a, "c/.wh..wh..opq", 0644, "");
        tw_file(a, "c/late", 0644, "late");
        tw_file(a, "c/.wh..wh..opq", 0644, ""); /* again: nothing more to hide */
        tw_file(a, "m/x/new", 0644, "new");
        tw_file(a, "m/x/.wh..wh..opq", 0644, "");
        tw_file(a, "m/.wh..wh..opq", 0644, ""); /* m/x was emptied already: kept as it is */
        apply_ok(tw_done(a, fd));

        assert_content("a/f1", "f1");
        assert_false(exists("a/sub"));
        assert_content("b/keep", "keep");
        assert_false(exists("b/gone"));
        assert_false(exists("b/gone-link"));
        assert_false(exists("nodir"));
        assert_false(exists("c/old"));
        assert_false(exists("c/olddir/x"));
        assert_false(exists("c/olddir/deep"));
        assert_content("c/olddir/kept", "kept");
        assert_content("c/early", "upper early");
        assert_content("c/late", "late");
        assert_int_equal(count_entries(F->rootfd, "c"), 3);
        assert_content("m/x/new", "new");
        assert_int_equal(count_entries(F->rootfd, "m"), 1);
        assert_int_equal(count_entries(F->rootfd, "m/x"), 1);
        assert_int_equal(mode_of("c") & 07777, 0750);
}

static void test_symlink_dir_then_file_through_it(void **state) {
        int fd;
        struct archive *a = tw_new('n', &fd);

        tw_dir(a, "usr", 0755);
        tw_dir(a, "usr/bin", 0755);
        tw_symlink(a, "bin", "usr/bin");
        tw_symlink(a, "sbin", "/usr/bin");
        tw_symlink(a, "up", "../../..");
        apply_ok(tw_done(a, fd));
        a = tw_new('n', &fd);
        tw_file(a, "bin/tool", 0755, "tool");
        tw_file(a, "sbin/tool2", 0755, "tool2");
        tw_file(a, "up/usr/bin/tool3", 0755, "tool3");
        tw_hardlink(a, "bin/tool-hard", "sbin/tool2");
        apply_ok(tw_done(a, fd));
        assert_true(S_ISLNK(mode_of("bin")));
        assert_content("usr/bin/tool", "tool");
        assert_content("usr/bin/tool2", "tool2");
        assert_content("usr/bin/tool3", "tool3");
        assert_content("usr/bin/tool-hard", "tool2");
}

static void test_file_replaces_dir_and_back(void **state) {
        int fd;
        struct archive *a = tw_new('n', &fd);

        tw_dir(a, "d", 0755);
        tw_file(a, "d/x", 0644, "x");
        tw_dir(a, "d/y", 0755);
        tw_file(a, "d/y/z", 0644, "z");
        tw_file(a, "f", 0644, "file");
        tw_symlink(a, "s", "d");
        apply_ok(tw_done(a, fd));
        a = tw_new('n', &fd);
        tw_file(a, "d", 0600, "now a file");
        tw_dir(a, "f", 0711);
        tw_file(a, "f/y", 0644, "y");
        tw_dir(a, "s", 0755); /* replaces the symlink, does not follow it */
        apply_ok(tw_done(a, fd));
        assert_content("d", "now a file");
        assert_int_equal(mode_of("d") & 07777, 0600);
        assert_true(S_ISDIR(mode_of("f")));
        assert_int_equal(mode_of("f") & 07777, 0711);
        assert_content("f/y", "y");
        assert_true(S_ISDIR(mode_of("s")));
        assert_int_equal(count_entries(F->rootfd, "s"), 0);
}

static void test_sparse_file_stays_sparse(void **state) {
        const int64_t size = 1024LL * MiB;
        _cleanup_free_ char *buf = calloc(1, MiB);
        struct unpack_stats us = {};
        struct km_error err = {};
        struct stat st;
        int fd;
        struct archive *a = tw_new('g', &fd);
        struct archive_entry *e = ent("sparse", AE_IFREG, 0644);

        archive_entry_set_size(e, size);
        archive_entry_sparse_add_entry(e, 0, 4096);
        archive_entry_sparse_add_entry(e, 512 * MiB, 4096);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        archive_entry_free(e);
        memcpy(buf, "head", 4);
        /* The writer takes the whole file and drops the holes. */
        for (int64_t off = 0; off < size; off += MiB) {
                memcpy(buf, off == 512 * MiB ? "middle" : off ? "\0\0\0\0\0\0" : "head\0\0", 6);
                assert_int_equal(archive_write_data(a, buf, MiB), MiB);
        }
        assert_int_equal(apply(tw_done(a, fd), NULL, &us, &err), 0);
        assert_int_equal(fstatat(F->rootfd, "sparse", &st, 0), 0);
        assert_int_equal(st.st_size, size);
        test_note("sparse: %lld blocks, %llu bytes written", (long long)st.st_blocks, (unsigned long long)us.bytes);
        assert_true(st.st_blocks * 512 < 16 * MiB);
        fd = openat(F->rootfd, "sparse", O_RDONLY | O_CLOEXEC);
        assert_int_equal(pread(fd, buf, 6, 512 * MiB), 6);
        close(fd);
        assert_memory_equal(buf, "middle", 6);
}

static void test_ownership_and_times(void **state) {
        int fd;
        struct archive *a = tw_new('n', &fd);
        struct archive_entry *e = ent("owned", AE_IFREG, 0640);
        struct stat st;

        archive_entry_set_uid(e, 1234);
        archive_entry_set_gid(e, 5678);
        archive_entry_set_mtime(e, 1234567890, 5);
        archive_entry_set_size(e, 1);
        put(a, e, "o", 1);
        e = ent("dir", AE_IFDIR, 0555);
        archive_entry_set_uid(e, 42);
        archive_entry_set_mtime(e, 1000000000, 0);
        put(a, e, NULL, 0);
        tw_file(a, "dir/inside", 0644, "i"); /* after the dir: its mtime is set at the end */
        e = ent("link", AE_IFLNK, 0777);
        archive_entry_set_symlink(e, "owned");
        archive_entry_set_uid(e, 7);
        put(a, e, NULL, 0);
        apply_ok(tw_done(a, fd));
        assert_int_equal(fstatat(F->rootfd, "owned", &st, 0), 0);
        assert_int_equal(st.st_mtim.tv_sec, 1234567890);
        assert_int_equal(st.st_mode & 07777, 0640);
        if (geteuid() != 0)
                test_note("SKIP: ownership checks need root");
        assert_true(geteuid() != 0 || (st.st_uid == 1234 && st.st_gid == 5678));
        assert_int_equal(fstatat(F->rootfd, "dir", &st, 0), 0);
        assert_int_equal(st.st_mtim.tv_sec, 1000000000);
        assert_int_equal(st.st_mode & 07777, 0555);
        assert_true(geteuid() != 0 || st.st_uid == 42);
        assert_int_equal(fstatat(F->rootfd, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_mtim.tv_sec, 1500000000);
        assert_true(geteuid() != 0 || st.st_uid == 7);
}

/* ---- unpack_remove_tree ---- */

static void test_remove_deep_tree_and_links(void **state) {
        char abs[PATH_MAX];
        int fd = dup(F->rootfd);

        /* 300 levels: deeper than the walk keeps open, moved up and removed in passes. */
        for (int i = 0; i < 300; i++) {
                int next;
                assert_int_equal(mkdirat(fd, "d", 0755), 0);
                next = openat(fd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
                assert_true(next >= 0);
                close(fd);
                fd = next;
        }
        snprintf(abs, sizeof(abs), "%s/canary", F->base);
        assert_int_equal(symlinkat(abs, fd, "out"), 0);
        assert_int_equal(symlinkat("../../../../canary/victim", fd, "rel"), 0);
        close(fd);
        assert_int_equal(symlinkat(abs, F->rootfd, "top-link"), 0);
        assert_int_equal(unpack_remove_tree(F->rootfd, "d"), 0);
        assert_int_equal(unpack_remove_tree(F->rootfd, "top-link"), 0);
        assert_int_equal(unpack_remove_tree(F->rootfd, "missing"), -ENOENT);
        assert_int_equal(count_entries(F->rootfd, "."), 0);
}

static void mounts_child(void) {
        char path[PATH_MAX];
        int fd, r;

        if (mkdirat(F->rootfd, "t", 0755) < 0 || mkdirat(F->rootfd, "t/m", 0755) < 0)
                _exit(2);
        snprintf(path, sizeof(path), "%s/root/t/m", F->base);
        if (mount("tmpfs", path, "tmpfs", 0, NULL) < 0)
                _exit(77);
        fd = openat(F->rootfd, "t/m/precious", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || close(fd) < 0)
                _exit(3);
        r = unpack_remove_tree(F->rootfd, "t");
        if (r != -EXDEV || faccessat(F->rootfd, "t/m/precious", F_OK, 0) < 0) {
                fprintf(stderr, "remove_tree over a tmpfs: %d\n", r);
                _exit(4);
        }
        /* A bind mount of the same filesystem has the same st_dev: still a mount. */
        if (umount(path) < 0 || mount(F->base, path, NULL, MS_BIND, NULL) < 0)
                _exit(5);
        if (unpack_remove_tree(F->rootfd, "t") != -EXDEV || faccessat(F->basefd, "canary/victim", F_OK, 0) < 0)
                _exit(6);
        _exit(0);
}

static void test_remove_tree_stops_at_mounts(void **state) {
        run_private(mounts_child);
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
                T(test_whiteouts_and_opaque_across_layers),
                T(test_symlink_dir_then_file_through_it),
                T(test_file_replaces_dir_and_back),
                T(test_sparse_file_stays_sparse),
                T(test_ownership_and_times),
                T(test_remove_deep_tree_and_links),
                T(test_remove_tree_stops_at_mounts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
