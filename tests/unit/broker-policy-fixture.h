/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy, calls and expectations of test-broker-policy.c and test-broker-describe.c. */
#pragma once

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

static inline struct broker_policy policy(void) {
        return (struct broker_policy){ .kubelet_dir = KUBELET,
                                       .targets = targets,
                                       .types = types,
                                       .host_uid = HOST_ID,
                                       .host_gid = HOST_ID,
                                       .id_count = 65536,
                                       .mounted = mounted };
}

static inline struct broker_call mnt(const char *source, const char *target, const char *fstype, unsigned long flags,
                                     const char *data) {
        return (struct broker_call){ .op = BROKER_OP_MOUNT,
                                     .source = source,
                                     .target = target,
                                     .fstype = fstype,
                                     .flags = flags,
                                     .data = data };
}

static inline struct broker_call umnt(const char *target, unsigned long flags) {
        return (struct broker_call){ .op = BROKER_OP_UMOUNT, .target = target, .flags = flags };
}

static inline bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* broker_describe's line: one line, no secret, with want in it. */
static inline void check_describe(const struct broker_call *c, const struct broker_verdict *v, const char *want) {
        char *line = broker_describe(c, v);

        assert_non_null(line);
        test_note("%s", line);
        assert_false(has_control(line));
        assert_null(strstr(line, SECRET));
        assert_non_null(strstr(line, want));
        free(line);
}

static inline void expect_deny_with(const struct broker_policy *p, const struct broker_call *c, int error,
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

static inline void expect_deny(const struct broker_call *c, int error, const char *fragment) {
        struct broker_policy p = policy();

        expect_deny_with(&p, c, error, fragment);
}

/* An allowed call's verdict, checked for its action; broker_verdict_done() it. */
static inline struct broker_verdict expect_allow_with(const struct broker_policy *p, const struct broker_call *c,
                                                      enum broker_action action) {
        struct broker_verdict v;

        assert_int_equal(broker_decide(p, c, &v), 0);
        if (v.action == BROKER_DENY)
                test_note("unexpectedly refused: %s", v.why);
        assert_int_equal(v.action, action);
        check_describe(c, &v, ": allowed");
        return v;
}

static inline struct broker_verdict expect_allow(const struct broker_call *c, enum broker_action action) {
        struct broker_policy p = policy();

        return expect_allow_with(&p, c, action);
}

static inline void allow_tmpfs_on(const char *target) {
        struct broker_call c = mnt("tmpfs", target, "tmpfs", 0, NULL);
        struct broker_verdict v = expect_allow(&c, BROKER_DO_MOUNT);

        broker_verdict_done(&v);
}
