/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Routing legacy kubelet commands through libkubemount (see route.h). */
#include <libmount.h>

#include <limits.h>

#include "mount-spec.h"
#include "mountargs.h"
#include "options.h"
#include "kubelet-probes.h"
#include "route.h"
#include "secrets.h"

/*
 * "systemd-run --description=... --scope -- PROG ARGS", as the kubelet wraps
 * its mounts: the index of PROG, or -1 for any other shape (other options
 * such as --uid= or --property= change what runs: systemd-run runs as asked).
 */
static int unwrap_systemd_run(int argc, char **argv) {
        bool scope = false;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--"))
                        return scope && i + 1 < argc ? i + 1 : -1;
                if (streq(argv[i], "--scope"))
                        scope = true;
                else if (!startswith(argv[i], "--description=") && !streq(argv[i], "--quiet") &&
                         !streq(argv[i], "-q") && !streq(argv[i], "--collect"))
                        return -1;
        }
        return -1;
}

/*
 * $KUBEMOUNT_KUBELET_DIR, else the default; *ret_named tells which: a target
 * outside a default nobody named is refused, since a kubelet with another
 * --root-dir would get no confinement (fail closed).
 */
static const char *kubelet_dir(bool *ret_named) {
        const char *d = getenv("KUBEMOUNT_KUBELET_DIR");
        *ret_named = d && d[0] == '/';
        return *ret_named ? d : KUBELET_DIR_DEFAULT;
}

/* Routing as kubemount mount does it, in the namespace the shim entered (the mapping from the environment). */
static struct km_router *router_new(void) {
        struct km_router *r = NULL;
        bool named;
        const char *dir = kubelet_dir(&named);

        if (km_router_new(NULL, &r) < 0 || km_router_set_kubelet_dir(r, dir, named) < 0) {
                km_router_free(r);
                return NULL;
        }
        return r;
}

static int route_mount(int argc, char **argv) {
        _cleanup_(km_router_freep) struct km_router *router = NULL;
        struct mount_args a;
        struct km_error err = { 0 };
        int r, excode = MNT_EX_SUCCESS;
        bool named;
        const char *dir = kubelet_dir(&named);

        /*
         * Only mounts are ours: listing the table (bare "mount", -l), --help
         * and anything else that does not parse as a mount go to the real
         * mount, which says it best.
         */
        r = mount_args_parse(argc, argv, &a);
        if (r < 0 || a.help || a.version || a.sensitive_fd >= 0 || a.sensitive_file) {
                mount_args_done(&a);
                return -1;
        }
        /* Ours: the spec holds copies, so -o's secrets leave /proc/PID/cmdline now. */
        secret_scrub_mount_argv(argc, argv);
        if ((named ? km_mount_spec_set_confine(a.spec, dir) : km_mount_spec_set_confine_default(a.spec, dir)) < 0) {
                mount_args_done(&a);
                return MNT_EX_SYSERR;
        }
        if (!(router = router_new())) {
                mount_args_done(&a);
                return MNT_EX_SYSERR;
        }
        r = km_route_mount(router, a.spec, &excode, &err);
        if (r < 0)
                fprintf(stderr, "%s\n", err.message);
        mount_args_done(&a);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}

static int route_umount(int argc, char **argv) {
        _cleanup_(km_router_freep) struct km_router *router = NULL;
        struct umount_args a;
        struct km_error err = { 0 };
        int r, excode = MNT_EX_SUCCESS;

        r = umount_args_parse(argc, argv, &a);
        if (r < 0 || a.help || a.version)
                return -1; /* several targets, -a, --help: the real umount */
        if (!(router = router_new()))
                return MNT_EX_SYSERR;
        r = km_route_umount(router, a.target, a.flags, a.timeout_ms, &excode, &err);
        if (r < 0)
                fprintf(stderr, "%s\n", err.message);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}

/* Whether execvp() would find argv0: a probe answers only for a tool that is there. */
static bool program_exists(const char *argv0) {
        const char *path = getenv("PATH");
        char buf[PATH_MAX];

        if (strchr(argv0, '/'))
                return access(argv0, X_OK) == 0;
        if (!path)
                path = "/bin:/usr/bin";
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, ":");
                snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", argv0);
                if (access(buf, X_OK) == 0)
                        return true;
                p += n + (p[n] == ':');
        }
        return false;
}

/* argv of mount (bare, by path or wrapped in systemd-run --scope --), or NULL. */
static char **mount_argv(int *argc, char **argv) {
        if (streq(path_basename(argv[0]), "systemd-run")) {
                int i = unwrap_systemd_run(*argc, argv);
                if (i < 0)
                        return NULL;
                *argc -= i;
                argv += i;
        }
        return streq(path_basename(argv[0]), "mount") ? argv : NULL;
}

void route_scrub(int argc, char **argv) {
        char **m = argc > 0 ? mount_argv(&argc, argv) : NULL;

        if (m)
                secret_scrub_mount_argv(argc, m);
}

int route_program(int argc, char **argv, bool mount_ns_entered) {
        enum probe_kind probe = probe_match(argc, argv);
        const char *name;

        if (probe != PROBE_NONE && program_exists(argv[0])) {
                _cleanup_free_ char *out = NULL;
                if (probe_answer(probe, argc, argv, &out) < 0)
                        return -1; /* unusual case: the real tool prints it */
                fputs(out, stdout);
                return fflush(stdout) == 0 ? 0 : 1;
        }
        if (!mount_ns_entered)
                return -1;
        if (streq(path_basename(argv[0]), "systemd-run")) {
                int i = unwrap_systemd_run(argc, argv);
                if (i < 0)
                        return -1;
                argc -= i;
                argv += i;
        }
        name = path_basename(argv[0]);
        if (streq(name, "mount"))
                return route_mount(argc, argv);
        if (streq(name, "umount"))
                return route_umount(argc, argv);
        return -1;
}
