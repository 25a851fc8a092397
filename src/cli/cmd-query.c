/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount is-mountpoint / refs / list: queries of the host mount table. */
#include <sys/stat.h>

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

/* The PATH argument, made absolute before the switch to the host namespace changes the directory. */
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

struct probe {
        const char *path;
        int result;
        struct km_error err;
};

static int probe_in_host(void *userdata, struct km_error *err _unused_) {
        struct probe *p = userdata;
        p->result = km_is_mount_point(p->path, &p->err);
        return 0;
}

int cmd_is_mountpoint(struct cli *cli, int argc, char **argv) {
        struct probe p = { 0 };
        struct km_error err = { 0 };
        _cleanup_free_ char *path = NULL;
        bool corrupted;
        int r;

        r = one_path(cli, argc, argv, is_mountpoint_help, &path);
        p.path = path;
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        r = km_hostns_run(cli->host_ns, probe_in_host, &p, &err);
        if (r < 0) {
                cli_error("is-mountpoint: %s", err.message);
                return EXIT_USAGE;
        }
        corrupted = p.result < 0 && km_error_is_corrupted_mount(p.result);
        if (cli->json) {
                json_t *o = json_pack("{s:s,s:b,s:b}", "path", p.path, "mountpoint", p.result > 0 || corrupted,
                                      "corrupted", corrupted);
                if (o && p.result < 0)
                        json_object_set_new(o, "error", json_string(p.err.message));
                cli_print_json(o);
        } else if (p.result < 0)
                cli_error("%s", p.err.message);
        if (p.result < 0)
                return corrupted ? EXIT_CORRUPTED : EXIT_USAGE;
        return p.result ? EXIT_OK : EXIT_NO;
}

struct table_job {
        const char *path;
        struct km_mount_table *table;
        char **refs;
        int nrefs;
};

static int table_in_host(void *userdata, struct km_error *err) {
        struct table_job *job = userdata;
        return km_mount_table_load(NULL, &job->table, err);
}

/*
 * As GetMountRefs: a path that does not exist has no refs, nor has a
 * corrupted mount (a warning says so); symlinks are followed first.
 */
static int refs_in_host(void *userdata, struct km_error *err) {
        struct table_job *job = userdata;
        _cleanup_free_ char *canonical = NULL;
        struct stat st;
        int r;

        /* stat() first, as mount-utils' PathExists: realpath() alone does not ask a dead FUSE daemon. */
        if (stat(job->path, &st) < 0 || !(canonical = realpath(job->path, NULL))) {
                r = -errno;
                if (r == -ENOENT || km_error_is_corrupted_mount(r)) {
                        if (r != -ENOENT)
                                log_msg(KM_LOG_WARNING, "refs %s: corrupted mount (%s), treated as unmounted",
                                        job->path, strerror(-r));
                        job->refs = calloc(1, sizeof(char *));
                        return job->refs ? 0 : error_set(err, -ENOMEM, "refs %s", job->path);
                }
                return error_set(err, r, "refs %s", job->path);
        }
        r = km_mount_table_load(NULL, &job->table, err);
        if (r < 0)
                return r;
        r = km_mount_table_refs(job->table, canonical, &job->refs, err);
        job->nrefs = r;
        return r < 0 ? r : 0;
}

int cmd_refs(struct cli *cli, int argc, char **argv) {
        struct table_job job = { 0 };
        struct km_error err = { 0 };
        _cleanup_free_ char *path = NULL;
        int r;

        r = one_path(cli, argc, argv, refs_help, &path);
        job.path = path;
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        r = km_hostns_run(cli->host_ns, refs_in_host, &job, &err);
        if (r >= 0) {
                if (cli->json) {
                        json_t *a = json_array();
                        for (int i = 0; a && i < job.nrefs; i++)
                                json_array_append_new(a, json_string(job.refs[i]));
                        r = cli_print_json(a);
                } else
                        for (int i = 0; i < job.nrefs; i++)
                                printf("%s\n", job.refs[i]);
        } else
                cli_error("refs: %s", err.message);
        km_strv_free(job.refs);
        km_mount_table_free(job.table);
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
        struct table_job job = { 0 };
        struct km_error err = { 0 };
        int optind_ret, r;

        r = cli_simple_options(cli, argc, argv, list_help, &optind_ret);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        if (optind_ret < argc) {
                cli_error("list: unexpected argument '%s'", argv[optind_ret]);
                return EXIT_USAGE;
        }
        r = km_hostns_run(cli->host_ns, table_in_host, &job, &err);
        if (r < 0) {
                cli_error("list: %s", err.message);
                return EXIT_USAGE;
        }
        if (cli->json) {
                json_t *a = json_array();
                for (size_t i = 0; a && i < km_mount_table_size(job.table); i++)
                        json_array_append_new(a, mount_to_json(km_mount_table_at(job.table, i)));
                r = cli_print_json(json_pack("{s:o}", "filesystems", a));
        } else {
                for (size_t i = 0; i < km_mount_table_size(job.table); i++) {
                        const struct km_mount *m = km_mount_table_at(job.table, i);
                        _cleanup_free_ char *all = km_mount_options_masked(m);
                        printf("%s %s %s %s %s\n", km_mount_target(m), km_mount_source(m) ? km_mount_source(m) : "none",
                               km_mount_fstype(m), km_propagation_name(km_mount_propagation(m)), all ? all : "");
                }
        }
        km_mount_table_free(job.table);
        return r < 0 ? EXIT_USAGE : EXIT_OK;
}
