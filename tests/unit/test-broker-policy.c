/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker's policy (broker-policy.c): each rule of broker_decide
 * for targets, flags, binds, counts, fstypes and options, with the errno of
 * its refusal and a reason that never holds a secret.  FUSE, umount, NULLs,
 * broker_describe and hostile strings: test-broker-describe.c.
 */
#include "broker-policy-fixture.h"

/* ---- targets ---- */

static void test_target_must_be_below_kubelet_dir(void **state) {
        struct broker_call c;

        allow_tmpfs_on(KUBELET "/x");
        allow_tmpfs_on(KUBELET "/pods/p/volumes/a b/.hidden/...");
        c = mnt("tmpfs", "/etc", "tmpfs", 0, NULL);
        expect_deny(&c, EPERM, "target /etc is not at or below its mount targets /var/lib/kubelet/a, ...");
        c.target = KUBELET;
        expect_deny(&c, EPERM, "is not at or below its mount targets");
        c.target = "/var/lib/kubeletX/y"; /* a component boundary, not a prefix */
        expect_deny(&c, EPERM, "is not at or below its mount targets");
        c.target = "/var/lib";
        expect_deny(&c, EPERM, "is not at or below its mount targets");
        c.target = "/";
        expect_deny(&c, EPERM, "trailing '/'");
}

static void test_target_may_be_the_served_target(void **state) {
        struct broker_policy p = policy();
        struct broker_call c = mnt("tmpfs", "/srv/routed", "tmpfs", 0, NULL);
        struct broker_verdict v;

        p.targets = (char *[]){ (char *)"/srv/routed", NULL }; /* outside the kubelet dir: equal to it, never below */
        v = expect_allow_with(&p, &c, BROKER_DO_MOUNT);
        broker_verdict_done(&v);
        c.target = "/srv/routed/x";
        expect_deny_with(&p, &c, EPERM, "is not at or below its mount target /srv/routed");
}

/* A routed container's scope is its target: never another pod's volume, nor the kubelet's own dirs. */
static void test_routed_scope(void **state) {
        static const char *const refused[] = {
                KUBELET "/pods/victim/volumes/kubernetes.io~secret/tok",
                KUBELET "/pods/p/volumes/kubernetes.io~csi/other/mount",
                KUBELET "/pods/p/volumes/kubernetes.io~csi/v",
                KUBELET "/pods/p",
                KUBELET "/pki",
                KUBELET "/plugins/kubernetes.io/csi",
                KUBELET "/a",
                SERVES "x",
        };
        struct broker_policy p = policy();
        struct broker_verdict v;

        p.targets = (char *[]){ (char *)SERVES, NULL };
        v = expect_allow_with(&p, &(struct broker_call){ .target = SERVES, .fstype = "tmpfs" }, BROKER_DO_MOUNT);
        broker_verdict_done(&v);
        v = expect_allow_with(&p, &(struct broker_call){ .target = SERVES "/sub", .fstype = "tmpfs" }, BROKER_DO_MOUNT);
        broker_verdict_done(&v);
        for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
                test_note("target %s", refused[i]);
                expect_deny_with(&p, &(struct broker_call){ .target = refused[i], .fstype = "tmpfs" }, EPERM,
                                 "is not at or below its mount target " SERVES);
        }
        /* A bind's source too: only from below its own target. */
        expect_deny_with(&p,
                         &(struct broker_call){ .source = KUBELET "/pods/victim/volumes/kubernetes.io~secret/tok",
                                                .target = SERVES "/sub",
                                                .flags = MS_BIND },
                         EPERM, "bind source is not at or below its mount target");
        v = expect_allow_with(&p,
                              &(struct broker_call){ .source = SERVES "/a", .target = SERVES "/b", .flags = MS_BIND },
                              BROKER_DO_BIND);
        broker_verdict_done(&v);
}

/* mount.cifs's own data: unc=\\HOST\SHARE, a backslash taken for cifs (and smb3) alone. */
static void test_cifs_unc(void **state) {
        struct broker_call c = mnt("//127.0.0.1/share", KUBELET "/x", "cifs", 0,
                                   "ip=127.0.0.1,unc=\\\\127.0.0.1\\share,vers=3.0,user=u,pass=" SECRET);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_MOUNT);

        assert_non_null(strstr(v.data, "unc=\\\\127.0.0.1\\share"));
        broker_verdict_done(&v);
        c.fstype = "smb3";
        v = expect_allow(&c, BROKER_DO_MOUNT);
        assert_non_null(strstr(v.data, "unc=\\\\127.0.0.1\\share"));
        broker_verdict_done(&v);
        c.fstype = "tmpfs";
        expect_deny(&c, EINVAL, "options contains a backslash");
}

