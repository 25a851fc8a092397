/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The body of the opaque struct km_host, and running a step in its mount namespace (hostns.c). */
#pragma once

#include "util.h"

struct km_host {
        char *mount_ns; /* the namespace file, opened by each call */
};

/*
 * fn(path, userdata, err) in h's mount namespace: right here for a NULL h,
 * else through km_host_run() with a relative path made absolute first (the
 * switch changes the working directory).
 */
int host_run_path(const struct km_host *h, const char *path,
                  int (*fn)(const char *path, void *userdata, struct km_error *err), void *userdata,
                  struct km_error *err);
