/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether FUSE_DEV_IOC_CLONE crosses user namespaces, asked of the kernel (see fuse-probe.h). */
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "util.h"
#include "fuse-probe.h"
#include "syscalls.h"

enum { PROBE_CLONES, PROBE_REFUSED, PROBE_UNKNOWN };

/* In a child of its own (it leaves the user namespace): only system calls, it may be a threaded process's fork. */
static int probe_child(int ours_fd, const char *ours_s) {
        uint32_t ours = (uint32_t)ours_fd;
        int fs, theirs;

        /* A connection on our file: a superblock that is never mounted, gone with us. */
        fs = sys_fsopen("fuse", FSOPEN_CLOEXEC);
        if (fs < 0 || sys_fsconfig(fs, FSCONFIG_SET_STRING, "fd", ours_s) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "rootmode", "40000") < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "user_id", "0") < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "group_id", "0") < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) < 0)
                return PROBE_UNKNOWN;
        if (unshare(CLONE_NEWUSER) < 0 || (theirs = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0)
                return PROBE_UNKNOWN;
        if (ioctl(theirs, FUSE_DEV_IOC_CLONE, &ours) == 0)
                return PROBE_CLONES;
        return errno == EINVAL ? PROBE_REFUSED : PROBE_UNKNOWN;
}

static int probe(void) {
        _cleanup_close_ int ours = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        char ours_s[16];
        int status;
        pid_t pid;

        if (ours < 0)
                return PROBE_UNKNOWN;
        snprintf(ours_s, sizeof(ours_s), "%d", ours);
        pid = fork();
        if (pid == 0)
                _exit(probe_child(ours, ours_s));
        if (pid < 0)
                return PROBE_UNKNOWN;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return PROBE_UNKNOWN;
        return WIFEXITED(status) ? WEXITSTATUS(status) : PROBE_UNKNOWN;
}

bool fuse_clone_crosses_userns(void) {
        static int answer = -1;

        if (!feature_available(FEATURE_FUSE_CLONE_USERNS))
                return false;
        if (answer < 0)
                answer = probe();
        if (answer == PROBE_REFUSED) {
                log_msg(KM_LOG_DEBUG,
                        "this kernel refuses FUSE_DEV_IOC_CLONE across user namespaces: the mount broker "
                        "hands containers the host's /dev/fuse instead");
                feature_refused(FEATURE_FUSE_CLONE_USERNS);
                return false;
        }
        return true; /* it does, or the probe could not tell (no /dev/fuse here): as on current kernels */
}