/* A run container with no --mount-target mounts nowhere (what the kubelet dir holds is not its to cover). */
static void test_no_targets(void **state) {
        struct broker_policy p = policy();

        p.targets = NULL;
        expect_deny_with(&p, &(struct broker_call){ .target = KUBELET "/a", .fstype = "tmpfs" }, EPERM,
                         "the container has no mount target (run --mount-target)");
        p.targets = (char *[]){ NULL };
        expect_deny_with(&p, &(struct broker_call){ .target = KUBELET "/a", .fstype = "tmpfs" }, EPERM,
                         "has no mount target");
}

/* What `run --mount-target` takes: a pod's volume or a plugin's dir, never the kubelet's own. */
static void test_target_check(void **state) {
        static const char *const good[] = {
                KUBELET "/pods/uid/volumes/kubernetes.io~csi/v",
                KUBELET "/pods/uid/volumes/kubernetes.io~csi/v/mount",
                KUBELET "/plugins/kubernetes.io/iscsi",
                KUBELET "/plugins/kubemount-test/vol",
                KUBELET "/e2e/master",
        };
        static const char *const bad[][2] = {
                { KUBELET, "below the kubelet dir" },
                { "/etc/x", "below the kubelet dir" },
                { "var/lib/kubelet/a/b", "below the kubelet dir" },
                { KUBELET "/pods", "direct child" },
                { KUBELET "/config.yaml", "direct child" },
                { KUBELET "/pki/kubelet-client-current.pem", "kubelet's own dirs" },
                { KUBELET "/pki/x/y", "kubelet's own dirs" },
                { KUBELET "/plugins_registry/x", "kubelet's own dirs" },
                { KUBELET "/device-plugins/kubelet.sock", "kubelet's own dirs" },
                { KUBELET "/pod-resources/x", "kubelet's own dirs" },
                { KUBELET "/checkpoints/x", "kubelet's own dirs" },
                { KUBELET "/pods/uid", "not a pod's volume" },
                { KUBELET "/pods/uid/volumes", "not a pod's volume" },
                { KUBELET "/pods/uid/volumes/kubernetes.io~secret", "not a pod's volume" },
                { KUBELET "/pods/uid/volume-subpaths/v/c/0", "not a pod's volume" },
                { KUBELET "/pods/uid/containers/c/x", "not a pod's volume" },
                { KUBELET "/pods/uid/volumesX/p/v", "not a pod's volume" },
                { KUBELET "/plugins/kubernetes.io", "plugin's own dir" },
                { KUBELET "/e2e/../pki/x", "'..' component" },
                { KUBELET "/e2e//x", "'..' component" },
                { KUBELET "/e2e/x/", "'..' component" },
        };
        const char *why;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                test_note("good %s", good[i]);
                assert_int_equal(broker_target_check(KUBELET, good[i], &why), 0);
                assert_null(why);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                test_note("bad %s", bad[i][0]);
                assert_int_equal(broker_target_check(KUBELET, bad[i][0], &why), -EINVAL);
                assert_non_null(why);
                assert_non_null(strstr(why, bad[i][1]));
        }
        assert_int_equal(broker_target_check(KUBELET, NULL, &why), -EINVAL);
        assert_int_equal(broker_target_check(NULL, KUBELET "/e2e/x", &why), -EINVAL);
        assert_true(broker_targets_overlap(KUBELET "/e2e/x", KUBELET "/e2e/x"));
        assert_true(broker_targets_overlap(KUBELET "/e2e/x", KUBELET "/e2e/x/y"));
        assert_true(broker_targets_overlap(KUBELET "/e2e/x/y", KUBELET "/e2e/x"));
        assert_false(broker_targets_overlap(KUBELET "/e2e/x", KUBELET "/e2e/xy"));
}

