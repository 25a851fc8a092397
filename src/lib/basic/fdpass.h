/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One message and a few fds over a unix socket (SCM_RIGHTS), between a launcher and its children. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define FDPASS_MAX 4

/* Sends size bytes and n_fds fds (at most FDPASS_MAX); 0 or -errno.  Async-signal-safe. */
int fds_send(int sock, const void *data, size_t size, const int *fds, size_t n_fds);
/*
 * Receives up to size bytes and up to *n_fds fds (O_CLOEXEC; *n_fds set to
 * how many came, any beyond closed); the length, -EMSGSIZE when the message
 * was longer than size (its fds kept: the caller closes them), or -errno.
 */
ssize_t fds_recv(int sock, void *data, size_t size, int *fds, size_t *n_fds);
/* One fd (< 0: none) */
int fd_send(int sock, const void *data, size_t size, int fd);
/* Up to size bytes and an fd (*ret_fd, -EBADF when none came). */
ssize_t fd_recv(int sock, void *data, size_t size, int *ret_fd);
