/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * escape-probe PRIMITIVE [ARG...]: tries one escape primitive from inside a
 * VCS container (THREATS 34; vcs-escape.sh runs it, built static into an
 * image made from the test rootfs) and prints one line:
 *
 *     PRIMITIVE: ok                   the hole is open (exit 1)
 *     PRIMITIVE: refused: ERRNO-NAME  it is closed (exit 0)
 *     PRIMITIVE: setup: WHAT: ERRNO   the probe could not try (exit 2)
 *
 * Nothing is ever written where it would matter: core_pattern and
 * release_agent are opened for writing, never written (the open is the
 * proof); what a primitive mounted or made it removes again.
 *
 *   umount-proc-sys        umount2("/proc/sys", MNT_DETACH)
 *   remount-proc-sys-rw    /proc/sys remounted (bind) without MS_RDONLY
 *   core-pattern           /proc/sys/kernel/core_pattern opened O_WRONLY; on
 *                          EROFS, /proc/sys unmounted first and tried again
 *                          (the reviewer's two steps)
 *   remount-sys-rw         /sys remounted (bind) without MS_RDONLY
 *   cgroup-v1 [DIR]        a v1 hierarchy ("none,name=kmprobe") on DIR
 *                          (default /tmp/kmprobe-cgroup): ok if it mounts;
 *                          then also "cgroup-v1-release-agent: ok|refused: E"
 *                          for its release_agent opened O_WRONLY
 *   mknod-block [DIR]      a block node of the host's first disk (the first
 *                          line of /proc/partitions, else 7:0) in DIR
 *                          (default /tmp)
 *   open-by-handle         name_to_handle_at("/") and open_by_handle_at of it
 *                          without O_DIRECTORY (Linux >= 6.12 lets a process
 *                          decode directory handles inside its own mounts:
 *                          not an escape; a file handle needs
 *                          CAP_DAC_READ_SEARCH in the host's user namespace)
 *   mount-outside          tmpfs on /tmp/kmprobe-x, outside the kubelet dir
 *   bind-etc DIR           /etc bound on DIR (below the kubelet dir)
 *   bind-root DIR          / bound on DIR
 *   type-not-allowed DIR [DATA]
 *                          ramfs (no policy allows it) on DIR, with DATA as
 *                          its options (a test's secret, to look for in logs)
 *   newapi                 fsopen("tmpfs"), open_tree(OPEN_TREE_CLONE),
 *                          fspick, move_mount and mount_setattr (the last two
 *                          with arguments that do nothing): "refused: ENOSYS"
 *                          only if all five say ENOSYS, ok if one returned an
 *                          fd, else refused with the first other errno
 *   legit-tmpfs DIR        the control: tmpfs on DIR, which must show as a
 *                          tmpfs there, then unmounted; a second line
 *                          "umount-own: ok|refused: E" for the unmount
 *
 * It runs only in the test image (/etc/kubemount-test-rootfs): a kubemount
 * that failed to enter the container must not let it touch the machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson sets it */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "errname.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

enum { REFUSED = 0, OPEN = 1, SETUP = 2 };

static int ok(const char *name) {
        printf("%s: ok\n", name);
        return OPEN;
}

static int refused(const char *name, int e) {
        printf("%s: refused: %s\n", name, errname(e));
        return REFUSED;
}

static int setup(const char *name, const char *what, int e) {
        printf("%s: setup: %s: %s\n", name, what, errname(e));
        return SETUP;
}

/* A target directory, made when missing (below the kubelet dir the test makes them); false: reported. */
static bool ensure_dir(const char *name, const char *dir) {
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                setup(name, dir, errno);
                return false;
        }
        return true;
}

/* Undoes a mount the probe made; a failure is only noted (the container ends anyway). */
static void undo_mount(const char *target) {
        if (umount2(target, 0) < 0 && umount2(target, MNT_DETACH) < 0)
                fprintf(stderr, "escape-probe: could not unmount %s: %s\n", target, errname(errno));
}

static int remount_rw(const char *name, const char *path) {
        if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND, NULL) < 0)
                return refused(name, errno);
        return ok(name);
}

static int umount_proc_sys(const char *name) {
        if (umount2("/proc/sys", MNT_DETACH) < 0)
                return refused(name, errno);
        return ok(name);
}

static int core_pattern(const char *name) {
        const char *path = "/proc/sys/kernel/core_pattern";
        int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0 && errno == EROFS) {
                int e = errno;

                if (umount2("/proc/sys", MNT_DETACH) < 0) {
                        fprintf(stderr, "escape-probe: %s: umount2 /proc/sys: %s\n", name, errname(errno));
                        return refused(name, e);
                }
                fd = open(path, O_WRONLY | O_CLOEXEC);
        }
        if (fd < 0)
                return refused(name, errno);
        close(fd); /* never written: the open is the proof */
        return ok(name);
}

static int cgroup_v1(const char *name, const char *dir) {
        char agent[PATH_MAX];
        int r, fd;

        if (!ensure_dir(name, dir))
                return SETUP;
        if (mount("kmprobe", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, "none,name=kmprobe") < 0)
                return refused(name, errno);
        r = ok(name);
        snprintf(agent, sizeof(agent), "%s/release_agent", dir);
        fd = open(agent, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                refused("cgroup-v1-release-agent", errno);
        } else {
                close(fd); /* never written */
                ok("cgroup-v1-release-agent");
        }
        undo_mount(dir);
        return r;
}

/* The first disk of /proc/partitions (the host's: it is not namespaced), else loop0. */
static dev_t first_disk(void) {
        FILE *f = fopen("/proc/partitions", "re");
        unsigned maj, min;
        char line[256];
        dev_t d = makedev(7, 0);

        if (!f)
                return d;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, " %u %u %*u %*s", &maj, &min) == 2) {
                        d = makedev(maj, min);
                        break;
                }
        fclose(f);
        return d;
}

