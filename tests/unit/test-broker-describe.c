/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker's policy, continued (test-broker-policy.c): FUSE's option
 * rewriting and refusals, umount, NULL pointers and the policy itself,
 * broker_describe's one masked line, hostile strings.
 */
#include "broker-policy-fixture.h"

/* ---- FUSE ---- */

static void expect_fuse(const char *data, const char *want, int fd) {
        struct broker_call c = mnt("u@h:/", KUBELET "/x", "fuse.sshfs", MS_NOSUID | MS_NODEV, data);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_FUSE);

        test_note("%s -> %s", data, v.data);
        assert_string_equal(v.data, want);
        assert_int_equal(v.fuse_fd, fd);
        assert_int_equal(v.flags, FORCED);
        broker_verdict_done(&v);
}

static void test_fuse_rewriting(void **state) {
        expect_fuse("fd=3,rootmode=40000,user_id=0,group_id=0",
                    "rootmode=40000,user_id=1879048192,group_id=1879048192,allow_other", 3);
        expect_fuse("rootmode=40000,user_id=1000,group_id=65535,fd=12,allow_other",
                    "rootmode=40000,user_id=1879049192,group_id=1879113727,allow_other", 12);
        /* Missing ids become the container's root; the rest stays, in order. */
        expect_fuse("max_read=131072,fd=7,default_permissions,blksize=4096",
                    "max_read=131072,default_permissions,blksize=4096,user_id=1879048192,group_id=1879048192,"
                    "allow_other",
                    7);
        expect_fuse("fd=0", "user_id=1879048192,group_id=1879048192,allow_other", 0);
        expect_fuse(",,fd=2147483647,,group_id=5,", "group_id=1879048197,user_id=1879048192,allow_other", INT_MAX);
        expect_fuse("fd=3,context=\"system_u:object_r:x:s0:c1,c2\"",
                    "context=\"system_u:object_r:x:s0:c1,c2\",user_id=1879048192,group_id=1879048192,allow_other", 3);
}

static void test_fuse_refusals(void **state) {
        static const char *const bad[][2] = {
                { NULL, "FUSE options have no fd=" },
                { "", "FUSE options have no fd=" },
                { "rootmode=40000,password=" SECRET, "FUSE options have no fd=" },
                { "fd=3,fd=4", "more than one fd=" },
                { "fd=3,password=" SECRET ",fd=3", "more than one fd=" },
                { "fd=-1", "fd is not a decimal fd" },
                { "fd=+3", "fd is not a decimal fd" },
                { "fd=03", "fd is not a decimal fd" },
                { "fd=0x3", "fd is not a decimal fd" },
                { "fd=2147483648", "fd is not a decimal fd" },
                { "fd=", "fd is not a decimal fd" },
                { "fd", "fd is not a decimal fd" },
                { "fd=\"3\"", "fd is not a decimal fd" },
                { "fd=3,user_id=65536", "user_id is outside the container's 65536 ids" },
                { "fd=3,group_id=4294967295", "group_id is outside" },
                { "fd=3,user_id=99999999999", "user_id is not a decimal id" },
                { "fd=3,user_id=-1", "user_id is not a decimal id" },
                { "fd=3,group_id=010", "group_id is not a decimal id" },
                { "fd=3,user_id", "user_id is not a decimal id" },
                { "fd=3,user_id=0,user_id=" VALUE, "user_id is not a decimal id" },
                { "fd=3,group_id=9" VALUE, "group_id is not a decimal id" },
                { "fd=" VALUE, "fd is not a decimal fd" },
        };
        struct broker_policy p = policy();
        struct broker_call c;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                c = mnt("u@h:/", KUBELET "/x", "fuse.sshfs", 0, bad[i][0]);
                test_note("options %s", bad[i][0] ? bad[i][0] : "(null)");
                expect_deny(&c, EINVAL, bad[i][1]);
        }
        /* host_uid + id past 2^32 - 2: no id to map to. */
        p.host_uid = UINT32_MAX - 10;
        c = mnt("u@h:/", KUBELET "/x", "fuse.sshfs", 0, "fd=3,user_id=10");
        expect_deny_with(&p, &c, EINVAL, "user_id is outside");
        p.id_count = 0;
        c.data = "fd=3,group_id=0";
        expect_deny_with(&p, &c, EINVAL, "group_id is outside the container's 0 ids");
}

