/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount mount / umount: mount(8)'s grammar, in the host namespace. */
#include <fcntl.h>
#include <libmount.h>
#include <sys/stat.h>

#include "cli.h"
#include "mountargs.h"
#include "secrets.h"

static const char mount_help[] =
        "Usage: kubemount mount [options] [SOURCE] TARGET\n"
        "\n"
        "Mount in the host mount namespace with mount(8)'s grammar, so that a kubelet\n"
        "started with --experimental-mounter-path=/usr/bin/kubemount works unchanged.\n"
        "\n"
        "Who mounts TYPE is its policy in the type table (kubemount vcs list):\n"
        "  host       the host's /sbin/mount.TYPE helper, or its kernel\n"
        "  container  the type's VCS image runs its own 'mount -t TYPE -o OPTIONS SOURCE\n"
        "             TARGET' in a VCS container that has the kubelet dir at its own\n"
        "             path (rshared) and the host's network; the image must be in the\n"
        "             store (kubemount vcs pull).  TARGET must be below the kubelet dir.\n"
        "  auto       (default) host when it has a mount.TYPE helper (for fuse.SUB:\n"
        "             mount.fuse and SUB), or a kernel type that needs none; else the\n"
        "             image; else exit 32, naming how to map TYPE.\n"
        "A client that keeps running (every fuse.* type, glusterfs, ceph-fuse, or an\n"
        "entry with daemon true) keeps its container, named mount-NAME-HASH after\n"
        "TARGET, until kubemount umount TARGET (or gc, once TARGET is unmounted\n"
        "otherwise); kubemount ps shows it with its image digest and TARGET.  Binds and\n"
        "remounts are always the host kernel's.  On the host, a helper that leaves a\n"
        "daemon behind runs in cgroups of its own, below $KUBEMOUNT_CGROUP_PARENT\n"
        "(default: kubemount-agent.service's group when systemd delegates it, else\n"
        "kubemount), so that the daemon outlives the caller's container.\n"
        "\n"
        "Options:\n"
        "  -t, --types TYPE          filesystem type (letters, digits, . _ + -)\n"
        "  -o, --options OPTS        comma-separated options; may be repeated\n"
        "  -B, --bind / -R, --rbind  bind mount; flags like ro are set before the bind is\n"
        "                            attached, so its propagated copies get them too\n"
        "  -r, --read-only / -w, --rw, --read-write\n"
        "  --make-shared, --make-slave, --make-private, --make-unbindable\n"
        "  --make-rshared, --make-rslave, --make-rprivate, --make-runbindable\n"
        "                            set the propagation (r: of every mount below too)\n"
        "  -c, --no-canonicalize     accepted: kubemount resolves paths itself, one held\n"
        "                            directory at a time (symlinks below the kubelet dir\n"
        "                            are refused)\n"
        "  -f, --fake                do everything but the mount system call\n"
        "  -v, --verbose             libmount's verbose mode, for a helper's mount\n"
        "  -n, --no-mtab, -s, -i     accepted for compatibility\n"
        "  -V, --version             print kubemount's version\n"
        "  --sensitive-options-fd=N  read secret options (password=...) from fd N\n"
        "  --sensitive-options-file=FILE\n"
        "                            read secret options from FILE (not a symlink)\n"
        "Secret options never appear in messages or in kubemount's command line;\n"
        "values of keys such as password=, secret=, key=, token= are masked anyway,\n"
        "and overwritten in kubemount's own command line (/proc/PID/cmdline) once read.\n"
        "\n"
        "Below the kubelet dir (kubemount --kubelet-dir=DIR, else $KUBEMOUNT_KUBELET_DIR)\n"
        "no symlink or \"..\" is followed.  When neither names it, a TARGET that is not\n"
        "inside the default, /var/lib/kubelet, is refused (exit 1): a kubelet with another\n"
        "--root-dir would get no confinement.  Naming the kubelet dir allows targets\n"
        "outside it (unconfined, as mount(8) does).\n"
        "\n"
        "Exit status (mount(8)): 0 success, 1 usage (also a TARGET outside an unnamed\n"
        "kubelet dir), 2 system error, 32 mount failure.\n";

static const char umount_help[] =
        "Usage: kubemount umount [options] TARGET\n"
        "\n"
        "Unmount TARGET in the host mount namespace.  Corrupted mounts (dead FUSE\n"
        "daemon, stale NFS handle) are unmounted like any other.  The VCS container\n"
        "that served TARGET (see kubemount mount --help) is stopped and removed once\n"
        "TARGET is no longer mounted.\n"
        "\n"
        "Options:\n"
        "  -f, --force          force (MNT_FORCE)\n"
        "  -l, --lazy           detach now, clean up when no longer busy (MNT_DETACH)\n"
        "  -R, --recursive      TARGET and every mount below it, deepest first, from\n"
        "                       one snapshot of the mount table, chosen by mount ID and\n"
        "                       found again below TARGET without following symlinks\n"
        "  --timeout=SECS       if the unmount is busy or not done in SECS (also 500ms),\n"
        "                       retry with force, then lazily; each step is reported\n"
        "  -v, --verbose        report each unmount\n"
        "  -n, --no-mtab, -c, --no-canonicalize, -i\n"
        "                       accepted for compatibility\n"
        "  -V, --version        print kubemount's version\n"
        "\n"
        "TARGET is confined like a mount target (see kubemount mount --help): without a\n"
        "named kubelet dir, a TARGET outside /var/lib/kubelet is refused.\n"
        "\n"
        "Exit status (umount(8)): 0 success, 1 usage (also a TARGET outside an unnamed\n"
        "kubelet dir), 2 system error, 32 failure (the message says \"not mounted\" when\n"
        "TARGET is not a mount point).\n";

