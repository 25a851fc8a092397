/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's wire format (see agent-protocol.h). */
#include <sys/socket.h>

#include "agent-protocol.h"
#include "tty-relay.h"

int proto_send(int sock, json_t *msg, const int *fds, size_t n_fds) {
        _cleanup_free_ char *text = json_dumps(msg, JSON_COMPACT);
        union {
                char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_FDS)];
                struct cmsghdr align;
        } control = {};
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        if (!text)
                return -ENOMEM;
        iov = (struct iovec){ text, strlen(text) };
        if (iov.iov_len > PROTO_MAX_MESSAGE)
                return -EMSGSIZE;
        if (n_fds > 0) {
                struct cmsghdr *c;

                if (n_fds > PROTO_MAX_FDS)
                        return -EINVAL;
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : 0;
}

int proto_recv(int sock, json_t **ret, int fds[PROTO_MAX_FDS], size_t *n_fds) {
        _cleanup_free_ char *buf = malloc(PROTO_MAX_MESSAGE + 1);
        union {
                char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_FDS)];
                struct cmsghdr align;
        } control;
        struct iovec iov = { buf, PROTO_MAX_MESSAGE + 1 };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof(control.buf)
        };
        json_error_t jerr;
        ssize_t n;

        *n_fds = 0;
        if (!buf)
                return -ENOMEM;
        do
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int *in = (int *)CMSG_DATA(c);
                        for (size_t i = 0; i < k; i++) {
                                if (*n_fds < PROTO_MAX_FDS)
                                        fds[(*n_fds)++] = in[i];
                                else
                                        close(in[i]);
                        }
                }
        if (n == 0)
                return -ECONNRESET;
        if (n > PROTO_MAX_MESSAGE || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
                return -EMSGSIZE;
        *ret = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr);
        if (!*ret || !json_is_object(*ret)) {
                json_decref(*ret);
                *ret = NULL;
                return -EBADMSG;
        }
        return 0;
}

int proto_send_error(int sock, int r, const char *message) {
        json_t *m = json_pack("{s:s, s:i}", "error", message, "code", r);

        if (m) {
                (void)proto_send(sock, m, NULL, 0);
                json_decref(m);
        }
        return r;
}

int proto_reply(int sock, json_t *m) {
        int r = m ? proto_send(sock, m, NULL, 0) : -ENOMEM;

        json_decref(m);
        return r < 0 ? r : 0;
}

int proto_refuse_terminals(const char *op, const int *fds, size_t n_fds, struct km_error *err) {
        static const char *const names[] = { "stdin", "stdout", "stderr" };

        for (size_t i = 0; i < n_fds && i < ELEMENTSOF(names); i++)
                if (fd_is_terminal(fds[i]))
                        return error_set_plain(err, -EPERM,
                                               "%s: the %s given is a terminal; a container never gets one of the "
                                               "host (pass a pipe)",
                                               op, names[i]);
        return 0;
}
