/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by the library, the CLI, the shim and the tests. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubemount.h"
#include "macro.h"

/* One cleanup per type: kubemount.h's here, libc's in macro.h, the others next to their type. */
DEFINE_CLEANUP(char *, km_strv_free)
DEFINE_CLEANUP(struct km_vcs, km_vcs_free)
DEFINE_CLEANUP(struct km_agent, km_agent_free)
DEFINE_CLEANUP(struct km_router, km_router_free)
DEFINE_CLEANUP(struct km_image_options, km_image_options_free)

/* The kubelet's --root-dir when nobody names another. */
#define KUBELET_DIR_DEFAULT "/var/lib/kubelet"
#define STATE_DIR_DEFAULT "/run/kubemount" /* the agent's state (vcs/state-dir.h), $KUBEMOUNT_STATE_DIR */

/* True if path equals prefix or lies below it (component-wise). */
bool path_is_below(const char *path, const char *prefix);

/*
 * p made absolute against the working directory, lexically (no symlink
 * resolved); a namespace switch changes the working directory.  free().
 */
char *path_absolute(const char *p);
/* The last component of a path ("/bin/mount" -> "mount"). */
static inline const char *path_basename(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}
/* path and its missing parents, as mkdir -p: the parents 0755, path itself mode (an existing one is kept). */
int mkdir_p(const char *path, mode_t mode);
/* Collapses repeated slashes and drops a trailing one, in place (no resolving). */
char *path_simplify(char *p);

/* Copies s into buf with control characters shown as '?', for messages. */
const char *str_printable(const char *s, char *buf, size_t size);

/* Errors and logging (error.c). */
int error_set(struct km_error *err, int r, const char *fmt, ...) _printf_(3, 4);
/* Like error_set() without the ": strerror" suffix. */
int error_set_plain(struct km_error *err, int r, const char *fmt, ...) _printf_(3, 4);
/*
 * Adds context in front of the message a callee set: "FMT: inner message",
 * code r; returns r.  When the callee set nothing (err->code == 0), the same
 * as error_set().  `return error_wrap(err, r, "image %s", ref);`
 */
int error_wrap(struct km_error *err, int r, const char *fmt, ...) _printf_(3, 4);
void log_msg(int level, const char *fmt, ...) _printf_(2, 3);
bool log_enabled(int level);
/*
 * An event of the audit trail (MESSAGE_IDs: sd-protocol.h): the message, and
 * fields as PAIRS of name and value (a NULL value is left out; NULL-terminated),
 * for the sink's km_log_fields().  Values hold no secret: mask them first.
 */
void log_event(int level, const char *message_id, const char *const *pairs, const char *fmt, ...) _printf_(4, 5);

/* A copy of argv's pointer array (NULL-terminated) for getopt, which permutes it. */
char **argv_copy(int argc, char *const *argv);
/* A copy of value appended to the NULL-terminated *v of *n strings (which it keeps NULL-terminated); 0 or -ENOMEM. */
int strv_append(char ***v, size_t *n, const char *value);

/* Whether the host has /sbin/KIND.FSTYPE or /usr/sbin/KIND.FSTYPE (KIND: "mount", "umount"). */
bool host_helper_exists(const char *kind, const char *fstype);

/*
 * Closes every fd from 3 up except those in keep (sorted in place): a forked
 * helper that outlives its parent must not hold the parent's sockets, locks
 * and directories (another agent could not start, clients would hang).
 */
void close_all_but(int *keep, size_t n);
/* In a child about to exec: the fds stdio[] onto 0-2 (they may overlap), every other fd closed. */
int stdio_install(const int stdio[3]);

/*
 * A child's end as a shell reports it, from a wait status: its exit status,
 * or 128+N when signal N killed it; then *ret_signal is N, else 0 (it may be
 * NULL).
 */
int exit_code_from_status(int status, int *ret_signal);
/* The same from waitid()'s siginfo. */
int exit_code_from_siginfo(const siginfo_t *si);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t monotonic_ms(void);

/* Replaces *field with a copy of value (NULL clears it); -ENOMEM leaves it alone. */
int free_and_strdup(char **field, const char *value);

/* Text helpers (util.c). */
char *strjoin_opts(const char *a, const char *b); /* "a,b" without empty parts */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* All of data to fd, across short writes, signals and a non-blocking fd (waits in poll); 0 or -errno. */
int write_all(int fd, const void *data, size_t size);
/*
 * For a file opened O_NONBLOCK (a FIFO in its place must not hang the open):
 * 0 and O_NONBLOCK cleared if fd is a regular file, -EBADMSG if it is not.
 */
int fd_regular_blocking(int fd);
