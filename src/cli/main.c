/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount: entry point, global options and subcommand dispatch. */
#include <getopt.h>

#include "cli.h"
#include "sd-protocol.h"
#include "syscalls.h"
#include "vcs-map.h"
#include "vcs-tools.h"

static const char usage[] =
        "Usage: kubemount [GLOBAL OPTIONS] COMMAND [ARGS]\n"
        "\n"
        "Mount volumes in the host mount namespace for a kubelet that may run in a\n"
        "container, keep the kubelet directory's propagation shared, and run volume\n"
        "client software (VCS) from container images.\n"
        "\n"
        "Propagation:\n"
        "  setup [--shared PATH]...   make PATH (default: the kubelet dir) rshared, once\n"
        "  check [--shared PATH]...   exit 0 if propagation is healthy, 1 and why if not\n"
        "Host-namespace mounts:\n"
        "  mount [mount(8) options] [SOURCE] TARGET\n"
        "                             mount in the host namespace, by the host's client\n"
        "                             or the type's VCS image; mount(8) exit codes\n"
        "  umount [-f] [-l] [-R] [--timeout=SECS] TARGET\n"
        "                             unmount in the host namespace (and end the VCS\n"
        "                             container that served it)\n"
        "  is-mountpoint PATH         exit 0 if PATH is a mount point, 1 if not,\n"
        "                             3 if it is a corrupted mount (dead FUSE, stale NFS)\n"
        "  refs PATH                  the mount points that reference PATH (GetMountRefs)\n"
        "  list                       the host mount table (sensitive values masked)\n"
        "VCS containers:\n"
        "  run (--image REF | --rootfs DIR) [OPTIONS] [-- COMMAND [ARGS]...]\n"
        "                             run COMMAND in a VCS container; -d keeps it running\n"
        "  exec [-i] [-t] NAME -- COMMAND [ARGS]...\n"
        "                             run COMMAND in a running container\n"
        "  ps [-a] [--json]           the VCS containers\n"
        "  stop [--timeout SECS] NAME\n"
        "                             SIGTERM, then SIGKILL after SECS (default 10)\n"
        "  rm [-f] NAME               remove a stopped container (-f: kill it first)\n"
        "  logs NAME                  a detached container's output\n"
        "  gc                         reconcile state with the kernel; unmount dead FUSE\n"
        "  agent [--idle-exit SECS]   serve container requests (kubemount-agent.service)\n"
        "VCS images:\n"
        "  pull [OPTIONS] REF         pull an image into the store, verified by sha256\n"
        "  image import SOURCE [NAME] import oci:DIR, oci-archive:FILE or rootfs:TAR\n"
        "  images                     the images in the store\n"
        "  rmi REF...                 remove images\n"
        "  vcs list [--json]          the filesystem type -> VCS image table and its sources\n"
        "  vcs pull [OPTIONS] [TYPE...]\n"
        "                             pull the images of that table (node bootstrap)\n"
        "  status                     propagation, agent, routes, routed mounts, images\n"
        "\n"
        "Multi-call form: called through a link of LIBEXECDIR/kubemount/bin (first in\n"
        "a kubelet container's PATH), kubemount is the program the link names, with its\n"
        "argv and none of these options (settings from the environment).  mount and\n"
        "umount are kubemount mount and umount, for the kubelet's own mounts (a bare\n"
        "mount lists the host mount table).  blkid, blockdev, fsck, fsck.TYPE,\n"
        "mkfs.TYPE, e2fsck, dumpe2fs, resize2fs, xfs_growfs, xfs_io and xfs_repair run\n"
        "from the image their type maps to (vcs list: ext2, ext3, ext4, xfs; block-tools\n"
        "for blkid, blockdev and fsck), in a container that gets only the devices (and\n"
        "xfs mount points) the arguments name; policy host: the host's own.  Output and\n"
        "exit status are the tool's; kubemount's own failure is 125.\n"
        "\n"
        "Global options:\n"
        "  --host-mount-ns=PATH   host mount namespace file (default: $KUBEMOUNT_HOST_MOUNT_NS,\n"
        "                         else /proc/1/ns/mnt); entered in-process, skipped if current\n"
        "  --kubelet-dir=DIR      the kubelet root directory (default: $KUBEMOUNT_KUBELET_DIR,\n"
        "                         else /var/lib/kubelet); below it no symlink is followed.\n"
        "                         Unless it is named, mount and umount refuse a target\n"
        "                         outside /var/lib/kubelet (exit 1): it would not be confined\n"
        "  --state-dir=DIR        VCS container state (default $KUBEMOUNT_STATE_DIR, else\n"
        "                         /run/kubemount)\n"
        "  --store-dir=DIR        VCS image store (default $KUBEMOUNT_STORE_DIR, else\n"
        "                         /var/lib/kubemount)\n"
        "  --vcs-image TYPE=REF   map TYPE to image REF with policy container (repeatable;\n"
        "                         also spelled --TYPE_mount_container=REF): mounts of TYPE\n"
        "                         run REF's own mount(8) in a VCS container ('vcs list')\n"
        "  --vcs-configmap=DIR    a ConfigMap volume of mappings (default\n"
        "                         $KUBEMOUNT_VCS_CONFIGMAP); files: $KUBEMOUNT_VCS_DIR, else\n"
        "                         /etc/kubemount/vcs.d\n"
        "  --json                 machine-readable output where the output is data\n"
        "  -v, --verbose          report each step on stderr\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version\n"
        "\n"
        "Environment: KUBEMOUNT_COMPAT=old-kernel forces the fallbacks used on Linux 5.4\n"
        "(no statx mount attributes, statmount or mount_setattr); no-mount-api also\n"
        "those for kernels without open_tree and fsopen.  See kubemount(8) for the others.\n"
        "\n"
        "Exit status: mount and umount use mount(8)'s codes (0 ok, 1 usage, 2 system\n"
        "error, 32 mount failure); run and exec the command's status (125 kubemount\n"
        "failed, 126 not executable, 127 not found, 128+N signal N); other commands\n"
        "0 yes/ok, 1 no/unhealthy, 2 usage or error, 3 corrupted mount.\n"
        "Run 'kubemount COMMAND --help' for details.\n";

