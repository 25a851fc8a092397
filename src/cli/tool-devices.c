/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a device argument of a multi-call tool may be (multicall-tools.c),
 * decided in the host mount namespace before anything runs: a block device
 * node that is in /dev once every symlink is followed; on no disk that
 * holds, through partitions and device-mapper or md layers, a filesystem of
 * the host mounted outside the kubelet dir (the root disk, /boot, /var);
 * and, for a tool that writes (mkfs, fsck, repair), neither mounted nor held
 * by another device (a PV of a volume group, a member of an array).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mounttable.h"
#include "tool-devices.h"

/* Layers of device-mapper or md below a mount: more is a loop in sysfs, not a real stack. */
#define STACK_MAX 8

static int sysfs_dev_dir(dev_t dev, const char *sub, char *buf, size_t size) {
        int n = snprintf(buf, size, "/sys/dev/block/%u:%u%s%s", major(dev), minor(dev), sub ? "/" : "", sub ? sub : "");
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The number in a sysfs file such as "8:0\n", as a dev_t. */
static int read_devno(const char *path, dev_t *ret) {
        unsigned ma, mi;
        FILE *f = fopen(path, "re");
        int n = f ? fscanf(f, "%u:%u", &ma, &mi) : -1;

        if (f)
                fclose(f);
        if (n != 2)
                return -ENOENT;
        *ret = makedev(ma, mi);
        return 0;
}

/* The whole disk a partition is on; any other device is its own. */
static dev_t disk_of(dev_t dev) {
        char path[PATH_MAX];
        dev_t disk;

        if (sysfs_dev_dir(dev, "partition", path, sizeof(path)) < 0 || access(path, F_OK) < 0)
                return dev;
        if (sysfs_dev_dir(dev, "../dev", path, sizeof(path)) < 0 || read_devno(path, &disk) < 0)
                return dev;
        return disk;
}

/* Whether dev is what, a partition of it, or made of either through the devices of its slaves/. */
static bool on_device(dev_t dev, dev_t what, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;

        if (dev == what || disk_of(dev) == what)
                return true;
        if (depth >= STACK_MAX || sysfs_dev_dir(dev, "slaves", path, sizeof(path)) < 0 || !(d = opendir(path)))
                return false;
        while ((de = readdir(d))) {
                char devfile[PATH_MAX + NAME_MAX + 8];
                dev_t slave;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(devfile, sizeof(devfile), "%s/%s/dev", path, de->d_name);
                if (read_devno(devfile, &slave) == 0 && on_device(slave, what, depth + 1))
                        return true;
        }
        return false;
}

/* The block device a mount is of: its st_dev, or for btrfs and the like (an anonymous 0:N) its source's. */
static bool mount_block_dev(const struct km_mount *m, dev_t *ret) {
        const char *source = km_mount_source(m);
        struct stat st;

        *ret = mount_devno(m);
        if (major(*ret) != 0)
                return true;
        if (!source || source[0] != '/' || stat(source, &st) < 0 || !S_ISBLK(st.st_mode))
                return false;
        *ret = st.st_rdev;
        return true;
}

/* The first entry of dev's holders/ (a dm or md device made of it), in name. */
static bool held_by(dev_t dev, char *name, size_t size) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;

        if (sysfs_dev_dir(dev, "holders", path, sizeof(path)) < 0 || !(d = opendir(path)))
                return false;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        snprintf(name, size, "%s", de->d_name);
                        return true;
                }
        return false;
}

int tool_device_check(const char *path, bool writes, const char *kubelet_dir, const struct km_mount_table *table,
                      struct km_error *err) {
        _cleanup_free_ char *real = realpath(path, NULL);
        char holder[NAME_MAX + 1];
        struct stat st;
        dev_t disk;

        if (!real)
                return error_set(err, -errno, "%s", path);
        if (!path_is_below(real, "/dev") || streq(real, "/dev"))
                return error_set_plain(err, -EPERM, "%s: is %s, which is not in /dev: refused", path, real);
        if (stat(real, &st) < 0)
                return error_set(err, -errno, "%s", path);
        if (!S_ISBLK(st.st_mode))
                return error_set_plain(err, -ENOTBLK, "%s: is not a block device", path);
        disk = disk_of(st.st_rdev);
        for (size_t i = 0; i < km_mount_table_size(table); i++) {
                const struct km_mount *m = km_mount_table_at(table, i);
                const char *target = km_mount_target(m);
                bool volume = target && path_is_below(target, kubelet_dir) && !streq(target, kubelet_dir);
                dev_t dev;

                if (!target || !mount_block_dev(m, &dev))
                        continue;
                if (!volume && on_device(dev, disk, 0))
                        return error_set_plain(err, -EPERM,
                                               "%s: is on the disk of the host's %s (not a volume of the kubelet "
                                               "dir %s): refused",
                                               path, target, kubelet_dir);
                if (writes && on_device(dev, st.st_rdev, 0))
                        return error_set_plain(err, -EBUSY, "%s: %s mounted at %s: refused", path,
                                               dev == st.st_rdev ? "is" : "holds a filesystem", target);
        }
        if (writes && held_by(st.st_rdev, holder, sizeof(holder)))
                return error_set_plain(err, -EBUSY, "%s: is in use by %s: refused", path, holder);
        return 0;
}