/* ---- umount ---- */

static void test_umount(void **state) {
        struct broker_call c = umnt(KUBELET "/a", MNT_DETACH | MNT_FORCE);
        struct broker_policy p = policy();
        struct broker_verdict v = expect_allow(&c, BROKER_DO_UMOUNT);

        assert_int_equal(v.flags, MNT_DETACH | MNT_FORCE | UMOUNT_NOFOLLOW);
        check_describe(&c, &v, "umount " KUBELET "/a: allowed");
        broker_verdict_done(&v);
        c = umnt(SERVES, UMOUNT_NOFOLLOW);
        v = expect_allow(&c, BROKER_DO_UMOUNT);
        assert_int_equal(v.flags, UMOUNT_NOFOLLOW);
        broker_verdict_done(&v);

        c = umnt(KUBELET "/a", MNT_EXPIRE);
        expect_deny(&c, EINVAL, "umount flags 0x4 are not allowed");
        c.flags = 1ul << 33;
        expect_deny(&c, EINVAL, "umount flags 0x200000000 are not allowed");
        c = umnt(KUBELET "/b", 0);
        expect_deny(&c, EPERM, "target " KUBELET "/b is not a mount of this container");
        c.target = KUBELET "/a/"; /* no string games around the exact compare */
        expect_deny(&c, EPERM, "empty component");
        c.target = KUBELET "/b/../a";
        expect_deny(&c, EPERM, "'.' or '..' component");
        c.target = "/proc/sys";
        expect_deny(&c, EPERM, "target /proc/sys is not at or below its mount targets /var/lib/kubelet/a, ...");
        c.target = NULL;
        expect_deny(&c, EFAULT, "target is a NULL pointer");
        p.mounted = NULL;
        c.target = KUBELET "/a";
        expect_deny_with(&p, &c, EPERM, "is not a mount of this container");
}

/* ---- NULLs and the policy itself ---- */

static void test_null_pointers(void **state) {
        struct broker_policy p = policy();
        struct broker_call c = { .op = BROKER_OP_MOUNT }, ok = mnt(NULL, KUBELET "/x", "tmpfs", 0, NULL);
        struct broker_verdict v;
        char *line;

        expect_deny(&c, EFAULT, "target is a NULL pointer");
        c.op = BROKER_OP_UMOUNT;
        expect_deny(&c, EFAULT, "target is a NULL pointer");
        c.op = (enum broker_op)42;
        expect_deny(&c, EINVAL, "unknown operation 42");

        assert_int_equal(broker_decide(NULL, &ok, &v), 0);
        assert_int_equal(v.action, BROKER_DENY);
        assert_int_equal(v.error, EINVAL);
        assert_int_equal(broker_decide(&p, NULL, &v), 0);
        assert_int_equal(v.action, BROKER_DENY);
        assert_null(broker_describe(NULL, &v));
        assert_null(broker_describe(&ok, NULL));
        broker_verdict_done(&v);
        broker_verdict_done(&v); /* twice is harmless */

        p.kubelet_dir = NULL;
        expect_deny_with(&p, &ok, EPERM, "the policy has no kubelet dir");
        p.kubelet_dir = "var/lib/kubelet";
        expect_deny_with(&p, &ok, EPERM, "the policy has no kubelet dir");
        p.kubelet_dir = KUBELET;
        v = expect_allow_with(&p, &ok, BROKER_DO_MOUNT);
        line = broker_describe(&(struct broker_call){ .op = BROKER_OP_MOUNT }, &v);
        assert_non_null(line);
        assert_string_equal(line, "mount -t (null) (null) on (null) (nosuid,nodev): allowed");
        free(line);
        broker_verdict_done(&v);
}

/* ---- broker_describe ---- */

static void expect_line(const struct broker_call *c, const char *want) {
        struct broker_policy p = policy();
        struct broker_verdict v;
        char *line;

        assert_int_equal(broker_decide(&p, c, &v), 0);
        line = broker_describe(c, &v);
        assert_non_null(line);
        test_note("%s", line);
        assert_string_equal(line, want);
        free(line);
        broker_verdict_done(&v);
}