/* Secret options come from an fd or a file so that they stay out of argv. */
static int read_sensitive(const struct mount_args *a, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n;
        int r;

        if (a->sensitive_file) {
                fd = open(a->sensitive_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
                if (fd < 0)
                        return -errno;
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode))
                        return -EBADFD;
                r = read_full_fd(fd, 64 * 1024, &buf, &n);
        } else {
                r = read_full_fd(a->sensitive_fd, 64 * 1024, &buf, &n);
                close(a->sensitive_fd); /* no helper or daemon may inherit it */
        }
        if (r < 0)
                return r;
        if (strlen(buf) != n)
                return -EINVAL; /* a NUL inside */
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

int cli_router_new(struct cli *cli, struct km_router **ret) {
        _cleanup_(km_router_freep) struct km_router *r = NULL;

        /* No image options: a routed mount never pulls, and the store is $KUBEMOUNT_STORE_DIR's (--store-dir). */
        if (km_router_new(cli->host, &r) < 0 ||
            km_router_set_kubelet_dir(r, cli->kubelet_dir, cli->kubelet_dir_named) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < cli->n_vcs_options; i++)
                if (km_router_add_vcs_image(r, cli->vcs_options[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(r);
        return 0;
}

int cmd_mount(struct cli *cli, int argc, char **argv) {
        _cleanup_(km_router_freep) struct km_router *router = NULL;
        struct mount_args a;
        struct km_error err = { 0 };
        int r, excode = MNT_EX_SUCCESS;

        r = mount_args_parse(argc, argv, &a);
        /*
         * mount-utils passes secrets with -o, and /proc/PID/cmdline shows
         * them to anyone while the mount runs: the spec holds copies now,
         * so overwrite the values in argv itself, as mount.cifs does.
         */
        secret_scrub_mount_argv(argc, argv);
        if (r < 0) {
                cli_error("mount: %s\nTry 'kubemount mount --help'.", a.error);
                mount_args_done(&a);
                return MNT_EX_USAGE;
        }
        if (a.help || a.version) {
                if (a.help)
                        fputs(mount_help, stdout);
                else
                        printf("kubemount %s\n", km_version());
                mount_args_done(&a);
                return MNT_EX_SUCCESS;
        }
        if (a.sensitive_fd >= 0 || a.sensitive_file) {
                _cleanup_free_ char *secret = NULL;
                r = read_sensitive(&a, &secret);
                if (r < 0) {
                        cli_error("mount: reading sensitive options from %s: %s",
                                  a.sensitive_file ? a.sensitive_file : "fd", strerror(-r));
                        mount_args_done(&a);
                        return MNT_EX_USAGE;
                }
                r = km_mount_spec_add_sensitive_options(a.spec, secret);
                explicit_bzero(secret, strlen(secret));
                if (r < 0) {
                        mount_args_done(&a);
                        return MNT_EX_SYSERR;
                }
        }

        if ((cli->kubelet_dir_named ? km_mount_spec_set_confine(a.spec, cli->kubelet_dir)
                                    : km_mount_spec_set_confine_default(a.spec, cli->kubelet_dir)) < 0) {
                mount_args_done(&a);
                return MNT_EX_SYSERR;
        }
        if (cli_router_new(cli, &router) < 0) {
                mount_args_done(&a);
                return MNT_EX_SYSERR;
        }
        r = km_route_mount(router, a.spec, &excode, &err);
        if (r < 0)
                cli_error("%s", err.message);
        mount_args_done(&a);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}

int cmd_umount(struct cli *cli, int argc, char **argv) {
        _cleanup_(km_router_freep) struct km_router *router = NULL;
        struct umount_args a;
        struct km_error err = { 0 };
        int r, excode = MNT_EX_SUCCESS;

        r = umount_args_parse(argc, argv, &a);
        if (r < 0) {
                cli_error("umount: %s\nTry 'kubemount umount --help'.", a.error);
                return MNT_EX_USAGE;
        }
        if (a.help) {
                fputs(umount_help, stdout);
                return MNT_EX_SUCCESS;
        }
        if (a.version) {
                printf("kubemount %s\n", km_version());
                return MNT_EX_SUCCESS;
        }
        if (a.verbose && !cli->verbose)
                cli_log_setup(cli->verbose = 1);
        if (cli_router_new(cli, &router) < 0)
                return MNT_EX_SYSERR;
        r = km_route_umount(router, a.target, a.flags, a.timeout_ms, &excode, &err);
        if (r < 0)
                cli_error("%s", err.message);
        return r < 0 ? (excode ? excode : MNT_EX_FAIL) : MNT_EX_SUCCESS;
}
