/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One message and at most one fd over a unix socket (SCM_RIGHTS), between a launcher and its children. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Sends size bytes and fd (< 0: none); 0 or -errno.  Async-signal-safe. */
int fd_send(int sock, const void *data, size_t size, int fd);
/* Receives up to size bytes and an fd (*ret_fd, -EBADF when none came, O_CLOEXEC); the length or -errno. */
ssize_t fd_recv(int sock, void *data, size_t size, int *ret_fd);
