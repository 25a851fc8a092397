/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Layer bytes (tar, tar+gzip, tar+zstd): unpack_layer into a fresh root
 * under a scratch dir, then unpack_remove_tree of that root.
 *
 * Invariants: a failure is a negative errno with a message starting
 * "layer: "; the limits hold (entries, bytes, the image's budget after the
 * layers before); the root holds no device node and no setuid/setgid bit;
 * unpack_remove_tree removes the root entirely; and the canary file and
 * directory next to the root - what a "../", symlink or hard link escape, or
 * an absolute path taken as the host's, would hit - keep their inode, link
 * count, mode, size and contents, with nothing added beside them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "unpack-tree.h"
#include "unpack.h"

#define MAX_LAYER (1024 * 1024)
#define CANARY "canary: must not change\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[PATH_MAX], root[PATH_MAX + 8];
static int basefd = -1;
static struct stat canary_st, secret_st;

static void write_file(int dirfd, const char *name) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        check(fd >= 0);
        check(write(fd, CANARY, strlen(CANARY)) == (ssize_t)strlen(CANARY));
        close(fd);
}

static void cleanup(void) {
        unlinkat(basefd, "canary-dir/secret", 0);
        unlinkat(basefd, "canary-dir", AT_REMOVEDIR);
        unlinkat(basefd, "canary", 0);
        rmdir(base);
}

static void setup_once(void) {
        const char *tmp = getenv("TMPDIR");

        snprintf(base, sizeof(base), "%s/kubemount-fuzz-tar-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        check(mkdtemp(base));
        snprintf(root, sizeof(root), "%s/root", base);
        basefd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
        check(basefd >= 0);
        write_file(basefd, "canary");
        check(mkdirat(basefd, "canary-dir", 0755) == 0);
        write_file(basefd, "canary-dir/secret");
        check(fstatat(basefd, "canary", &canary_st, AT_SYMLINK_NOFOLLOW) == 0);
        check(fstatat(basefd, "canary-dir/secret", &secret_st, AT_SYMLINK_NOFOLLOW) == 0);
        atexit(cleanup);
}

static void check_unchanged(const char *name, const struct stat *was) {
        char buf[64] = "";
        struct stat st;
        int fd;

        check(fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0);
        check(st.st_ino == was->st_ino && st.st_nlink == 1 && st.st_mode == was->st_mode &&
              st.st_size == was->st_size && st.st_uid == was->st_uid && st.st_mtim.tv_sec == was->st_mtim.tv_sec &&
              st.st_mtim.tv_nsec == was->st_mtim.tv_nsec);
        fd = openat(basefd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        check(fd >= 0);
        check(read(fd, buf, sizeof(buf)) == (ssize_t)strlen(CANARY));
        close(fd);
        check(strcmp(buf, CANARY) == 0);
}

static size_t count_entries(const char *name) {
        int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        size_t n = 0;

        check(d);
        for (struct dirent *de; (de = readdir(d));)
                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        closedir(d);
        return n;
}

static int check_node(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)path, (void)flag, (void)ftw;
        check(!S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode));
        check(!(st->st_mode & (S_ISUID | S_ISGID)));
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct unpack_limits lim = { .max_bytes = 8 << 20,
                                                  .max_entries = 2000,
                                                  .max_file = 4 << 20,
                                                  .max_image_bytes = 7 << 20,
                                                  .image_bytes_before = 1 << 20 };
        struct unpack_stats stats = {};
        struct km_error err = {};
        int fd, rootfd, r;

        if (size > MAX_LAYER)
                return 0;
        if (basefd < 0)
                setup_once();
        fd = memfd_create("layer", MFD_CLOEXEC);
        check(fd >= 0);
        check(write(fd, data, size) == (ssize_t)size);
        check(lseek(fd, 0, SEEK_SET) == 0);
        check(mkdirat(basefd, "root", 0755) == 0);
        rootfd = openat(basefd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        check(rootfd >= 0);

        r = unpack_layer(fd, rootfd, &lim, &stats, &err);
        check(r <= 0);
        if (r < 0)
                check(err.code == r && strncmp(err.message, "layer: ", 7) == 0);
        check(stats.entries <= lim.max_entries + 1 && stats.bytes <= lim.max_bytes &&
              stats.bytes <= lim.max_image_bytes - lim.image_bytes_before);
        (void)nftw(root, check_node, 16, FTW_PHYS | FTW_MOUNT);

        close(rootfd);
        close(fd);
        r = unpack_remove_tree(basefd, "root");
        if (r != 0)
                fprintf(stderr, "unpack_remove_tree: %s\n", strerror(-r));
        check(r == 0);
        check(count_entries(".") == 2 && count_entries("canary-dir") == 1);
        check_unchanged("canary", &canary_st);
        check_unchanged("canary-dir/secret", &secret_st);
        return 0;
}