static void test_target_syntax(void **state) {
        static const char *const bad[][2] = {
                { "var/lib/kubelet/x", "is not absolute" },
                { "", "is not absolute" },
                { "x", "is not absolute" },
                { "//var/lib/kubelet/x", "empty component" },
                { KUBELET "//x", "empty component" },
                { KUBELET "/x/", "empty component" },
                { KUBELET "/./x", "'.' or '..' component" },
                { KUBELET "/x/.", "'.' or '..' component" },
                { KUBELET "/../../../etc", "'.' or '..' component" },
                { KUBELET "/x/..", "'.' or '..' component" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct broker_call c = mnt("tmpfs", bad[i][0], "tmpfs", 0, NULL);
                expect_deny(&c, EPERM, bad[i][1]);
        }
        allow_tmpfs_on(KUBELET "/..x/.y/x..");
}

static void test_target_length(void **state) {
        char path[PATH_MAX + 1];
        struct broker_call c;

        memset(path, 'a', sizeof(path) - 1);
        path[sizeof(path) - 1] = '\0';
        memcpy(path, KUBELET "/", strlen(KUBELET "/"));
        for (size_t i = 100; i < PATH_MAX; i += 100)
                path[i] = '/';
        path[strlen(KUBELET "/a")] = '/';         /* below its target /a */
        c = mnt("tmpfs", path, "tmpfs", 0, NULL); /* PATH_MAX bytes */
        expect_deny(&c, ENAMETOOLONG, "target is longer than PATH_MAX");
        path[PATH_MAX - 1] = '\0';
        allow_tmpfs_on(path);
        path[PATH_MAX - 1] = 'a';
        c = umnt(path, 0);
        expect_deny(&c, ENAMETOOLONG, "longer than PATH_MAX");
}

static void test_target_control_characters_are_escaped(void **state) {
        struct broker_call c = mnt("tmpfs", "/etc\n\x1b[2J\\x", "tmpfs", 0, NULL);

        /* The kernel takes any byte in a name: below the kubelet dir it is allowed, and logged escaped. */
        allow_tmpfs_on(KUBELET "/a/x\nb\tc");
        expect_deny(&c, EPERM, "target /etc\\x0a\\x1b[2J\\x5cx is not at or below its mount targets");
}

/* ---- flags ---- */

static void test_flags_refused(void **state) {
        static const struct {
                unsigned long flags;
                int error;
                const char *why;
        } cases[] = {
                { MS_REMOUNT, EPERM, "MS_REMOUNT is not allowed" },
                { MS_REMOUNT | MS_BIND | MS_RDONLY, EPERM, "MS_REMOUNT is not allowed" },
                { MS_MGC_VAL | MS_REMOUNT, EPERM, "MS_REMOUNT is not allowed" },
                { MS_MOVE, EPERM, "MS_MOVE is not allowed" },
                { MS_SHARED, EPERM, "propagation" },
                { MS_PRIVATE | MS_REC, EPERM, "propagation" },
                { MS_SLAVE, EPERM, "propagation" },
                { MS_UNBINDABLE, EPERM, "propagation" },
                { MS_BIND | MS_SHARED, EPERM, "propagation" },
                { MS_MANDLOCK, EPERM, "MS_MANDLOCK is not allowed" },
                { MS_REC, EINVAL, "mount flags 0x4000 are not allowed" }, /* only a bind is recursive */
                { MS_POSIXACL, EINVAL, "mount flags 0x10000 are not allowed" },
                { 1ul << 31, EINVAL, "mount flags 0x80000000 are not allowed" },    /* MS_NOUSER */
                { 1ul << 40, EINVAL, "are not allowed" },                           /* beyond 32 bits */
                { 0xc1000000ul, EINVAL, "mount flags 0xc0000000 are not allowed" }, /* not the magic */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct broker_call c = mnt(KUBELET "/a", KUBELET "/x", "tmpfs", cases[i].flags, "size=1m");
                test_note("flags 0x%lx", cases[i].flags);
                expect_deny(&c, cases[i].error, cases[i].why);
        }
}

static void test_flags_kept_and_forced(void **state) {
        const unsigned long harmless = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC |
                                       MS_NOSYMFOLLOW | MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME |
                                       MS_LAZYTIME | MS_SILENT;
        struct broker_policy p = policy();
        struct broker_call c = mnt("tmpfs", KUBELET "/x", "tmpfs", harmless, NULL);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_MOUNT);

        assert_int_equal(v.flags, harmless);
        broker_verdict_done(&v);
        /* The old magic is dropped as the kernel drops it, with the bits above it. */
        c.flags = MS_MGC_VAL | MS_RDONLY | (1ul << 32);
        v = expect_allow(&c, BROKER_DO_MOUNT);
        assert_int_equal(v.flags, MS_RDONLY | FORCED);
        broker_verdict_done(&v);
        c.flags = 0;
        p.keep_suid_dev = true;
        v = expect_allow_with(&p, &c, BROKER_DO_MOUNT);
        assert_int_equal(v.flags, 0);
        broker_verdict_done(&v);
}

/* ---- binds ---- */

