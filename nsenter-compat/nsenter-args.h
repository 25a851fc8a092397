/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util-linux 2.38 nsenter's command line, parsed without side effects.  The
 * namespace files given as --mount=FILE etc. are opened by nsenter while it
 * parses, so an error can come after some opens: the result is an ordered
 * list of events that the caller replays, ending at the first error.
 */
#pragma once

#include <sys/types.h>

#include "util.h"

/* In util-linux's order: user first (or last, in a second pass). */
enum ns_kind { NS_USER, NS_CGROUP, NS_IPC, NS_UTS, NS_NET, NS_PID, NS_MNT, NS_TIME, NS_KINDS };

struct ns_info {
        int clone_flag;
        const char *name; /* "ns/mnt" as in /proc/PID/ns/mnt */
};
extern const struct ns_info ns_table[NS_KINDS];

enum ns_event_kind {
        EV_OPEN_NS,   /* open path (or /proc/PID/NAME) as namespace ns */
        EV_OPEN_ROOT, /* -r DIR */
        EV_OPEN_WD,   /* -w DIR */
};

struct ns_event {
        enum ns_event_kind kind;
        enum ns_kind ns;
        const char *path; /* points into argv */
};

struct nsenter_args {
        pid_t target_pid;    /* 0: none, as in util-linux */
        unsigned namespaces; /* CLONE_NEW* asked for without a file */
        struct ns_event *events;
        size_t n_events;
        bool all, do_root, do_wd, no_fork, preserve_credentials, follow_context;
        bool force_uid, force_gid;
        uid_t uid;
        gid_t gid;
        const char *wdns;
        bool help, version;
        int program; /* index in argv of the program, argc if none */
        /* Set when parsing stopped: err.message is what nsenter prints ("" when getopt printed it). */
        bool failed, try_help;
        struct km_error err;
};

/* print_getopt_errors: let getopt print its messages as nsenter does (argv[0]: ...). */
int nsenter_args_parse(int argc, char *const *argv, bool print_getopt_errors, struct nsenter_args *ret);
void nsenter_args_done(struct nsenter_args *a);
