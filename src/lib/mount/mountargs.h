/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mount(8) and umount(8) argument grammar as kubelets send it (pure parsers). */
#pragma once

#include "util.h"

struct mount_args {
        struct km_mount_spec *spec;
        bool help, version;
        int sensitive_fd;     /* --sensitive-options-fd=N, -1 if none */
        char *sensitive_file; /* --sensitive-options-file=PATH */
        char error[256];      /* usage error, "" if none */
};

struct umount_args {
        const char *target;
        unsigned flags; /* KM_UMOUNT_* */
        int timeout_ms;
        bool help, version, verbose;
        char error[256];
};

/* argv[0] is the command name ("mount"). Returns 0 or -EINVAL with ->error set. */
int mount_args_parse(int argc, char *const *argv, struct mount_args *ret);
void mount_args_done(struct mount_args *a);
int umount_args_parse(int argc, char *const *argv, struct umount_args *ret);
/* "5", "2.5", "500ms" -> milliseconds; -EINVAL on anything else. */
int parse_timeout_ms(const char *s, int *ret);
