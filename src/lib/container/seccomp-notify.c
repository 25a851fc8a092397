/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount broker's filter (see seccomp-notify.h). */
#include <fcntl.h>
#include <linux/seccomp.h>

#include "libseccomp-dl.h"
#include "seccomp-notify.h"
#include "syscalls.h"

DEFINE_CLEANUP(void, seccomp_release)

/* open(2) and openat(2) with flags O_RDWR or O_RDWR|O_CLOEXEC: how FUSE clients open /dev/fuse. */
static int trap_fuse_opens(scmp_filter_ctx ctx) {
        static const char *const calls[] = { "openat", "open" };
        static const uint64_t flags[] = { O_RDWR, O_RDWR | O_CLOEXEC };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(calls); i++) {
                int nr = seccomp_syscall_resolve_name(calls[i]);

                if (nr == __NR_SCMP_ERROR || nr < 0)
                        continue;
                for (size_t j = 0; r >= 0 && j < ELEMENTSOF(flags); j++) {
                        /* openat's flags are its third argument, open's its second; an int: the low 32 bits. */
                        struct scmp_arg_cmp cmp = { streq(calls[i], "openat") ? 2 : 1, SCMP_CMP_MASKED_EQ, 0xffffffffu,
                                                    flags[j] };
                        r = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &cmp);
                }
        }
        return r;
}

int seccomp_broker_compile(struct seccomp_program *ret, bool trap_fuse_open, struct km_error *err) {
        static const char *const trapped[] = { "mount", "umount2", "umount" };
        static const char *const refused[] = { "fsopen",     "fsconfig",  "fsmount",      "fspick",
                                               "move_mount", "open_tree", "mount_setattr" };
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        int r = seccomp_context_new(SCMP_ACT_ALLOW, &ctx, err);

        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(trapped) + ELEMENTSOF(refused); i++) {
                bool trap = i < ELEMENTSOF(trapped);
                int nr = seccomp_syscall_resolve_name(trap ? trapped[i] : refused[i - ELEMENTSOF(trapped)]);

                if (nr == __NR_SCMP_ERROR || nr < 0) /* not a syscall of this architecture (umount on x86-64) */
                        continue;
                r = seccomp_rule_add_array(ctx, trap ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(ENOSYS), nr, 0, NULL);
        }
        if (r >= 0 && trap_fuse_open)
                r = trap_fuse_opens(ctx);
        if (r < 0)
                return error_set(err, r, "seccomp: the broker's filter");
        return seccomp_export(ctx, &ret->prog, err);
}

int seccomp_filter_load_listener(const struct seccomp_program *p) {
        if (!p || !p->prog.filter || p->prog.len == 0)
                return -EINVAL;
        return sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, (void *)&p->prog);
}
