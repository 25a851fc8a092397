/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount broker's filter (see seccomp-notify.h). */
#include <linux/seccomp.h>

#include "libseccomp-dl.h"
#include "seccomp-notify.h"
#include "syscalls.h"

DEFINE_CLEANUP(void, seccomp_release)

int seccomp_broker_compile(struct seccomp_program *ret, struct km_error *err) {
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
        if (r < 0)
                return error_set(err, r, "seccomp: the broker's filter");
        return seccomp_export(ctx, &ret->prog, err);
}

int seccomp_filter_load_listener(const struct seccomp_program *p) {
        if (!p || !p->prog.filter || p->prog.len == 0)
                return -EINVAL;
        return sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, (void *)&p->prog);
}
