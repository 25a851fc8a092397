/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount-bench's cgroups: what its runs left, swept (bench.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define CGROUP_FS "/sys/fs/cgroup"

/* cgroups: ours are named after our pid, so a sweep cannot touch anybody else's */

static const char *cg_parent, *peer_prefix;

static bool ours(const char *name) {
        return strcmp(name, cg_parent) == 0 || strncmp(name, peer_prefix, strlen(peer_prefix)) == 0;
}

/* rmdir of dir and the cgroups below it, deepest first; retries while the kernel lets go of exited tasks. */
static int rmdir_tree(int parent, const char *name) {
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *e;
        int left = 0;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return errno == ENOENT ? 0 : 1;
        }
        while ((e = readdir(d)))
                if (e->d_type == DT_DIR && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        left += rmdir_tree(dirfd(d), e->d_name);
        closedir(d);
        for (int i = 0; i < 50; i++) {
                if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        return left;
                if (errno != EBUSY)
                        break;
                usleep(20000);
        }
        return left + 1;
}

static void sweep_dir(int dirfd_, int depth, int *left) {
        DIR *d = fdopendir(dirfd_);
        struct dirent *e;

        if (!d) {
                close(dirfd_);
                return;
        }
        while ((e = readdir(d))) {
                if (e->d_type != DT_DIR || e->d_name[0] == '.')
                        continue;
                if (ours(e->d_name))
                        *left += rmdir_tree(dirfd(d), e->d_name);
                else if (depth < 4) {
                        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        if (fd >= 0)
                                sweep_dir(fd, depth + 1, left);
                }
        }
        closedir(d);
}

/*
 * Removes our cgroups in every hierarchy (kubemount's parent at the top;
 * crun's and runc's, named by container id, at most 4 levels down: runc
 * puts the memory one below the caller's).  Returns how many are left.
 */
int bench_cgroup_sweep(const char *parent, const char *prefix) {
        int fd = open(CGROUP_FS, O_RDONLY | O_DIRECTORY | O_CLOEXEC), left = 0;

        cg_parent = parent;
        peer_prefix = prefix;
        if (fd >= 0)
                sweep_dir(fd, 0, &left);
        return left;
}
