/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tools of the multi-call form (route/vcs-tools.c): which names are
 * tools and which type's mapping serves each, that meson installs a link for
 * every tool of the table and no other, and which arguments may name a
 * device or a mount point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test-helpers.h"
#include "util.h"
#include "vcs-tools.h"

#ifndef KM_MULTICALL_TOOLS
#error "meson passes KM_MULTICALL_TOOLS, the links of src/cli/meson.build"
#endif

static void expect_tool(const char *name, const char *type, unsigned flags) {
        struct vcs_tool t;

        assert_int_equal(vcs_tool_lookup(name, &t), 1);
        assert_string_equal(t.name, name);
        assert_string_equal(t.type, type);
        assert_int_equal(t.flags, flags);
}

static void test_lookup(void **state _unused_) {
        struct vcs_tool t;

        /* What mount-utils runs, each to the type whose image serves it; those that write to their device. */
        expect_tool("blkid", VCS_TOOLS_TYPE, 0);
        expect_tool("blockdev", VCS_TOOLS_TYPE, 0);
        expect_tool("fsck", VCS_TOOLS_TYPE, VCS_TOOL_WRITES);
        expect_tool("mkfs.ext4", "ext4", VCS_TOOL_WRITES);
        expect_tool("mkfs.ext3", "ext3", VCS_TOOL_WRITES);
        expect_tool("mkfs.ext2", "ext2", VCS_TOOL_WRITES);
        expect_tool("mkfs.xfs", "xfs", VCS_TOOL_WRITES);
        expect_tool("fsck.ext4", "ext4", VCS_TOOL_WRITES);
        expect_tool("fsck.xfs", "xfs", VCS_TOOL_WRITES);
        expect_tool("e2fsck", "ext4", VCS_TOOL_WRITES);
        expect_tool("dumpe2fs", "ext4", 0);
        expect_tool("resize2fs", "ext4", VCS_TOOL_DEVICE_MOUNT);
        expect_tool("xfs_growfs", "xfs", VCS_TOOL_MOUNT_POINT);
        expect_tool("xfs_io", "xfs", VCS_TOOL_MOUNT_POINT);
        expect_tool("xfs_repair", "xfs", VCS_TOOL_WRITES);
        /* Another mkfs.TYPE or fsck.TYPE an administrator links: TYPE's mapping. */
        expect_tool("mkfs.btrfs", "btrfs", VCS_TOOL_WRITES);
        expect_tool("fsck.vfat", "vfat", VCS_TOOL_WRITES);
        /* Not tools: kubemount itself, mount and umount (main.c's own), and near misses. */
        assert_int_equal(vcs_tool_lookup("kubemount", &t), 0);
        assert_int_equal(vcs_tool_lookup("mount", &t), 0);
        assert_int_equal(vcs_tool_lookup("umount", &t), 0);
        assert_int_equal(vcs_tool_lookup("mkfs", &t), 0);
        assert_int_equal(vcs_tool_lookup("mkfs.", &t), 0);
        assert_int_equal(vcs_tool_lookup("fsck.", &t), 0);
        assert_int_equal(vcs_tool_lookup("mkfs.a/b", &t), 0);
        assert_int_equal(vcs_tool_lookup("Blkid", &t), 0);
        assert_int_equal(vcs_tool_lookup("", &t), 0);
}

/* The links meson installs (src/cli/meson.build) are the table's tools, one each. */
static void test_links_match_table(void **state _unused_) {
        char *links = strdup(KM_MULTICALL_TOOLS), *save = NULL;
        size_t n, seen = 0;
        const struct vcs_tool *table = vcs_tools(&n);

        for (char *w = strtok_r(links, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                bool found = false;

                for (size_t i = 0; i < n && !found; i++)
                        found = streq(table[i].name, w);
                if (!found)
                        fail_msg("meson installs a link %s that vcs-tools.c does not know", w);
                seen++;
        }
        assert_int_equal(seen, n);
        for (size_t i = 1; i < n; i++)
                assert_true(strcmp(table[i - 1].name, table[i].name) < 0);
        free(links);
}

static void expect_paths(const char *const *argv, size_t want_n, const size_t *want) {
        size_t idx[VCS_TOOL_PATHS_MAX];
        int n = vcs_tool_path_args(argv, idx, ELEMENTSOF(idx));

        assert_int_equal(n, (int)want_n);
        for (size_t i = 0; i < want_n; i++)
                assert_int_equal(idx[i], want[i]);
}

static void test_path_args(void **state _unused_) {
        /* mount-utils' forms: the device, or the mount point, among options. */
        const char *blkid[] = { "blkid", "-p", "-s", "TYPE", "-s", "PTTYPE", "-o", "export", "/dev/xvdf", NULL };
        const char *mkfs[] = { "mkfs.ext4", "-F", "-m0", "/dev/disk/by-id/nvme-Amazon_vol 1", NULL };
        const char *growfs[] = { "xfs_growfs", "-d", "/var/lib/kubelet/plugins/x/globalmount", NULL };
        const char *statfs[] = { "xfs_io", "-c", "statfs", "/var/lib/kubelet/plugins/x/globalmount", NULL };
        /* argv[0] is never one, even as a path; a word given twice counts once; relative words are not paths. */
        const char *twice[] = {
                "/usr/libexec/kubemount/bin/blkid", "/dev/sda", "sdb", "./sdc", "/dev/sda", "/dev/sdd", NULL
        };
        const char *none[] = { "fsck", "-a", NULL };
        const char *empty[] = { NULL };
        const char *many[VCS_TOOL_PATHS_MAX + 3] = { "blkid" };
        char names[VCS_TOOL_PATHS_MAX + 1][16];
        size_t idx[VCS_TOOL_PATHS_MAX];

        expect_paths(blkid, 1, (const size_t[]){ 8 });
        expect_paths(mkfs, 1, (const size_t[]){ 3 });
        expect_paths(growfs, 1, (const size_t[]){ 2 });
        expect_paths(statfs, 1, (const size_t[]){ 3 });
        expect_paths(twice, 2, (const size_t[]){ 1, 5 });
        expect_paths(none, 0, NULL);
        expect_paths(empty, 0, NULL);
        for (size_t i = 0; i <= VCS_TOOL_PATHS_MAX; i++) {
                snprintf(names[i], sizeof(names[i]), "/dev/loop%zu", i);
                many[i + 1] = names[i];
        }
        assert_int_equal(vcs_tool_path_args(many, idx, ELEMENTSOF(idx)), -E2BIG);
        many[VCS_TOOL_PATHS_MAX + 1] = NULL;
        assert_int_equal(vcs_tool_path_args(many, idx, ELEMENTSOF(idx)), VCS_TOOL_PATHS_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup),
                cmocka_unit_test(test_links_match_table),
                cmocka_unit_test(test_path_args),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
