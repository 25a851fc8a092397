/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unpack_layer and unpack_remove_tree on layers written here with
 * libarchive into memfds: hostile entries (THREATS 22), bombs (23),
 * whiteouts across layers, replacements, sparse files, compressions.
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

#define CANARY "canary contents\n"
#define MiB (1024 * 1024)

struct fixture {
        char *base;
        int basefd, rootfd;
};

static struct fixture *F;

/* ---- writing layers ---- */

static struct archive *tw_new(char filter, int *ret_fd) {
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
static int tw_done(struct archive *a, int fd) {
        assert_int_equal(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static struct archive_entry *ent(const char *name, mode_t type, mode_t perm) {
        struct archive_entry *e = archive_entry_new();

        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, type);
        archive_entry_set_perm(e, perm);
        archive_entry_set_mtime(e, 1500000000, 0);
        return e;
}

static void put(struct archive *a, struct archive_entry *e, const void *data, size_t len) {
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        if (len)
                assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
        archive_entry_free(e);
}

static void tw_file(struct archive *a, const char *name, mode_t perm, const char *data) {
        struct archive_entry *e = ent(name, AE_IFREG, perm);

        archive_entry_set_size(e, strlen(data));
        put(a, e, data, strlen(data));
}

#define tw_dir(a, name, perm) put(a, ent(name, AE_IFDIR, perm), NULL, 0)

/* A symlink (type AE_IFLNK), a hard link (AE_IFREG) to target, or a node (target NULL). */
static void tw_link(struct archive *a, const char *name, mode_t type, const char *target) {
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
static int one_entry(const char *name, mode_t type, const char *target) {
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
static int apply(int fd, const struct unpack_limits *lim, struct unpack_stats *st, struct km_error *err) {
        int r = unpack_layer(fd, F->rootfd, lim, st, err);

        if (r < 0)
                test_note("unpack: %d %s", r, err->message);
        close(fd);
        return r;
}

#define apply_ok(fd) assert_int_equal(apply(fd, NULL, NULL, &(struct km_error){}), 0)

static void apply_refused(int fd, int expected, const char *message) {
        struct km_error err = {};

        assert_int_equal(apply(fd, NULL, NULL, &err), expected);
        if (message)
                assert_string_equal(err.message, message);
}

#define exists(path) (fstatat(F->rootfd, path, &(struct stat){}, AT_SYMLINK_NOFOLLOW) == 0)

static mode_t mode_of(const char *path) {
        struct stat st;

        assert_int_equal(fstatat(F->rootfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mode;
}

static void assert_content_at(int dirfd, const char *path, const char *want) {
        char buf[256] = "";
        int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, want);
}
#define assert_content(path, want) assert_content_at(F->rootfd, path, want)

static int count_entries(int dirfd, const char *path) {
        DIR *d = fdopendir(openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        int n = 0;

        assert_non_null(d);
        for (struct dirent *de; (de = readdir(d));)
                n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
        closedir(d);
        return n;
}

/* BASE holds only root/ and canary/, and canary/ is as setup() made it. */
static void assert_canary(void) {
        struct stat st;

        assert_int_equal(count_entries(F->basefd, "."), 2);
        assert_int_equal(count_entries(F->basefd, "canary"), 2);
        assert_int_equal(count_entries(F->basefd, "canary/etc"), 0);
        assert_int_equal(fstatat(F->basefd, "canary/victim", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1 && (st.st_mode & 07777) == 0600);
        assert_content_at(F->basefd, "canary/victim", CANARY);
}

/* An empty BASE/root in place of the old one. */
static void fresh_root(void) {
        if (F->rootfd >= 0) {
                close(F->rootfd);
                assert_int_equal(unpack_remove_tree(F->basefd, "root"), 0);
        }
        assert_int_equal(mkdirat(F->basefd, "root", 0755), 0);
        F->rootfd = openat(F->basefd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(F->rootfd >= 0);
}

static int setup(void **state) {
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

static int teardown(void **state) {
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

/*
 * Runs fn in a child in a private mount namespace (root only), with the
 * fixture's fds reopened there: fds from before unshare() still walk the
 * old namespace's mounts.  fn exits 0 on success, 77 to skip.
 */
static void run_private(void (*fn)(void)) {
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