static void test_bind(void **state) {
        struct broker_call c =
                mnt(KUBELET "/a", KUBELET "/x", "cgroup", MS_BIND | MS_REC | MS_RDONLY, "password=" SECRET);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_BIND);

        /* fstype and data mean nothing to a bind: neither is checked nor passed on. */
        assert_int_equal(v.flags, MS_BIND | MS_REC | MS_RDONLY | FORCED);
        assert_null(v.data);
        check_describe(&c, &v, "mount --rbind " KUBELET "/a on " KUBELET "/x (ro,nosuid,nodev): allowed");
        broker_verdict_done(&v);

        c = mnt(SERVES, KUBELET "/x", NULL, MS_BIND, NULL);
        v = expect_allow(&c, BROKER_DO_BIND);
        assert_int_equal(v.flags, MS_BIND | FORCED);
        broker_verdict_done(&v);

        /* The source under the target's rules, its text kept out of the reason. */
        c.source = "/etc";
        expect_deny(&c, EPERM, "bind source is not at or below its mount targets /var/lib/kubelet/a, ...");
        c.source = "/";
        expect_deny(&c, EPERM, "bind source has an empty component");
        c.source = KUBELET;
        expect_deny(&c, EPERM, "bind source is not at or below its mount targets");
        c.source = KUBELET "/../../../etc";
        expect_deny(&c, EPERM, "bind source has a '.' or '..' component");
        c.source = "u:" SECRET "@h";
        expect_deny(&c, EPERM, "bind source is not absolute");
        c.source = NULL;
        expect_deny(&c, EFAULT, "bind source is a NULL pointer");
        c.source = KUBELET "/a";
        c.target = "/etc";
        expect_deny(&c, EPERM, "target /etc is not at or below its mount targets");
}

/* ---- count ---- */

static void test_mount_count(void **state) {
        char *many[BROKER_MAX_MOUNTS_DEFAULT + 1] = { NULL };
        char names[BROKER_MAX_MOUNTS_DEFAULT][64];
        struct broker_policy p = policy();
        struct broker_call c = mnt("tmpfs", KUBELET "/x", "tmpfs", 0, NULL),
                           b = mnt(KUBELET "/a", KUBELET "/y", NULL, MS_BIND, NULL);
        struct broker_call u = umnt(KUBELET "/m/3", 0);
        struct broker_verdict v;

        for (size_t i = 0; i < BROKER_MAX_MOUNTS_DEFAULT; i++) {
                snprintf(names[i], sizeof(names[i]), KUBELET "/m/%zu", i);
                many[i] = names[i];
        }
        p.mounted = many;
        expect_deny_with(&p, &c, EPERM, "at most 16 mounts");
        expect_deny_with(&p, &b, EPERM, "at most 16 mounts");
        v = expect_allow_with(&p, &u, BROKER_DO_UMOUNT); /* an umount is always counted in */
        broker_verdict_done(&v);
        many[BROKER_MAX_MOUNTS_DEFAULT - 1] = NULL;
        v = expect_allow_with(&p, &c, BROKER_DO_MOUNT);
        broker_verdict_done(&v);

        p.max_mounts = 2;
        p.mounted = mounted;
        expect_deny_with(&p, &c, EPERM, "at most 2 mounts");
        p.mounted = NULL;
        v = expect_allow_with(&p, &c, BROKER_DO_MOUNT);
        broker_verdict_done(&v);
}

/* ---- fstypes and options ---- */

