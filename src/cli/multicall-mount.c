/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount called as mount or umount (the multi-call form, cli.h): a
 * kubelet container whose PATH starts with libexecdir/kubemount/bin sends
 * every mount -- binds, tmpfs, remounts, not only the four types mount-utils
 * gives its mounter path -- through kubemount mount/umount into the host's
 * namespace.  Settings come from the environment alone: the kubelet runs
 * these with its own argv.
 */
#include <libmount.h>

#include "cli.h"

/* The command line's defaults, as kubemount without options has them. */
static int multicall_cli(struct cli *cli) {
        struct km_error err = {};
        const char *dir = getenv("KUBEMOUNT_KUBELET_DIR");

        cli->kubelet_dir_named = dir && *dir;
        cli->kubelet_dir = cli->kubelet_dir_named ? dir : KUBELET_DIR_DEFAULT;
        if (cli->kubelet_dir[0] != '/') {
                cli_error("KUBEMOUNT_KUBELET_DIR: '%s' is not an absolute path", cli->kubelet_dir);
                return -EINVAL;
        }
        cli_log_setup(0);
        if (km_host_new(NULL, &cli->host, &err) < 0) {
                cli_error("%s", err.message);
                return -EINVAL;
        }
        cli_log_host(cli->host);
        return 0;
}

static int run(int (*fn)(struct cli *, int, char **), int argc, char **argv) {
        struct cli cli = {};
        int r;

        if (multicall_cli(&cli) < 0)
                return MNT_EX_USAGE;
        r = fn(&cli, argc, argv);
        km_host_free(cli.host);
        return r;
}

int multicall_mount(int argc, char **argv) {
        /* Bare "mount" lists the (host's) mount table, as mount(8) does. */
        return run(argc > 1 ? cmd_mount : cmd_list, argc, argv);
}

int multicall_umount(int argc, char **argv) {
        return run(cmd_umount, argc, argv);
}