/*
 * no_json: the exit status when jansson cannot be loaded, for the commands
 * that always use JSON: it is loaded first, before any fork or namespace
 * switch (run and exec report their own failures as 125).  0 for those that
 * touch it at most for --json, which loads it then (jansson-dl.h): the mount
 * path starts with libc alone.
 */
static const struct {
        const char *name;
        int (*fn)(struct cli *cli, int argc, char **argv);
        int no_json;
} commands[] = {
        { "setup", cmd_setup, 0 },
        { "check", cmd_check, 0 },
        { "mount", cmd_mount, 0 },
        { "umount", cmd_umount, 0 },
        { "is-mountpoint", cmd_is_mountpoint, 0 },
        { "refs", cmd_refs, 0 },
        { "list", cmd_list, 0 },
        { "run", cmd_run, 125 },
        { "agent", cmd_agent, EXIT_USAGE },
        { "ps", cmd_ps, EXIT_USAGE },
        { "exec", cmd_exec, 125 },
        { "stop", cmd_stop, EXIT_USAGE },
        { "rm", cmd_rm, EXIT_USAGE },
        { "logs", cmd_logs, EXIT_USAGE },
        { "gc", cmd_gc, EXIT_USAGE },
        { "pull", cmd_pull, EXIT_USAGE },
        { "image", cmd_image, EXIT_USAGE },
        { "images", cmd_images, EXIT_USAGE },
        { "rmi", cmd_rmi, EXIT_USAGE },
        { "vcs", cmd_vcs, EXIT_USAGE },
        { "status", cmd_status, EXIT_NO },
};

/*
 * The multi-call form (cli.h): called as NAME through a link, kubemount is
 * that program and takes none of its own options.  1 with *ret set when
 * argv[0] names one; 0 for any other name ("kubemount", a renamed copy).
 */
