/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount is-mountpoint / refs / list: queries of the host mount table. */
#include "cli.h"

static const char is_mountpoint_help[] =
        "Usage: kubemount is-mountpoint [--json] PATH\n"
        "\n"
        "Tell whether PATH (symlinks followed) is a mount point in the host mount\n"
        "namespace, in constant time whatever the number of mounts.\n"
        "Exit status: 0 mount point, 1 not a mount point, 2 error (e.g. PATH does\n"
        "not exist), 3 corrupted mount (ENOTCONN, ESTALE, EIO, EACCES, EHOSTDOWN,\n"
        "EWOULDBLOCK, ENODEV: unmount it with kubemount umount).\n";

static const char refs_help[] =
        "Usage: kubemount refs [--json] PATH\n"
        "\n"
        "Print the mount points that refer to PATH (symlinks followed) in the host\n"
        "mount namespace, one per line, as k8s.io/mount-utils' GetMountRefs finds them:\n"
        "the other mount points that show the same directory of the same device.  For\n"
        "a mount point these are its other binds, for a directory inside a mount the\n"
        "binds of that directory (a subPath source), for a plain directory none.  A\n"
        "PATH that does not exist, or a corrupted mount, has none (with a warning for\n"
        "the latter).  --json prints a JSON array.\n"
        "Exit status: 0 ok (also for an empty list), 2 error.\n";

static const char list_help[] =
        "Usage: kubemount list [--json]\n"
        "\n"
        "Print the host mount table: TARGET SOURCE FSTYPE PROPAGATION OPTIONS, or with\n"
        "--json the fields of findmnt --json --list plus id, parent, root and\n"
        "propagation.  Values of sensitive options are masked.\n";

/* The PATH argument, made absolute: messages and --json show it as the host sees it. */
static int one_path(struct cli *cli, int argc, char **argv, const char *help, char **ret) {
        int optind_ret, r;

        r = cli_simple_options(cli, argc, argv, help, &optind_ret);
        if (r != 0)
                return r;
        if (argc - optind_ret != 1) {
                cli_error("%s: expected one PATH", argv[0]);
                return -EINVAL;
        }
        *ret = path_absolute(argv[optind_ret]);
        return *ret ? 0 : -ENOMEM;
}

int cmd_is_mountpoint(struct cli *cli, int argc, char **argv) {
        struct km_error err = { 0 };
        _cleanup_free_ char *path = NULL;
        bool corrupted;
        int r;

        r = one_path(cli, argc, argv, is_mountpoint_help, &path);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        r = km_is_mount_point(cli->host, path, &err);
        /* An unreachable host is no answer about PATH: an error as for the other commands. */
        if (r < 0 && km_host_is_current(cli->host, NULL) < 0) {
                cli_error("is-mountpoint: %s", err.message);
                return EXIT_USAGE;
        }
        corrupted = r < 0 && km_error_is_corrupted_mount(r);
        if (cli->json) {
                json_t *o = json_pack("{s:s,s:b,s:b}", "path", path, "mountpoint", r > 0 || corrupted, "corrupted",
                                      corrupted);
                if (o && r < 0)
                        json_object_set_new(o, "error", json_string(err.message));
                cli_print_json(o);
        } else if (r < 0)
                cli_error("%s", err.message);
        if (r < 0)
                return corrupted ? EXIT_CORRUPTED : EXIT_USAGE;
        return r ? EXIT_OK : EXIT_NO;
}

int cmd_refs(struct cli *cli, int argc, char **argv) {
        struct km_error err = { 0 };
        _cleanup_free_ char *path = NULL;
        char **refs = NULL;
        int r, n;

        r = one_path(cli, argc, argv, refs_help, &path);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        r = n = km_mount_refs(cli->host, path, &refs, &err);
        if (r >= 0) {
                if (cli->json) {
                        json_t *a = json_array();
                        for (int i = 0; a && i < n; i++)
                                json_array_append_new(a, json_string(refs[i]));
                        r = cli_print_json(a);
                } else
                        for (int i = 0; i < n; i++)
                                printf("%s\n", refs[i]);
        } else
                cli_error("refs: %s", err.message);
        km_strv_free(refs);
        return r < 0 ? EXIT_USAGE : EXIT_OK;
}

/* A JSON string, or null when the table has no value. */
static json_t *str_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *mount_to_json(const struct km_mount *m) {
        _cleanup_free_ char *all = km_mount_options_masked(m);
        json_t *o = json_object();

        if (!o)
                return NULL;
        json_object_set_new(o, "id", json_integer(km_mount_id(m)));
        json_object_set_new(o, "parent", json_integer(km_mount_parent_id(m)));
        json_object_set_new(o, "target", str_or_null(km_mount_target(m)));
        json_object_set_new(o, "source", str_or_null(km_mount_source(m)));
        json_object_set_new(o, "fstype", str_or_null(km_mount_fstype(m)));
        json_object_set_new(o, "options", str_or_null(all));
        json_object_set_new(o, "root", str_or_null(km_mount_root(m)));
        json_object_set_new(o, "propagation", json_string(km_propagation_name(km_mount_propagation(m))));
        return o;
}

int cmd_list(struct cli *cli, int argc, char **argv) {
        struct km_mount_table *table = NULL;
        struct km_error err = { 0 };
        int optind_ret, r;

        r = cli_simple_options(cli, argc, argv, list_help, &optind_ret);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        if (optind_ret < argc) {
                cli_error("list: unexpected argument '%s'", argv[optind_ret]);
                return EXIT_USAGE;
        }
        r = km_mount_table_load(cli->host, NULL, &table, &err);
        if (r < 0) {
                cli_error("list: %s", err.message);
                return EXIT_USAGE;
        }
        if (cli->json) {
                json_t *a = json_array();
                for (size_t i = 0; a && i < km_mount_table_size(table); i++)
                        json_array_append_new(a, mount_to_json(km_mount_table_at(table, i)));
                r = cli_print_json(json_pack("{s:o}", "filesystems", a));
        } else {
                for (size_t i = 0; i < km_mount_table_size(table); i++) {
                        const struct km_mount *m = km_mount_table_at(table, i);
                        _cleanup_free_ char *all = km_mount_options_masked(m);
                        printf("%s %s %s %s %s\n", km_mount_target(m), km_mount_source(m) ? km_mount_source(m) : "none",
                               km_mount_fstype(m), km_propagation_name(km_mount_propagation(m)), all ? all : "");
                }
        }
        km_mount_table_free(table);
        return r < 0 ? EXIT_USAGE : EXIT_OK;
}
