/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * km_mount_table_load() on arbitrary bytes (written to a memfd and read back
 * through /proc/self/fd/N), then every accessor of every mount, a lookup of
 * each target and km_mount_table_refs() of the first targets.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "kubemount.h"

#define MAX_INPUT (256 * 1024)
#define MAX_REFS_LOOKUPS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;

static void walk(const struct km_mount_table *t) {
        size_t n = km_mount_table_size(t);

        check(km_mount_table_at(t, n) == NULL);
        for (size_t i = 0; i < n; i++) {
                const struct km_mount *m = km_mount_table_at(t, i);
                const char *target = km_mount_target(m);
                unsigned p = km_mount_propagation(m);
                char *masked;

                check(m);
                (void)km_mount_id(m);
                (void)km_mount_parent_id(m);
                (void)km_mount_source(m);
                (void)km_mount_fstype(m);
                (void)km_mount_vfs_options(m);
                (void)km_mount_fs_options(m);
                (void)km_mount_peer_group(m);
                (void)km_mount_master(m);
                check(km_mount_root(m)); /* only mountinfo syntax loads */
                check(km_propagation_name(p));
                masked = km_mount_options_masked(m);
                free(masked);

                if (!target)
                        continue;
                /* The lookup finds this mount or one stacked above it. */
                const struct km_mount *top = km_mount_table_find_target(t, target);
                check(top);
                check(strcmp(km_mount_target(top), target) == 0);

                if (i < MAX_REFS_LOOKUPS) {
                        struct km_error err = {};
                        char **refs = NULL;
                        int r = km_mount_table_refs(t, target, &refs, &err);
                        /*
                         * A relative target (mountinfo junk) is refused.  Refs may name target
                         * itself: a mount stacked under it, or (in a table whose order does not
                         * follow stacking) the bind that a later mount above shows (mount-utils
                         * searches from the end).
                         */
                        check(r >= 0 || r == -ENOMEM || (r == -EINVAL && target[0] != '/') || r == -ENOENT);
                        /* Each ref is a mount point of the table (junk ones included). */
                        for (int k = 0; k < r; k++) {
                                bool listed = false;
                                check(refs[k]);
                                for (size_t j = 0; j < km_mount_table_size(t) && !listed; j++) {
                                        const char *tj = km_mount_target(km_mount_table_at(t, j));
                                        listed = tj && strcmp(tj, refs[k]) == 0;
                                }
                                check(listed);
                        }
                        if (r >= 0)
                                check(refs[r] == NULL);
                        km_strv_free(refs);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct km_mount_table *t = NULL;
        struct km_error err = {};
        char path[64];
        int r;

        if (size > MAX_INPUT)
                return 0;
        if (memfd < 0) {
                memfd = memfd_create("fuzz-mountinfo", MFD_CLOEXEC);
                check(memfd >= 0);
        }
        if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
                abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);

        r = km_mount_table_load(NULL, path, &t, &err);
        if (r < 0) {
                check(t == NULL);
                check(err.code == r);
                check(memchr(err.message, '\0', sizeof(err.message)));
                check(strstr(err.message, path));
                return 0;
        }
        check(t);
        check(km_mount_table_size(t) > 0);
        walk(t);
        km_mount_table_free(t);
        return 0;
}
