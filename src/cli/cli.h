/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubemount command: shared state of the subcommands. */
#pragma once

#include "jansson-dl.h"

#include "util.h"

struct cli {
        struct km_host *host;    /* --host-mount-ns, else $KUBEMOUNT_HOST_MOUNT_NS, else /proc/1/ns/mnt */
        const char *kubelet_dir; /* --kubelet-dir, else $KUBEMOUNT_KUBELET_DIR, else the default */
        bool kubelet_dir_named;  /* not the default: mounts outside it are allowed (unconfined) */
        bool json;               /* --json anywhere it makes sense */
        char **vcs_options;      /* raw --vcs-image TYPE=REF values and --TYPE_mount_container=REF words */
        size_t n_vcs_options;
        int verbose;
};

/* Exit codes outside mount/umount (which use mount(8)'s). */
enum { EXIT_OK = 0, EXIT_NO = 1, EXIT_USAGE = 2, EXIT_CORRUPTED = 3 };

int cmd_setup(struct cli *cli, int argc, char **argv);
int cmd_check(struct cli *cli, int argc, char **argv);
int cmd_mount(struct cli *cli, int argc, char **argv);
int cmd_umount(struct cli *cli, int argc, char **argv);
int cmd_is_mountpoint(struct cli *cli, int argc, char **argv);
int cmd_refs(struct cli *cli, int argc, char **argv);
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_run(struct cli *cli, int argc, char **argv);
int cmd_agent(struct cli *cli, int argc, char **argv);
int cmd_ps(struct cli *cli, int argc, char **argv);
int cmd_exec(struct cli *cli, int argc, char **argv);
int cmd_stop(struct cli *cli, int argc, char **argv);
int cmd_rm(struct cli *cli, int argc, char **argv);
int cmd_logs(struct cli *cli, int argc, char **argv);
int cmd_gc(struct cli *cli, int argc, char **argv);
int cmd_pull(struct cli *cli, int argc, char **argv);
int cmd_image(struct cli *cli, int argc, char **argv);
int cmd_images(struct cli *cli, int argc, char **argv);
int cmd_rmi(struct cli *cli, int argc, char **argv);
int cmd_vcs(struct cli *cli, int argc, char **argv);
int cmd_status(struct cli *cli, int argc, char **argv);

/*
 * The multi-call form: kubemount called by another name (a link in
 * libexecdir/kubemount/bin), with no kubemount options; main() dispatches on
 * the name before it parses any.  mount and umount (multicall-mount.c) route
 * the kubelet's own mounts; the tools of vcs-tools.h (multicall-tools.c) run
 * from their images.  The tools' own failures exit EXIT_TOOL_FAILED; every
 * other status is the tool's.
 */
enum { EXIT_TOOL_FAILED = 125 };
int multicall_mount(int argc, char **argv);
int multicall_umount(int argc, char **argv);
int multicall_tool(int argc, char **argv);

/* The registry options shared by pull, image import and run --image (cmd-image.c). */
#include <getopt.h>
extern const struct option cli_image_long_options[];
struct km_image_options *cli_image_options_new(void);
/* 0 taken, 1 not an image option, < 0 invalid value. */
int cli_image_option(struct km_image_options *o, int c, const char *arg);

/* vcs pull [OPTIONS] [TYPE...]: each image of m (of those TYPEs) once; one exit status for all. */
struct vcs_map;
int cli_pull_all(struct cli *cli, int argc, char **argv, const struct vcs_map *m);
/* PATH's propagation as check reports it ({"path","healthy","mount","propagation","message"}). */
json_t *cli_propagation_of(struct cli *cli, const char *path, bool *ret_ok);
/* A router with the command line's kubelet dir and --vcs-image options. */
int cli_router_new(struct cli *cli, struct km_router **ret);

/* Prints "kubemount: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) _printf_(1, 2);
/* Sends library reports to stderr: warnings, and steps when verbose. */
void cli_log_setup(int verbose);
/* Messages up to max_level (KM_LOG_*) on stderr. */
void cli_log_setup_level(int max_level);
/* After cli_log_setup: with no journal socket in the caller's namespace, the host's, reached at the first entry into h.
 */
void cli_log_host(const struct km_host *host);
/* Prints a JSON value on stdout and frees it. */
int cli_print_json(json_t *v);
/* Handles -h/--help, --json and rejects other options for simple commands. */
int cli_simple_options(struct cli *cli, int argc, char **argv, const char *help, int *optind_ret);
