/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers for the mount(8)/umount(8) command lines that kubelets send
 * (mount-utils, --experimental-mounter-path, nsenter).  Pure: no I/O, so the
 * CLI, the nsenter shim, the unit tests and the fuzzer share them.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>

#include "mount-flags.h"
#include "mountargs.h"

_printf_(3, 4) static int usage_error(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* "rshared" -> KM_MAKE_SHARED, recursive. */
static bool parse_make(const char *name, enum km_propagation_kind *kind, bool *recursive) {
        const struct mount_flag *f = mount_flag_lookup(name);

        if (!f || !f->propagation)
                return false;
        *kind = f->kind;
        *recursive = f->ms & MS_REC;
        return true;
}

/*
 * The option getopt refused.  An unknown short option inside a cluster
 * ("-Zr") leaves optind on the word before it, so name it from optopt;
 * long options (optopt 0, or the value of one given an argument it does not
 * take) are named by the word itself.
 */
static int unknown_option(char *buf, size_t size, const char *shortopts, char *const *args) {
        if (optopt > ' ' && optopt < 0x7f && (optopt == ':' || !strchr(shortopts, optopt)))
                return usage_error(buf, size, "unrecognized option '-%c'", optopt);
        return usage_error(buf, size, "unrecognized option '%s'", args[optind - 1]);
}

enum {
        OPT_SENSITIVE_FD = 0x100,
        OPT_SENSITIVE_FILE,
        OPT_TIMEOUT,
        /*
         * One value per --make-* option: with a shared value getopt_long takes
         * an abbreviation such as --make-s for the first match (make-shared)
         * instead of calling it ambiguous (it could be make-slave).
         */
        OPT_MAKE_FIRST = 0x200,
        OPT_MAKE_LAST = OPT_MAKE_FIRST + 7,
};

int mount_args_parse(int argc, char *const *argv, struct mount_args *a) {
        static const struct option opts[] = {
                { "types", required_argument, NULL, 't' },
                { "options", required_argument, NULL, 'o' },
                { "bind", no_argument, NULL, 'B' },
                { "rbind", no_argument, NULL, 'R' },
                { "read-only", no_argument, NULL, 'r' },
                { "rw", no_argument, NULL, 'w' },
                { "read-write", no_argument, NULL, 'w' },
                { "no-mtab", no_argument, NULL, 'n' },
                { "no-canonicalize", no_argument, NULL, 'c' },
                { "fake", no_argument, NULL, 'f' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "make-shared", no_argument, NULL, OPT_MAKE_FIRST + 0 },
                { "make-slave", no_argument, NULL, OPT_MAKE_FIRST + 1 },
                { "make-private", no_argument, NULL, OPT_MAKE_FIRST + 2 },
                { "make-unbindable", no_argument, NULL, OPT_MAKE_FIRST + 3 },
                { "make-rshared", no_argument, NULL, OPT_MAKE_FIRST + 4 },
                { "make-rslave", no_argument, NULL, OPT_MAKE_FIRST + 5 },
                { "make-rprivate", no_argument, NULL, OPT_MAKE_FIRST + 6 },
                { "make-runbindable", no_argument, NULL, OPT_MAKE_FIRST + 7 },
                { "sensitive-options-fd", required_argument, NULL, OPT_SENSITIVE_FD },
                { "sensitive-options-file", required_argument, NULL, OPT_SENSITIVE_FILE },
                {},
        };
        _cleanup_free_ char **args = NULL;
        unsigned flags = 0;
        int c, longindex;

        memset(a, 0, sizeof(*a));
        a->sensitive_fd = -1;
        a->spec = km_mount_spec_new();
        args = argv_copy(argc, argv);
        if (!a->spec || !args)
                return usage_error(a->error, sizeof(a->error), "out of memory");

        optind = 0;
        opterr = 0;
        static const char shortopts[] = ":t:o:BRrwncfvhVsi";
        while ((c = getopt_long(argc, args, shortopts, opts, &longindex)) >= 0) {
                switch (c) {
                case 't':
                        if (km_mount_spec_set_fstype(a->spec, optarg) < 0)
                                return usage_error(a->error, sizeof(a->error), "out of memory");
                        break;
                case 'o':
                        if (km_mount_spec_add_options(a->spec, optarg) < 0)
                                return usage_error(a->error, sizeof(a->error), "out of memory");
                        break;
                case 'B':
                        flags |= KM_MOUNT_BIND;
                        break;
                case 'R':
                        flags |= KM_MOUNT_RBIND;
                        break;
                case 'r':
                        flags = (flags & ~KM_MOUNT_READ_WRITE) | KM_MOUNT_READ_ONLY;
                        break;
                case 'w':
                        flags = (flags & ~KM_MOUNT_READ_ONLY) | KM_MOUNT_READ_WRITE;
                        break;
                case 'c':
                        flags |= KM_MOUNT_NO_CANONICALIZE;
                        break;
                case 'f':
                        flags |= KM_MOUNT_FAKE;
                        break;
                case 'v':
                        flags |= KM_MOUNT_VERBOSE;
                        break;
                case 'n': /* no mtab is always the case */
                case 's': /* sloppy: accepted, has no effect */
                case 'i':
                        break;
                case 'h':
                        a->help = true;
                        return 0;
                case 'V':
                        a->version = true;
                        return 0;
                case OPT_MAKE_FIRST ... OPT_MAKE_LAST: {
                        enum km_propagation_kind kind;
                        bool recursive;
                        if (!parse_make(opts[longindex].name + strlen("make-"), &kind, &recursive))
                                return usage_error(a->error, sizeof(a->error), "bad option --%s", opts[longindex].name);
                        km_mount_spec_set_propagation(a->spec, kind, recursive);
                        break;
                }
                case OPT_SENSITIVE_FD: {
                        char *end;
                        long fd = strtol(optarg, &end, 10);
                        if (*optarg == '\0' || *end || fd < 0 || fd > INT_MAX)
                                return usage_error(a->error, sizeof(a->error), "bad file descriptor '%s'", optarg);
                        a->sensitive_fd = (int)fd;
                        break;
                }
                case OPT_SENSITIVE_FILE:
                        free(a->sensitive_file);
                        if (!(a->sensitive_file = strdup(optarg)))
                                return usage_error(a->error, sizeof(a->error), "out of memory");
                        break;
                case ':':
                        return usage_error(a->error, sizeof(a->error), "option '%s' requires an argument",
                                           args[optind - 1]);
                default:
                        return unknown_option(a->error, sizeof(a->error), shortopts, args);
                }
        }
        km_mount_spec_set_flags(a->spec, flags);

        switch (argc - optind) {
        case 1:
                /* Only a target: propagation change or remount; no fstab here. */
                if (km_mount_spec_set_target(a->spec, args[optind]) < 0)
                        return usage_error(a->error, sizeof(a->error), "out of memory");
                break;
        case 2:
                if (km_mount_spec_set_source(a->spec, args[optind]) < 0 ||
                    km_mount_spec_set_target(a->spec, args[optind + 1]) < 0)
                        return usage_error(a->error, sizeof(a->error), "out of memory");
                break;
        case 0:
                return usage_error(a->error, sizeof(a->error), "no mount point given");
        default:
                return usage_error(a->error, sizeof(a->error), "too many arguments ('%s' ...)", args[optind + 2]);
        }
        return 0;
}

void mount_args_done(struct mount_args *a) {
        km_mount_spec_free(a->spec);
        free(a->sensitive_file);
        a->spec = NULL;
        a->sensitive_file = NULL;
}

int parse_timeout_ms(const char *s, int *ret) {
        char *end;
        double v;

        if (!s || !*s)
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || !isfinite(v) || v < 0)
                return -EINVAL;
        if (streq(end, "ms"))
                ;
        else if (*end == '\0' || streq(end, "s"))
                v *= 1000;
        else
                return -EINVAL;
        if (v > 24.0 * 3600 * 1000)
                return -EINVAL;
        *ret = (int)v;
        return 0;
}