static void test_fstype(void **state) {
        struct broker_policy p = policy();
        char *with_fuse[] = { (char *)"fuse", (char *)"fuseblk", NULL }, *blk_x[] = { (char *)"fuseblk.ntfs", NULL };
        struct broker_call c = mnt("cgroup", KUBELET "/x", "cgroup", 0, NULL);
        struct broker_verdict v;

        expect_deny(&c, EPERM, "fstype cgroup is not allowed for this container");
        c.fstype = "cgroup2";
        expect_deny(&c, EPERM, "fstype cgroup2 is not allowed");
        c.fstype = "tmpfs\n";
        expect_deny(&c, EPERM, "fstype is not a filesystem type name");
        c.fstype = "tmpfs," VALUE;
        expect_deny(&c, EPERM, "fstype is not a filesystem type name");
        c.fstype = "";
        expect_deny(&c, EPERM, "fstype is not a filesystem type name");
        c.fstype = NULL;
        expect_deny(&c, EINVAL, "fstype is a NULL pointer");
        c.fstype = "fuse"; /* "fuse" alone is not "fuse.sshfs" */
        c.data = "fd=3,rootmode=40000";
        expect_deny(&c, EPERM, "fstype fuse is not allowed");
        c.fstype = "fuseblk";
        expect_deny(&c, EPERM, "fstype fuseblk is not allowed");
        c.fstype = "fuseblk.sshfs"; /* fuse.sshfs is no block device client */
        expect_deny(&c, EPERM, "fstype fuseblk.sshfs is not allowed");
        c.fstype = "fuse";
        c.data = "fd=3,subtype=" VALUE;
        expect_deny(&c, EPERM, "fstype fuse with its subtype= option is not allowed");
        c.data = "fd=3,subtype=a/b";
        expect_deny(&c, EPERM, "fstype fuse with its subtype= option is not a filesystem type name");
        c.data = "fd=3,subtype=sshfs,subtype=" VALUE;
        expect_deny(&c, EINVAL, "subtype=");
        c.data = "fd=3,subtype";
        expect_deny(&c, EINVAL, "subtype=");
        c.fstype = "fuse.sshfs";
        c.data = "fd=3,subtype=sshfs";
        expect_deny(&c, EINVAL, "subtype=");

        c.fstype = "fuse";
        c.data = "fd=3,rootmode=40000,subtype=sshfs";
        v = expect_allow(&c, BROKER_DO_FUSE);
        broker_verdict_done(&v);

        p.types = with_fuse; /* "fuse" listed: fuse without a subtype, "fuseblk": all of fuseblk */
        expect_deny_with(&p, &c, EPERM, "fstype fuse with its subtype= option is not allowed");
        c.data = "fd=3";
        v = expect_allow_with(&p, &c, BROKER_DO_FUSE);
        broker_verdict_done(&v);
        c.fstype = "fuseblk.ntfs";
        v = expect_allow_with(&p, &c, BROKER_DO_FUSE);
        broker_verdict_done(&v);
        p.types = blk_x;
        v = expect_allow_with(&p, &c, BROKER_DO_FUSE);
        broker_verdict_done(&v);
        c.fstype = "fuseblk";
        expect_deny_with(&p, &c, EPERM, "fstype fuseblk is not allowed");
        p.types = NULL;
        c.fstype = "tmpfs";
        expect_deny_with(&p, &c, EPERM, "fstype tmpfs is not allowed");
}

static void test_options_validated(void **state) {
        struct broker_call c = mnt("//srv/share", KUBELET "/x", "cifs", 0, "username=u,password=" SECRET ",\n");
        char *big = malloc(5000);
        struct broker_verdict v;

        assert_non_null(big);
        expect_deny(&c, EINVAL, "options contains a control character");
        c.data = "password=" SECRET "\\,x";
        c.fstype = "nfs"; /* (cifs takes a backslash: test_cifs_unc) */
        expect_deny(&c, EINVAL, "options contains a backslash");
        c.fstype = "cifs";
        c.data = "password=\"" SECRET;
        expect_deny(&c, EINVAL, "options has an unbalanced quote");
        memset(big, 'a', 4096);
        big[4096] = '\0';
        memcpy(big, "password=" SECRET ",", strlen("password=" SECRET ","));
        c.data = big;
        expect_deny(&c, EINVAL, "options are longer than 4095 bytes");
        big[4095] = '\0';
        v = expect_allow(&c, BROKER_DO_MOUNT);
        assert_string_equal(v.data, big); /* a kernel filesystem's options pass as they are */
        broker_verdict_done(&v);
        free(big);

        c.data = "username=u,password=" SECRET;
        c.source = "//srv/share\r";
        expect_deny(&c, EINVAL, "source contains a control character");
        c.source = NULL; /* "none" */
        v = expect_allow(&c, BROKER_DO_MOUNT);
        assert_string_equal(v.data, "username=u,password=" SECRET);
        assert_int_equal(v.flags, FORCED);
        broker_verdict_done(&v);
        c.data = NULL;
        v = expect_allow(&c, BROKER_DO_MOUNT);
        assert_null(v.data);
        broker_verdict_done(&v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_target_must_be_below_kubelet_dir),
                cmocka_unit_test(test_target_may_be_the_served_target),
                cmocka_unit_test(test_routed_scope),
                cmocka_unit_test(test_no_targets),
                cmocka_unit_test(test_cifs_unc),
                cmocka_unit_test(test_target_check),
                cmocka_unit_test(test_target_syntax),
                cmocka_unit_test(test_target_length),
                cmocka_unit_test(test_target_control_characters_are_escaped),
                cmocka_unit_test(test_flags_refused),
                cmocka_unit_test(test_flags_kept_and_forced),
                cmocka_unit_test(test_bind),
                cmocka_unit_test(test_mount_count),
                cmocka_unit_test(test_fstype),
                cmocka_unit_test(test_options_validated),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
