/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Routing legacy kubelet commands through libkubemount (see route.h). */
#include <libmount.h>

#include "mountargs.h"
#include "options.h"
#include "probes.h"
#include "route.h"

static const char *base_name(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

/*
 * "systemd-run --description=... --scope -- PROG ARGS": the index of PROG, or
 * -1 when argv is not that shape (then systemd-run runs as asked).
 */
static int unwrap_systemd_run(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--"))
                        return i + 1 < argc ? i + 1 : -1;
                if (!startswith(argv[i], "--"))
                        return -1;
        }
        return -1;
}

/* Types whose helper leaves a daemon behind: keep systemd's scope for those. */
static bool may_start_daemon(const char *fstype) {
        return !fstype || startswith(fstype, "fuse") || streq(fstype, "glusterfs") || streq(fstype, "ceph-fuse") ||
               streq(fstype, "sshfs");
}

/*
 * A bind, a remount or a propagation change runs no helper, so no daemon, even
 * without -t: the kubelet wraps its two bind calls in systemd-run too.
 */
static bool runs_no_helper(int argc, char **argv) {
        static const char *const no_helper_opts[] = { "bind", "rbind", "remount" };

        for (int i = 1; i < argc; i++) {
                const char *opts = NULL;

                if (streq(argv[i], "--"))
                        break;
                if (streq(argv[i], "-B") || streq(argv[i], "--bind") || streq(argv[i], "-R") ||
                    streq(argv[i], "--rbind") || startswith(argv[i], "--make-"))
                        return true;
                if ((streq(argv[i], "-o") || streq(argv[i], "--options")) && i + 1 < argc)
                        opts = argv[++i];
                else if (startswith(argv[i], "--options="))
                        opts = argv[i] + strlen("--options=");
                else if (startswith(argv[i], "-o"))
                        opts = argv[i] + 2;
                for (size_t k = 0; opts && k < ELEMENTSOF(no_helper_opts); k++)
                        if (options_has(opts, no_helper_opts[k]))
                                return true;
        }
        return false;
}

static const char *kubelet_dir(void) {
        const char *d = getenv("KUBEMOUNT_KUBELET_DIR");
        return d && d[0] == '/' ? d : "/var/lib/kubelet";
}

static int route_mount(int argc, char **argv, bool wrapped) {
        struct mount_args a;
        struct km_error err = { 0 };
        const char *fstype = NULL;
        int r, excode = MNT_EX_SUCCESS;

        if (argc == 1)
                return -1; /* bare "mount" lists the mount table: the real mount prints it */
        r = mount_args_parse(argc, argv, &a);
        if (r == 0 && wrapped) {
                /* Peek at -t without a getter: the spec is opaque. */
                for (int i = 1; i + 1 < argc; i++)
                        if (streq(argv[i], "-t") || streq(argv[i], "--types"))
                                fstype = argv[i + 1];
                if (may_start_daemon(fstype) && !(!fstype && runs_no_helper(argc, argv)) && !(a.help || a.version)) {
                        mount_args_done(&a);
                        return -1;
                }
        }
        if (r < 0) {
                fprintf(stderr, "mount: %s\n", a.error);
                mount_args_done(&a);
                return MNT_EX_USAGE;
        }
        if (a.help || a.version || a.sensitive_fd >= 0 || a.sensitive_file) {
                mount_args_done(&a);
                return -1; /* not the kubelet's forms: the real mount answers */
        }
        if (km_mount_spec_set_confine(a.spec, kubelet_dir()) < 0) {
                mount_args_done(&a);
                return MNT_EX_SYSERR;
        }
        r = km_mount(a.spec, &excode, &err);
        if (r < 0)
                fprintf(stderr, "%s\n", err.message);
        mount_args_done(&a);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}

static int route_umount(int argc, char **argv) {
        struct umount_args a;
        struct km_error err = { 0 };
        int r, excode = MNT_EX_SUCCESS;

        r = umount_args_parse(argc, argv, &a);
        if (r < 0) {
                fprintf(stderr, "umount: %s\n", a.error);
                return MNT_EX_USAGE;
        }
        if (a.help || a.version)
                return -1;
        r = km_umount(a.target, a.flags, a.timeout_ms, &excode, &err);
        if (r < 0)
                fprintf(stderr, "%s\n", err.message);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}

int route_program(int argc, char **argv, bool mount_ns_entered) {
        enum probe_kind probe = probe_match(argc, argv);
        bool wrapped = false;
        const char *name;

        if (probe != PROBE_NONE) {
                _cleanup_free_ char *out = NULL;
                if (probe_answer(probe, argc, argv, &out) < 0)
                        return -1; /* unusual case: the real tool prints it */
                fputs(out, stdout);
                return fflush(stdout) == 0 ? 0 : 1;
        }
        if (!mount_ns_entered)
                return -1;
        if (streq(base_name(argv[0]), "systemd-run")) {
                int i = unwrap_systemd_run(argc, argv);
                if (i < 0)
                        return -1;
                argc -= i;
                argv += i;
                wrapped = true;
        }
        name = base_name(argv[0]);
        if (streq(name, "mount"))
                return route_mount(argc, argv, wrapped);
        if (streq(name, "umount"))
                return route_umount(argc, argv);
        return -1;
}