int umount_args_parse(int argc, char *const *argv, struct umount_args *a) {
        static const struct option opts[] = {
                { "force", no_argument, NULL, 'f' },
                { "lazy", no_argument, NULL, 'l' },
                { "recursive", no_argument, NULL, 'R' },
                { "no-mtab", no_argument, NULL, 'n' },
                { "no-canonicalize", no_argument, NULL, 'c' },
                { "verbose", no_argument, NULL, 'v' },
                { "timeout", required_argument, NULL, OPT_TIMEOUT },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        _cleanup_free_ char **args = argv_copy(argc, argv);
        int c;

        memset(a, 0, sizeof(*a));
        if (!args)
                return usage_error(a->error, sizeof(a->error), "out of memory");
        optind = 0;
        opterr = 0;
        static const char shortopts[] = ":flRncvhVi";
        while ((c = getopt_long(argc, args, shortopts, opts, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        a->flags |= KM_UMOUNT_FORCE;
                        break;
                case 'l':
                        a->flags |= KM_UMOUNT_LAZY;
                        break;
                case 'R':
                        a->flags |= KM_UMOUNT_RECURSIVE;
                        break;
                case 'v':
                        a->verbose = true;
                        break;
                case 'n':
                case 'c':
                case 'i':
                        break;
                case OPT_TIMEOUT:
                        if (parse_timeout_ms(optarg, &a->timeout_ms) < 0)
                                return usage_error(a->error, sizeof(a->error), "bad timeout '%s'", optarg);
                        break;
                case 'h':
                        a->help = true;
                        return 0;
                case 'V':
                        a->version = true;
                        return 0;
                case ':':
                        return usage_error(a->error, sizeof(a->error), "option '%s' requires an argument",
                                           args[optind - 1]);
                default:
                        return unknown_option(a->error, sizeof(a->error), shortopts, args);
                }
        }
        if (argc - optind != 1)
                return usage_error(a->error, sizeof(a->error), "%s",
                                   argc - optind == 0 ? "no mount point given" : "too many arguments");
        a->target = args[optind]; /* a string of argv: outlives the copy */
        return 0;
}