static void test_describe(void **state) {
        struct broker_call c = mnt("u@h:/", KUBELET "/x", "fuse.sshfs", 0, "fd=3,rootmode=40000,user_id=0,group_id=0");

        expect_line(&c, "mount -t fuse.sshfs u@h:/ on " KUBELET
                        "/x (nosuid,nodev,rootmode=40000,user_id=1879048192,"
                        "group_id=1879048192,allow_other): allowed");
        c = mnt("//u:" SECRET "@srv/share", KUBELET "/x", "cifs", MS_RDONLY, "username=u,password=" SECRET);
        expect_line(&c, "mount -t cifs //u:<masked>@srv/share on " KUBELET
                        "/x (ro,nosuid,nodev,username=u,password=<masked>): allowed");
        c.flags = MS_REMOUNT; /* a refusal shows the call's options, masked as well */
        expect_line(&c, "mount -t cifs //u:<masked>@srv/share on " KUBELET
                        "/x (username=u,password=<masked>): refused: MS_REMOUNT is not allowed");
        c = mnt("u:" SECRET "@h:/", "/etc", "fuse.sshfs", 0, NULL);
        expect_line(&c,
                    "mount -t fuse.sshfs u:<masked>@h:/ on /etc: refused: target /etc is not at or below its mount "
                    "targets " KUBELET "/a, ...");
        c = umnt("/etc", 0);
        expect_line(&c, "umount /etc: refused: target /etc is not at or below its mount targets " KUBELET "/a, ...");
        c = mnt(KUBELET "/a", KUBELET "/x", NULL, MS_BIND, NULL);
        expect_line(&c, "mount --bind " KUBELET "/a on " KUBELET "/x (nosuid,nodev): allowed");
        c = mnt("x\n", "/a\tb\\", "t\x1b", 0, "a=\n");
        expect_line(&c,
                    "mount -t t\\x1b x\\x0a on /a\\x09b\\x5c (a=\\x0a): refused: "
                    "target /a\\x09b\\x5c is not at or below its mount targets " KUBELET "/a, ...");
}

static void test_describe_masks_sources(void **state) {
        static const char *const sources[] = {
                "u:" SECRET "@h:/",        "sshfs#u:" SECRET "@h:/srv",   "//u:" SECRET "@h/s",
                "https://u:" SECRET "@h/", "u:" SECRET "@" SECRET "@h:/", "password=" SECRET,
                "s3:pass=" SECRET,
        };

        for (size_t i = 0; i < ELEMENTSOF(sources); i++) {
                struct broker_call c = mnt(sources[i], KUBELET "/x", "fuse.sshfs", 0, "fd=3");
                struct broker_verdict v = expect_allow(&c, BROKER_DO_FUSE); /* checks the line has no secret */

                broker_verdict_done(&v);
        }
        expect_line(&(struct broker_call){ .source = "srv:/exports", .target = KUBELET "/x", .fstype = "nfs" },
                    "mount -t nfs srv:/exports on " KUBELET "/x (nosuid,nodev): allowed");
}

/* ---- hostile strings ---- */

static void test_hostile_strings(void **state) {
        size_t n = 64 * 1024;
        char *junk = malloc(n + 1), *line;
        struct broker_policy p = policy();
        struct broker_call c;
        struct broker_verdict v;

        assert_non_null(junk);
        for (size_t i = 0; i < n; i++)
                junk[i] = (char)(1 + i % 255);
        junk[n] = '\0';
        c = mnt(junk, junk, junk, ~0ul, junk);
        for (unsigned long flags = 0; flags < 2; flags++) {
                c.flags = flags ? MS_BIND : 0;
                assert_int_equal(broker_decide(&p, &c, &v), 0);
                assert_int_equal(v.action, BROKER_DENY);
                assert_true(strlen(v.why) < sizeof(v.why));
                assert_false(has_control(v.why));
                line = broker_describe(&c, &v);
                assert_non_null(line);
                assert_false(has_control(line));
                free(line);
                broker_verdict_done(&v);
        }
        memcpy(junk, "/etc/", strlen("/etc/"));
        junk[PATH_MAX - 2] = '\0';
        c = mnt(NULL, junk, "tmpfs", 0, NULL);
        expect_deny(&c, EPERM, "..."); /* cut in the reason, still one line */
        free(junk);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fuse_rewriting),  cmocka_unit_test(test_fuse_refusals),
                cmocka_unit_test(test_umount),          cmocka_unit_test(test_null_pointers),
                cmocka_unit_test(test_describe),        cmocka_unit_test(test_describe_masks_sources),
                cmocka_unit_test(test_hostile_strings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
