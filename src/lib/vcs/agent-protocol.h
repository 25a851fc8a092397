/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's wire format: one JSON object per SOCK_SEQPACKET message, with
 * up to PROTO_MAX_FDS file descriptors (SCM_RIGHTS) — a caller hands over
 * its stdin, stdout and stderr, so output streams straight to it.
 */
#pragma once

#include "jansson-dl.h"
#include <sys/types.h>

#include "util.h"

#define PROTO_MAX_MESSAGE (256 * 1024)
#define PROTO_MAX_FDS 3
#define AGENT_SOCKET "agent.sock"

int proto_send(int sock, json_t *msg, const int *fds, size_t n_fds);
/* 0 and *ret, -ECONNRESET at end of stream, -EBADMSG for junk; received fds are O_CLOEXEC. */
int proto_recv(int sock, json_t **ret, int fds[PROTO_MAX_FDS], size_t *n_fds);
/* Sends {"error": message, "code": r}; returns r. */
int proto_send_error(int sock, int r, const char *message);
