/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A child process in cgroups of its own (see helper-cgroup.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "helper-cgroup.h"

struct answer {
        int r, excode;
        struct km_error err;
};

int run_in_own_cgroup(const char *name, int (*fn)(void *userdata, int *excode, struct km_error *err), void *userdata,
                      int *excode, struct km_error *err) {
        _cleanup_close_ int rd = -EBADF;
        struct answer a = { 0 };
        int fds[2], status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "%s: pipe", name);
        rd = fds[0];
        pid = fork();
        if (pid < 0) {
                close(fds[1]);
                return error_set(err, -errno, "%s: fork", name);
        }
        if (pid == 0) {
                char group[32];

                cgroup_join_init_ns();
                snprintf(group, sizeof(group), "mount-%d", (int)getpid());
                /* Without its own cgroups the mount still works; only the survival is lost: say so. */
                _cleanup_close_ int root = cgroup_root_open(&a.err);
                if (root >= 0)
                        cgroup_prune(root, "mount-"); /* those of earlier helpers whose daemons ended */
                if (root < 0 || cgroup_enter_self(root, group, false, &a.err) < 0)
                        log_msg(KM_LOG_WARNING, "%s: %s; its daemon stays in the caller's cgroup", name, a.err.message);
                a.err = (struct km_error){ 0 };
                a.r = fn(userdata, &a.excode, &a.err);
                _exit(write(fds[1], &a, sizeof(a)) != sizeof(a));
        }
        close(fds[1]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (read(rd, &a, sizeof(a)) != sizeof(a))
                return error_set(err, -EIO, "%s: the process in its own cgroup died", name);
        if (excode)
                *excode = a.excode;
        if (err && a.r < 0)
                *err = a.err;
        return a.r;
}
