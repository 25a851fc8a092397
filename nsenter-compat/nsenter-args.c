/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util-linux 2.38 nsenter's option grammar, as a pure parser (see the header). */
#include <getopt.h>
#include <limits.h>
#include <sched.h>

#include "nsenter-args.h"

const struct ns_info ns_table[NS_KINDS] = {
        [NS_USER] = { CLONE_NEWUSER, "ns/user" }, [NS_CGROUP] = { CLONE_NEWCGROUP, "ns/cgroup" },
        [NS_IPC] = { CLONE_NEWIPC, "ns/ipc" },    [NS_UTS] = { CLONE_NEWUTS, "ns/uts" },
        [NS_NET] = { CLONE_NEWNET, "ns/net" },    [NS_PID] = { CLONE_NEWPID, "ns/pid" },
        [NS_MNT] = { CLONE_NEWNS, "ns/mnt" },     [NS_TIME] = { CLONE_NEWTIME, "ns/time" },
};

/* strtoul_or_err(): base 10, strtoul's leniency (spaces, sign), errno kept. */
static int parse_number(struct nsenter_args *a, const char *s, const char *what, unsigned long *ret) {
        char *end = NULL;

        errno = 0;
        if (s && *s) {
                *ret = strtoul(s, &end, 10);
                if (!errno && end != s && !*end)
                        return 0;
        }
        if (errno == ERANGE)
                return error_set(&a->err, -ERANGE, "%s: '%s'", what, s);
        return error_set_plain(&a->err, -EINVAL, "%s: '%s'", what, s);
}

static int add_event(struct nsenter_args *a, enum ns_event_kind kind, enum ns_kind ns, const char *path) {
        struct ns_event *n = realloc(a->events, (a->n_events + 1) * sizeof(*n));

        if (!n)
                return error_set_plain(&a->err, -ENOMEM, "%s", strerror(ENOMEM));
        a->events = n;
        a->events[a->n_events++] = (struct ns_event){ kind, ns, path };
        return 0;
}

static int parse(int argc, char *const *argv, bool print_getopt_errors, struct nsenter_args *a) {
        enum { OPT_PRESERVE_CRED = CHAR_MAX + 1 };
        static const struct option longopts[] = {
                { "all", no_argument, NULL, 'a' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "target", required_argument, NULL, 't' },
                { "mount", optional_argument, NULL, 'm' },
                { "uts", optional_argument, NULL, 'u' },
                { "ipc", optional_argument, NULL, 'i' },
                { "net", optional_argument, NULL, 'n' },
                { "pid", optional_argument, NULL, 'p' },
                { "user", optional_argument, NULL, 'U' },
                { "cgroup", optional_argument, NULL, 'C' },
                { "time", optional_argument, NULL, 'T' },
                { "setuid", required_argument, NULL, 'S' },
                { "setgid", required_argument, NULL, 'G' },
                { "root", optional_argument, NULL, 'r' },
                { "wd", optional_argument, NULL, 'w' },
                { "wdns", optional_argument, NULL, 'W' },
                { "no-fork", no_argument, NULL, 'F' },
                { "preserve-credentials", no_argument, NULL, OPT_PRESERVE_CRED },
                { "follow-context", no_argument, NULL, 'Z' },
                {},
        };
        static const struct {
                char opt;
                enum ns_kind ns;
        } ns_opts[] = {
                { 'm', NS_MNT }, { 'u', NS_UTS },  { 'i', NS_IPC },    { 'n', NS_NET },
                { 'p', NS_PID }, { 'U', NS_USER }, { 'C', NS_CGROUP }, { 'T', NS_TIME },
        };
        _cleanup_free_ char **args = argv_copy(argc, argv);
        int c, seen_wd = 0;
        unsigned long n;

        if (!args)
                return error_set_plain(&a->err, -ENOMEM, "%s", strerror(ENOMEM));
        optind = 0;
        opterr = print_getopt_errors;
        while ((c = getopt_long(argc, args, "+ahVt:m::u::i::n::p::C::U::T::S:G:r::w::W:FZ", longopts, NULL)) != -1) {
                /* -w and -W exclude each other, whichever comes first. */
                if (c == 'w' || c == 'W') {
                        if (seen_wd && seen_wd != c)
                                return error_set_plain(&a->err, -EINVAL, "mutually exclusive arguments: --wdns --wd");
                        seen_wd = c;
                }
                size_t k;
                for (k = 0; k < ELEMENTSOF(ns_opts) && ns_opts[k].opt != c; k++)
                        ;
                if (k < ELEMENTSOF(ns_opts)) {
                        if (optarg) {
                                if (add_event(a, EV_OPEN_NS, ns_opts[k].ns, optarg) < 0)
                                        return -ENOMEM;
                        } else
                                a->namespaces |= ns_table[ns_opts[k].ns].clone_flag;
                        continue;
                }
                switch (c) {
                case 'a':
                        a->all = true;
                        break;
                case 't':
                        if (parse_number(a, optarg, "failed to parse pid", &n) < 0)
                                return -EINVAL;
                        a->target_pid = (pid_t)n;
                        break;
                case 'S':
                        if (parse_number(a, optarg, "failed to parse uid", &n) < 0)
                                return -EINVAL;
                        a->uid = (uid_t)n;
                        a->force_uid = true;
                        break;
                case 'G':
                        if (parse_number(a, optarg, "failed to parse gid", &n) < 0)
                                return -EINVAL;
                        a->gid = (gid_t)n;
                        a->force_gid = true;
                        break;
                case 'F':
                        a->no_fork = true;
                        break;
                case 'r':
                        if (optarg) {
                                if (add_event(a, EV_OPEN_ROOT, 0, optarg) < 0)
                                        return -ENOMEM;
                        } else
                                a->do_root = true;
                        break;
                case 'w':
                        if (optarg) {
                                if (add_event(a, EV_OPEN_WD, 0, optarg) < 0)
                                        return -ENOMEM;
                        } else
                                a->do_wd = true;
                        break;
                case 'W':
                        a->wdns = optarg;
                        break;
                case OPT_PRESERVE_CRED:
                        a->preserve_credentials = true;
                        break;
                case 'Z':
                        a->follow_context = true;
                        break;
                case 'h':
                        a->help = true;
                        a->program = optind;
                        return 0;
                case 'V':
                        a->version = true;
                        a->program = optind;
                        return 0;
                default:
                        /* getopt printed (or would have printed) why: no message of ours. */
                        a->try_help = true;
                        return error_set_plain(&a->err, -EINVAL, "%s", "");
                }
        }
        a->program = optind;
        return 0;
}

int nsenter_args_parse(int argc, char *const *argv, bool print_getopt_errors, struct nsenter_args *a) {
        int r;

        memset(a, 0, sizeof(*a));
        r = parse(argc, argv, print_getopt_errors, a);
        a->failed = r < 0;
        return r;
}

void nsenter_args_done(struct nsenter_args *a) {
        free(a->events);
        a->events = NULL;
        a->n_events = 0;
}
