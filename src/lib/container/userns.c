/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The user namespace of unprivileged containers (see userns.h). */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "userns.h"

static int write_map(pid_t pid, const char *file, unsigned long host, uint32_t count) {
        char path[64], map[64];
        _cleanup_close_ int fd = -EBADF;
        int n;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        n = snprintf(map, sizeof(map), "0 %lu %u\n", host, count);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write(fd, map, n) == n ? 0 : -errno;
}

int userns_create(uid_t host_uid, gid_t host_gid, uint32_t count, struct km_error *err) {
        char path[64], c = 0;
        int fds[2], fd = -EBADF, r, status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "user namespace: pipe");
        pid = fork();
        if (pid == 0) {
                /* Only to hold the namespace until the parent has mapped and opened it. */
                close(fds[0]);
                c = unshare(CLONE_NEWUSER) < 0 ? 'e' : 'u';
                (void)!write(fds[1], &c, 1);
                pause();
                _exit(0);
        }
        close(fds[1]);
        if (pid < 0) {
                close(fds[0]);
                return error_set(err, -errno, "user namespace: fork");
        }
        r = read(fds[0], &c, 1) == 1 && c == 'u' ? 0 : -EPERM;
        close(fds[0]);
        if (r < 0)
                error_set_plain(err, r, "user namespace: unshare(CLONE_NEWUSER) failed (user.max_user_namespaces?)");
        else if ((r = write_map(pid, "uid_map", host_uid, count)) < 0 ||
                 (r = write_map(pid, "gid_map", host_gid, count)) < 0)
                error_set(err, r, "user namespace: write the id map (%lu:%u)", (unsigned long)host_uid, count);
        else {
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                        r = error_set(err, -errno, "user namespace: open %s", path);
        }
        (void)kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return r < 0 ? r : fd;
}
