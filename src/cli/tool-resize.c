/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `resize2fs DEV` of an ext4 mounted at a volume (mount-utils' online
 * expansion), made by kubemount itself: EXT4_IOC_RESIZE_FS wants
 * CAP_SYS_RESOURCE in the host's user namespace, which no VCS container
 * holds, and kubemount is the privileged party.  The new size is what
 * resize2fs picks with no size given: the device's, in whole pages, at most
 * 2^32 - 1 blocks without the 64bit feature; the kernel grows the
 * filesystem.  Its messages are resize2fs's.  Offline resizes, and any other
 * argv, stay with the image's resize2fs.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>

#include "tool-resize.h"

#define EXT4_MAGIC 0xEF53
#define EXT4_IOC_RESIZE_FS _IOW('f', 16, uint64_t)
/* The superblock: 1024 bytes in; the fields resize2fs's choice and messages need. */
#define SB_OFFSET 1024
#define SB_BLOCKS_LO 0x04
#define SB_FEATURE_INCOMPAT 0x60
#define SB_BLOCKS_HI 0x150
#define INCOMPAT_64BIT 0x80

static uint32_t le32(const unsigned char *p) {
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int tool_resize_online(const char *dev, const char *mount_point, struct km_error *err) {
        _cleanup_close_ int mnt = open(mount_point, O_RDONLY | O_DIRECTORY | O_CLOEXEC), blk = -EBADF;
        unsigned char sb[1024];
        uint64_t size, blocks, now;
        long page = sysconf(_SC_PAGESIZE);
        struct statfs fs;
        bool bit64;

        if (mnt < 0 || fstatfs(mnt, &fs) < 0)
                return error_set(err, -errno, "%s", mount_point);
        if (fs.f_type != EXT4_MAGIC)
                return error_set_plain(err, -EINVAL, "%s: is not an ext2/3/4 filesystem", mount_point);
        blk = open(dev, O_RDONLY | O_CLOEXEC);
        if (blk < 0 || ioctl(blk, BLKGETSIZE64, &size) < 0)
                return error_set(err, -errno, "%s", dev);
        if (pread(blk, sb, sizeof(sb), SB_OFFSET) != (ssize_t)sizeof(sb) || sb[0x38] != 0x53 || sb[0x39] != 0xEF)
                return error_set_plain(err, -EINVAL, "%s: no ext2/3/4 superblock", dev);
        bit64 = le32(sb + SB_FEATURE_INCOMPAT) & INCOMPAT_64BIT;
        now = le32(sb + SB_BLOCKS_LO) | (bit64 ? (uint64_t)le32(sb + SB_BLOCKS_HI) << 32 : 0);
        blocks = size / fs.f_bsize;
        if (page > fs.f_bsize)
                blocks &= ~(uint64_t)(page / fs.f_bsize - 1);
        if (!bit64 && blocks == UINT64_C(1) << 32)
                blocks--;
        if (!bit64 && blocks > UINT64_C(1) << 32)
                return error_set_plain(err, -EFBIG, "New size too large to be expressed in 32 bits");
        printf("Filesystem at %s is mounted on %s; on-line resizing required\n", dev, mount_point);
        if (blocks == now) {
                printf("The filesystem is already %llu (%ldk) blocks long.  Nothing to do!\n\n",
                       (unsigned long long)now, (long)fs.f_bsize / 1024);
                return 0;
        }
        if (blocks < now)
                return error_set_plain(err, -EINVAL, "On-line shrinking not supported");
        if (ioctl(mnt, EXT4_IOC_RESIZE_FS, &blocks) < 0)
                return errno == EPERM ? error_set_plain(err, -EPERM, "Permission denied to resize filesystem (%s)",
                                                        mount_point) /* resize2fs's words */
                                      : error_set(err, -errno, "%s: EXT4_IOC_RESIZE_FS to %llu blocks", mount_point,
                                                  (unsigned long long)blocks);
        printf("The filesystem on %s is now %llu (%ldk) blocks long.\n\n", dev, (unsigned long long)blocks,
               (long)fs.f_bsize / 1024);
        return 0;
}
