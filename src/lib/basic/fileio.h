/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Files written atomically and read back with suspicion (see fileio.c). */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define JSON_FILE_MAX (1024 * 1024)

/* DIRFD/NAME for messages (the directory's path from /proc, else NAME); keeps errno. */
const char *path_display_at(int dirfd, const char *name, char *buf, size_t size);

/* flock(2) of fd with op (LOCK_SH, LOCK_EX, | LOCK_NB), again after EINTR: 0 or -errno. */
int flock_wait(int fd, int op);

/*
 * Writes DIRFD/NAME atomically: a temp file in the same directory, write,
 * fsync, rename over NAME, fsync the directory.  On any failure the old
 * file is byte-identical and the temp file is gone (ENOSPC, EROFS, ...).
 */
int write_file_atomic(int dirfd, const char *name, const void *data, size_t size, mode_t mode, struct km_error *err);

/*
 * The same without the two fsyncs: for state of what cannot outlive a boot
 * (a container, the agent's cgroup).  A crash of the writer loses nothing
 * (the page cache is the kernel's); a crash of the machine ends what the
 * file describes, and a torn file then reads as junk (read_json_file).
 * About 0.25 ms less per write on ext4.
 */
int write_file_replace(int dirfd, const char *name, const void *data, size_t size, mode_t mode, struct km_error *err);

/*
 * Reads DIRFD/NAME as a JSON object: never follows a symlink (O_NOFOLLOW),
 * refuses what is not a regular file, larger than JSON_FILE_MAX, empty,
 * truncated or not an object.  -ENOENT when absent; -EBADMSG for junk (a
 * symlink included); other errors (EACCES, EIO) as they are.  Callers rebuild
 * from live state on any error but -ENOENT.
 */
int read_json_file(int dirfd, const char *name, json_t **ret, struct km_error *err);
