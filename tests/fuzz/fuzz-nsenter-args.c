/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The nsenter argv parser on arbitrary command lines: the input is split on
 * NUL bytes into argv[1..] (argv[0] is "nsenter"), then nsenter_args_parse
 * without getopt's messages, its invariants, nsenter_args_done.  The same
 * argv, and the program's argv after the options, go to probe_match (never
 * probe_answer: nothing is looked up on this machine).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-check.h"
#include "nsenter-args.h"
#include "kubelet-probes.h"

#define MAX_INPUT (16 * 1024)
#define MAX_ARGS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* p points into one of argv[1..argc-1] (possibly at its terminating NUL). */
static bool points_into(const char *p, char *const *argv, int argc) {
        for (int i = 1; i < argc; i++)
                if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
                        return true;
        return false;
}

static void check_probe(int argc, char *const *argv) {
        enum probe_kind k = probe_match(argc, argv);

        check(k == PROBE_NONE || k == PROBE_FINDMNT_TARGET || k == PROBE_REALPATH || k == PROBE_STAT_TYPE);
        check(k == PROBE_NONE || argc >= 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const unsigned all_ns = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID |
                                CLONE_NEWUSER | CLONE_NEWCGROUP | CLONE_NEWTIME;
        char *buf, *argv[MAX_ARGS + 2], *copy[MAX_ARGS + 2];
        struct nsenter_args a;
        int argc = 1, r;

        if (size > MAX_INPUT)
                return 0;
        buf = fuzz_argv(data, size, argv, MAX_ARGS, &argc);
        argv[0] = (char *)"nsenter";
        memcpy(copy, argv, sizeof(argv));

        r = nsenter_args_parse(argc, argv, false, &a);
        check(r == 0 || r == -EINVAL);
        check((r < 0) == a.failed);
        check(memchr(a.err.message, '\0', sizeof(a.err.message)));
        /* The caller's argv is neither reordered nor written to. */
        check(memcmp(copy, argv, sizeof(argv)) == 0);
        if (a.failed)
                check(a.try_help ? a.err.message[0] == '\0' : a.err.message[0] != '\0');
        else {
                check(a.err.message[0] == '\0' && !a.try_help);
                check(a.program >= 1 && a.program <= argc);
        }
        check(a.program >= 0 && a.program <= argc);
        check(!a.help || !a.version);
        check((a.namespaces & ~all_ns) == 0);
        check(a.n_events == 0 || a.events);
        check(a.n_events < (size_t)argc);
        for (size_t i = 0; i < a.n_events; i++) {
                const struct ns_event *e = &a.events[i];
                check(e->kind == EV_OPEN_NS || e->kind == EV_OPEN_ROOT || e->kind == EV_OPEN_WD);
                check(e->kind != EV_OPEN_NS || ((int)e->ns >= 0 && (int)e->ns < NS_KINDS));
                check(e->path && points_into(e->path, argv, argc));
        }
        check(!a.wdns || points_into(a.wdns, argv, argc));
        if (!a.failed && !a.help && !a.version && a.program < argc)
                check_probe(argc - a.program, argv + a.program);
        nsenter_args_done(&a);
        check(!a.events && a.n_events == 0);

        /* The whole argv as a program's, argv[0] included, and without it. */
        check_probe(argc, argv);
        check_probe(argc - 1, argv + 1);
        check(probe_match(0, argv) == PROBE_NONE);

        free(buf);
        return 0;
}
