/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state directory (default /run/kubemount): one directory per container
 * under containers/, each with a state.json written atomically.  Files are
 * hints: the kernel's live state (pids, start times, mounts) decides.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define STATE_DIR_DEFAULT "/run/kubemount"
#define STATE_FILE_MAX (1024 * 1024)

/* Container names: [A-Za-z0-9][A-Za-z0-9_.-]{0,127}, not "." or "..". */
bool state_name_is_valid(const char *name);

/*
 * Opens (creating with mode 0700 if missing) DIR and DIR/containers as
 * O_PATH-free directory fds, refusing symlinks at the last component.
 * Returns the fd of DIR.
 */
int state_dir_open(const char *dir, struct km_error *err);

/*
 * Writes DIRFD/NAME atomically: a temp file in the same directory, write,
 * fsync, rename over NAME, fsync the directory.  On any failure the old
 * file is byte-identical and the temp file is gone (ENOSPC, EROFS, ...).
 */
int state_write_atomic(int dirfd, const char *name, const void *data, size_t size, mode_t mode, struct km_error *err);

/*
 * Reads DIRFD/NAME as a JSON object: never follows a symlink (O_NOFOLLOW),
 * refuses what is not a regular file, larger than STATE_FILE_MAX, empty,
 * truncated or not an object.  -ENOENT when absent; -EBADMSG for junk (a
 * symlink included); other errors (EACCES, EIO) as they are.  Callers rebuild
 * from live state on any error but -ENOENT.
 */
int state_read_json(int dirfd, const char *name, json_t **ret, struct km_error *err);

/* A container's directory containers/NAME (created when create is true; refuses symlinks). */
int state_container_dir(int state_fd, const char *name, bool create, struct km_error *err);
/*
 * Removes containers/NAME and what is in it (files only, one level; no symlink
 * followed; an empty subdirectory goes, a non-empty one is -ENOTEMPTY).  0 if absent.
 */
int state_container_remove(int state_fd, const char *name, struct km_error *err);
/*
 * The names under containers/, sorted (invalid names skipped, entries of any
 * type listed); km_strv_free() the result.  Returns the count.
 */
int state_container_list(int state_fd, char ***ret, struct km_error *err);

/* Field 22 of /proc/PID/stat (start time in clock ticks) through a /proc dir fd; -ESRCH if gone. */
int state_proc_starttime(int proc_fd, pid_t pid, uint64_t *ret);
