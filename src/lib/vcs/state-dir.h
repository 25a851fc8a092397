/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state directory (default /run/kubemount): one directory per container
 * under containers/, each with a state.json written atomically.  Files are
 * hints: the kernel's live state (pids, start times, mounts) decides.
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fileio.h"

#define CONTAINERS_DIR "containers" /* below the state dir: a directory per container */

/* Container names: [A-Za-z0-9][A-Za-z0-9_.-]{0,127}, not "." or "..". */
bool state_name_is_valid(const char *name);

/*
 * Opens (creating with mode 0700 if missing) DIR and DIR/containers as
 * O_PATH-free directory fds, refusing symlinks at the last component.
 * Returns the fd of DIR.
 */
int state_dir_open(const char *dir, struct km_error *err);

/* A container's directory containers/NAME (created when create is true; refuses symlinks). */
int state_container_dir(int state_fd, const char *name, bool create, struct km_error *err);
/* containers/FROM renamed to containers/TO, which must not exist: 0 or -errno. */
int state_container_rename(int state_fd, const char *from, const char *to);
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

/* dir, else $KUBEMOUNT_STATE_DIR, else the default, made absolute (malloc'ed; NULL: out of memory). */
char *state_dir_resolve(const char *dir);
