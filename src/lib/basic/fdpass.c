/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One message and at most one fd over a unix socket (see fdpass.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

int fd_send(int sock, const void *data, size_t size, int fd) {
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { (void *)data, size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        memset(&u, 0, sizeof(u));
        if (fd >= 0) {
                struct cmsghdr *c;

                mh.msg_control = u.buf;
                mh.msg_controllen = sizeof(u.buf);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

ssize_t fd_recv(int sock, void *data, size_t size, int *ret_fd) {
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { data, size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        ssize_t n;

        *ret_fd = -EBADF;
        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0)
                if (errno != EINTR)
                        return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
        return n;
}