static int multicall(int argc, char **argv, int *ret) {
        const char *name = argc > 0 && argv[0] ? basename(argv[0]) : "";
        struct vcs_tool tool;

        if (streq(name, "mount"))
                *ret = multicall_mount(argc, argv);
        else if (streq(name, "umount"))
                *ret = multicall_umount(argc, argv);
        else if (vcs_tool_lookup(name, &tool))
                *ret = multicall_tool(argc, argv);
        else
                return 0;
        return 1;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "host-mount-ns", required_argument, NULL, 'N' },
                { "kubelet-dir", required_argument, NULL, 'K' },
                { "state-dir", required_argument, NULL, 'S' },
                { "store-dir", required_argument, NULL, 'I' },
                { "vcs-image", required_argument, NULL, 'M' },
                { "vcs-configmap", required_argument, NULL, 'C' },
                { "json", no_argument, NULL, 'J' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        struct cli cli = {
                .kubelet_dir = getenv("KUBEMOUNT_KUBELET_DIR"),
        };
        _cleanup_free_ char **vcs_options = calloc(argc, sizeof(char *));
        const char *host_ns = NULL;
        struct km_error err = { 0 };
        int c, r;

        /* fds a caller leaked to us never reach a mount helper or its daemon. */
        (void)sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        if (multicall(argc, argv, &r))
                return r;
        if (!vcs_options) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        cli.vcs_options = vcs_options;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+vhV", opts, NULL)) >= 0)
                switch (c) {
                case 'N':
                        host_ns = optarg;
                        break;
                case 'K':
                        cli.kubelet_dir = optarg;
                        break;
                case 'S':
                        setenv("KUBEMOUNT_STATE_DIR", optarg, 1); /* the library's default, and the agent's */
                        break;
                case 'I':
                        setenv("KUBEMOUNT_STORE_DIR", optarg, 1);
                        break;
                case 'M':
                        cli.vcs_options[cli.n_vcs_options++] = optarg;
                        break;
                case 'C':
                        setenv("KUBEMOUNT_VCS_CONFIGMAP", optarg, 1);
                        break;
                case 'J':
                        cli.json = true;
                        break;
                case 'v':
                        cli.verbose++;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return EXIT_OK;
                case 'V':
                        printf("kubemount %s\n", km_version());
                        return EXIT_OK;
                default:
                        /* The design's --TYPE_mount_container=REF: a name getopt cannot list, passed on whole. */
                        if (c == '?' && !optopt && vcs_map_is_container_option(argv[optind - 1])) {
                                cli.vcs_options[cli.n_vcs_options++] = argv[optind - 1];
                                break;
                        }
                        cli_error("unrecognized option '%s'\nTry 'kubemount --help'.", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        if (cli.n_vcs_options > 0) {
                /* A bad mapping option is a usage error whatever the command (no file is read here). */
                struct vcs_map_sources only = { cli.vcs_options, cli.n_vcs_options, .no_defaults = true };
                _cleanup_(vcs_map_freep) struct vcs_map *m = NULL;

                if (vcs_map_load(&only, &m, &err) < 0) {
                        cli_error("%s", err.message);
                        return EXIT_USAGE;
                }
        }
        /* A kubelet dir named by the option or the environment; else the default, which confines only what is below it.
         */
        cli.kubelet_dir_named = cli.kubelet_dir && *cli.kubelet_dir;
        if (!cli.kubelet_dir_named)
                cli.kubelet_dir = KUBELET_DIR_DEFAULT;
        if (cli.kubelet_dir[0] != '/') {
                cli_error("--kubelet-dir: '%s' is not an absolute path", cli.kubelet_dir);
                return EXIT_USAGE;
        }
        cli_log_setup(cli.verbose);

        if (optind >= argc) {
                fputs(usage, stderr);
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                if (!streq(argv[optind], commands[i].name))
                        continue;
                /* dlopen_jansson() logs why it failed. */
                if (commands[i].no_json && dlopen_jansson() < 0)
                        return commands[i].no_json;
                /* An empty --host-mount-ns= is the default, whatever the environment says. */
                if (km_host_new(host_ns && !*host_ns ? KM_HOST_MOUNT_NS_DEFAULT : host_ns, &cli.host, &err) < 0) {
                        cli_error("%s", err.message);
                        return EXIT_USAGE;
                }
                cli_log_host(cli.host);
                r = commands[i].fn(&cli, argc - optind, argv + optind);
                km_host_free(cli.host);
                return r;
        }
        cli_error("unknown command '%s'\nTry 'kubemount --help'.", argv[optind]);
        return EXIT_USAGE;
}
