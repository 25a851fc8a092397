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
/* Sends m and drops it (NULL: -ENOMEM); 0 or -errno. */
int proto_reply(int sock, json_t *m);
/* A request's string member, or NULL. */
static inline const char *proto_string(json_t *req, const char *key) {
        return json_string_value(json_object_get(req, key));
}
/* The kubelet dir a request names, else the default. */
static inline const char *proto_kubelet_dir(json_t *req) {
        return proto_string(req, "kubelet_dir") ?: KUBELET_DIR_DEFAULT;
}
/*
 * A terminal of the host is never a container's: with CAP_SYS_ADMIN it could
 * type into it (TIOCSTI) what the caller's shell runs next (THREATS 28).
 * kubemount's own client relays a terminal through a pipe; a raw one is
 * refused (-EPERM, err saying which of stdin, stdout, stderr of op).
 */
int proto_refuse_terminals(const char *op, const int *fds, size_t n_fds, struct km_error *err);