static int mknod_block(const char *name, const char *dir) {
        char node[PATH_MAX];
        dev_t d = first_disk();
        int fd;

        snprintf(node, sizeof(node), "%s/kmprobe-blk", dir);
        if (unlink(node) < 0 && errno != ENOENT)
                return setup(name, node, errno);
        if (mknod(node, S_IFBLK | 0600, d) < 0)
                return refused(name, errno);
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        fprintf(stderr, "escape-probe: %s: made %s (%u:%u), open for reading: %s\n", name, node, major(d), minor(d),
                fd >= 0 ? "opened" : errname(errno));
        if (fd >= 0)
                close(fd);
        unlink(node);
        return ok(name);
}

static int open_by_handle(const char *name) {
        union {
                struct file_handle fh;
                char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
        } h = { .fh.handle_bytes = MAX_HANDLE_SZ };
        int mount_id, mfd, fd;

        if (name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0) < 0)
                return refused(name, errno);
        if ((mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                return setup(name, "open /", errno);
        fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;

                close(mfd);
                return refused(name, e);
        }
        close(fd);
        close(mfd);
        return ok(name);
}

static int mount_on(const char *name, const char *src, const char *dir, const char *type, unsigned long flags,
                    const char *data) {
        if (!ensure_dir(name, dir))
                return SETUP;
        if (mount(src, dir, type, flags, data) < 0)
                return refused(name, errno);
        undo_mount(dir);
        return ok(name);
}

static int newapi(const char *name) {
        static const char *const calls[] = { "fsopen", "open_tree", "fspick", "move_mount", "mount_setattr" };
        long r[5];
        int e[5];

        r[0] = syscall(SYS_fsopen, "tmpfs", 0);
        e[0] = errno;
        r[1] = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE);
        e[1] = errno;
        r[2] = syscall(SYS_fspick, AT_FDCWD, "/", 0);
        e[2] = errno;
        /* Bad fds: these two can only fail (EBADF) unless a filter answers first. */
        r[3] = syscall(SYS_move_mount, -1, "", -1, "", 0);
        e[3] = errno;
        r[4] = syscall(SYS_mount_setattr, -1, "", 0, NULL, 0);
        e[4] = errno;
        for (int i = 0; i < 5; i++)
                if (r[i] >= 0) {
                        fprintf(stderr, "escape-probe: %s: %s returned %ld\n", name, calls[i], r[i]);
                        if (r[i] > 2)
                                close((int)r[i]);
                }
        for (int i = 0; i < 5; i++)
                if (r[i] >= 0)
                        return ok(name);
        for (int i = 0; i < 5; i++)
                if (e[i] != ENOSYS) {
                        fprintf(stderr, "escape-probe: %s: %s: %s\n", name, calls[i], errname(e[i]));
                        return refused(name, e[i]);
                }
        return refused(name, ENOSYS);
}

static int legit_tmpfs(const char *name, const char *dir) {
        struct statfs sf;

        if (!ensure_dir(name, dir))
                return SETUP;
        if (mount("kmprobe", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
                return refused(name, errno);
        if (statfs(dir, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
                printf("%s: mounted but %s is no tmpfs here\n", name, dir);
        else
                ok(name);
        if (umount2(dir, 0) < 0)
                refused("umount-own", errno);
        else
                ok("umount-own");
        return OPEN;
}

static int usage(void) {
        fprintf(stderr,
                "usage: escape-probe umount-proc-sys|remount-proc-sys-rw|core-pattern|remount-sys-rw|"
                "cgroup-v1 [DIR]|mknod-block [DIR]|open-by-handle|mount-outside|bind-etc DIR|bind-root DIR|"
                "type-not-allowed DIR [DATA]|newapi|legit-tmpfs DIR\n");
        return SETUP;
}

int main(int argc, char **argv) {
        const char *p = argc > 1 ? argv[1] : "", *dir = argc > 2 ? argv[2] : NULL;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 2 || argc > 4)
                return usage();
        if (access("/etc/kubemount-test-rootfs", F_OK) < 0)
                return setup(p, "not in the test image (/etc/kubemount-test-rootfs)", errno);
        if (!strcmp(p, "umount-proc-sys"))
                return umount_proc_sys(p);
        if (!strcmp(p, "remount-proc-sys-rw"))
                return remount_rw(p, "/proc/sys");
        if (!strcmp(p, "core-pattern"))
                return core_pattern(p);
        if (!strcmp(p, "remount-sys-rw"))
                return remount_rw(p, "/sys");
        if (!strcmp(p, "cgroup-v1"))
                return cgroup_v1(p, dir ?: "/tmp/kmprobe-cgroup");
        if (!strcmp(p, "mknod-block"))
                return mknod_block(p, dir ?: "/tmp");
        if (!strcmp(p, "open-by-handle"))
                return open_by_handle(p);
        if (!strcmp(p, "mount-outside"))
                return mount_on(p, "kmprobe", "/tmp/kmprobe-x", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
        if (!strcmp(p, "newapi"))
                return newapi(p);
        if (!dir)
                return usage();
        if (!strcmp(p, "bind-etc"))
                return mount_on(p, "/etc", dir, NULL, MS_BIND, NULL);
        if (!strcmp(p, "bind-root"))
                return mount_on(p, "/", dir, NULL, MS_BIND, NULL);
        if (!strcmp(p, "type-not-allowed"))
                return mount_on(p, "kmprobe", dir, "ramfs", MS_NOSUID | MS_NODEV, argc > 3 ? argv[3] : NULL);
        if (!strcmp(p, "legit-tmpfs"))
                return legit_tmpfs(p, dir);
        return usage();
}
