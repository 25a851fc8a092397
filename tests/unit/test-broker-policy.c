/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker's policy (broker-policy.c): each rule of broker_decide
 * with the errno of its refusal and a reason that never holds a secret,
 * FUSE's option rewriting, hostile strings, and broker_describe's one
 * masked line.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "broker-policy.h"
#include "mount-flags.h"
#include "test-helpers.h"

#define KUBELET "/var/lib/kubelet"
#define SERVES KUBELET "/pods/p/volumes/kubernetes.io~csi/v/mount"
#define SECRET "hunter2"
/* A value of an option that is no secret: shown in the log, never in a reason. */
#define VALUE "v4lue"
#define HOST_ID 1879048192u /* 0x70000000 */
#define FORCED (MS_NOSUID | MS_NODEV)

static char *types[] = { (char *)"fuse.sshfs", (char *)"tmpfs", (char *)"nfs", (char *)"cifs", (char *)"smb3", NULL };
static char *mounted[] = { (char *)KUBELET "/a", (char *)SERVES, NULL };
/* A run container's --mount-target paths: what these tests mount at, and below. */
static char *targets[] = { (char *)KUBELET "/a", (char *)KUBELET "/b",    (char *)KUBELET "/x",   (char *)KUBELET "/y",
                           (char *)KUBELET "/m", (char *)KUBELET "/pods", (char *)KUBELET "/..x", NULL };

static struct broker_policy policy(void) {
        return (struct broker_policy){ .kubelet_dir = KUBELET,
                                       .targets = targets,
                                       .types = types,
                                       .host_uid = HOST_ID,
                                       .host_gid = HOST_ID,
                                       .id_count = 65536,
                                       .mounted = mounted };
}

static struct broker_call mnt(const char *source, const char *target, const char *fstype, unsigned long flags,
                              const char *data) {
        return (struct broker_call){ .op = BROKER_OP_MOUNT,
                                     .source = source,
                                     .target = target,
                                     .fstype = fstype,
                                     .flags = flags,
                                     .data = data };
}

static struct broker_call umnt(const char *target, unsigned long flags) {
        return (struct broker_call){ .op = BROKER_OP_UMOUNT, .target = target, .flags = flags };
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* broker_describe's line: one line, no secret, with want in it. */
static void check_describe(const struct broker_call *c, const struct broker_verdict *v, const char *want) {
        char *line = broker_describe(c, v);

        assert_non_null(line);
        test_note("%s", line);
        assert_false(has_control(line));
        assert_null(strstr(line, SECRET));
        assert_non_null(strstr(line, want));
        free(line);
}

static void expect_deny_with(const struct broker_policy *p, const struct broker_call *c, int error,
                             const char *fragment) {
        struct broker_verdict v;

        assert_int_equal(broker_decide(p, c, &v), 0);
        test_note("refused: %s", v.why);
        assert_int_equal(v.action, BROKER_DENY);
        assert_int_equal(v.error, error);
        assert_non_null(memchr(v.why, '\0', sizeof(v.why)));
        assert_non_null(strstr(v.why, fragment));
        assert_null(strstr(v.why, SECRET));
        assert_null(strstr(v.why, VALUE));
        assert_false(has_control(v.why));
        assert_null(v.data);
        assert_int_equal(v.fuse_fd, -1);
        check_describe(c, &v, ": refused: ");
        broker_verdict_done(&v);
}

static void expect_deny(const struct broker_call *c, int error, const char *fragment) {
        struct broker_policy p = policy();

        expect_deny_with(&p, c, error, fragment);
}

/* An allowed call's verdict, checked for its action; broker_verdict_done() it. */
static struct broker_verdict expect_allow_with(const struct broker_policy *p, const struct broker_call *c,
                                               enum broker_action action) {
        struct broker_verdict v;

        assert_int_equal(broker_decide(p, c, &v), 0);
        if (v.action == BROKER_DENY)
                test_note("unexpectedly refused: %s", v.why);
        assert_int_equal(v.action, action);
        check_describe(c, &v, ": allowed");
        return v;
}

static struct broker_verdict expect_allow(const struct broker_call *c, enum broker_action action) {
        struct broker_policy p = policy();

        return expect_allow_with(&p, c, action);
}

static void allow_tmpfs_on(const char *target) {
        struct broker_call c = mnt("tmpfs", target, "tmpfs", 0, NULL);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_MOUNT);

        broker_verdict_done(&v);
}

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
                cmocka_unit_test(test_fuse_rewriting),
                cmocka_unit_test(test_fuse_refusals),
                cmocka_unit_test(test_umount),
                cmocka_unit_test(test_null_pointers),
                cmocka_unit_test(test_describe),
                cmocka_unit_test(test_describe_masks_sources),
                cmocka_unit_test(test_hostile_strings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
