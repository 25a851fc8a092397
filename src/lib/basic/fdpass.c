/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One message and a few fds over a unix socket (see fdpass.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

int fds_send(int sock, const void *data, size_t size, const int *fds, size_t n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
                struct cmsghdr align;
        } u;
        struct iovec iov = { (void *)data, size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (n_fds > FDPASS_MAX)
                return -EINVAL;
        memset(&u, 0, sizeof(u));
        if (n_fds > 0) {
                struct cmsghdr *c;

                mh.msg_control = u.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

int fd_send(int sock, const void *data, size_t size, int fd) {
        return fds_send(sock, data, size, &fd, fd >= 0 ? 1 : 0);
}

ssize_t fds_recv(int sock, void *data, size_t size, int *fds, size_t *n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
                struct cmsghdr align;
        } u;
        struct iovec iov = { data, size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        size_t want = *n_fds;
        ssize_t n;

        *n_fds = 0;
        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0)
                if (errno != EINTR)
                        return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (*n_fds < want)
                                fds[(*n_fds)++] = fd;
                        else
                                close(fd); /* more than asked for: none of them leaks */
                }
        }
        if (n >= 0 && (mh.msg_flags & MSG_TRUNC))
                n = -EMSGSIZE;
        return n;
}

ssize_t fd_recv(int sock, void *data, size_t size, int *ret_fd) {
        size_t n_fds = 1;
        ssize_t n = fds_recv(sock, data, size, ret_fd, &n_fds);

        if (n_fds == 0)
                *ret_fd = -EBADF;
        return n;
}
