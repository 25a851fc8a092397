/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount setup / check: rshared propagation of the kubelet dir at boot. */
#include <getopt.h>

#include "cli.h"

static const char setup_help[] =
        "Usage: kubemount setup [--shared PATH]... [--json]\n"
        "\n"
        "Make each PATH (default: the kubelet dir) propagate mounts: if the mount\n"
        "holding PATH is shared, nothing changes; else PATH is bound onto itself\n"
        "(unless it already is a mount point) and made rshared.  Missing directories\n"
        "are created.  Idempotent: running it again never adds mounts.  Runs in the\n"
        "host mount namespace.  Exit status: 0 done, 1 failed, 2 usage.\n";

static const char check_help[] =
        "Usage: kubemount check [--shared PATH]... [--json]\n"
        "\n"
        "Check that the host mount namespace is reachable and that each PATH\n"
        "(default: the kubelet dir) lies on a shared mount, so that mounts made\n"
        "under it reach containers.  Exit status: 0 healthy, 1 not (with the\n"
        "reason), 2 usage.\n";

struct paths {
        const char *list[64];
        size_t n;
};

static int parse_paths(struct cli *cli, int argc, char **argv, const char *help, struct paths *p) {
        static const struct option opts[] = {
                { "shared", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'J' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hs:", opts, NULL)) >= 0)
                switch (c) {
                case 's':
                        if (optarg[0] != '/') {
                                cli_error("%s: '%s' is not an absolute path", argv[0], optarg);
                                return -EINVAL;
                        }
                        if (p->n == ELEMENTSOF(p->list)) {
                                cli_error("%s: too many paths", argv[0]);
                                return -EINVAL;
                        }
                        p->list[p->n++] = optarg;
                        break;
                case 'J':
                        cli->json = true;
                        break;
                case 'h':
                        fputs(help, stdout);
                        return 1;
                default:
                        cli_error("%s: unrecognized option '%s'", argv[0], argv[optind - 1]);
                        return -EINVAL;
                }
        if (optind < argc) {
                cli_error("%s: unexpected argument '%s'", argv[0], argv[optind]);
                return -EINVAL;
        }
        if (p->n == 0)
                p->list[p->n++] = cli->kubelet_dir;
        return 0;
}

int cmd_setup(struct cli *cli, int argc, char **argv) {
        struct paths paths = { .n = 0 };
        struct km_error err = { 0 };
        int changed[ELEMENTSOF(paths.list)];
        int r;

        r = parse_paths(cli, argc, argv, setup_help, &paths);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        for (size_t i = 0; i < paths.n; i++) {
                changed[i] = km_ensure_shared(cli->host, paths.list[i], &err);
                if (changed[i] < 0) {
                        cli_error("setup: %s", err.message);
                        return EXIT_NO;
                }
        }
        if (cli->json) {
                json_t *a = json_array();
                for (size_t i = 0; a && i < paths.n; i++)
                        json_array_append_new(a, json_pack("{s:s,s:b}", "path", paths.list[i], "changed", changed[i]));
                return cli_print_json(a) < 0 ? EXIT_NO : EXIT_OK;
        }
        for (size_t i = 0; i < paths.n; i++)
                printf("%s: %s\n", paths.list[i], changed[i] ? "made rshared" : "already shared");
        return EXIT_OK;
}

json_t *cli_propagation_of(struct cli *cli, const char *path, bool *ret_ok) {
        struct km_mount_info *info = NULL;
        struct km_error e = { 0 };
        char why[KM_ERROR_MAX + 128];
        int result = km_mount_info_of(cli->host, path, &info, &e);
        bool ok = result == 0 && (km_mount_info_propagation(info) & KM_PROPAGATION_SHARED);
        const char *target = result == 0 ? km_mount_info_target(info) : "";
        const char *propagation = result == 0 ? km_propagation_name(km_mount_info_propagation(info)) : "";
        json_t *j;

        if (result == -ENOENT)
                snprintf(why, sizeof(why), "%s does not exist: run kubemount setup", path);
        else if (result < 0)
                snprintf(why, sizeof(why), "%s", e.message);
        else if (!ok)
                snprintf(why, sizeof(why), "%s is on a %s mount (%s): run kubemount setup", path, propagation, target);
        else
                snprintf(why, sizeof(why), "%s is on a shared mount (%s, peer group %u)", path, target,
                         km_mount_info_peer_group(info));
        j = json_pack("{s:s,s:b,s:s,s:s,s:s}", "path", path, "healthy", ok, "mount", target, "propagation", propagation,
                      "message", why);
        km_mount_info_free(info);
        *ret_ok = ok;
        return j;
}

int cmd_check(struct cli *cli, int argc, char **argv) {
        struct paths paths = { .n = 0 };
        _cleanup_(json_decrefp) json_t *a = NULL;
        struct km_error err = { 0 };
        bool healthy = true;
        int r;

        r = parse_paths(cli, argc, argv, check_help, &paths);
        if (r != 0)
                return r > 0 ? EXIT_OK : EXIT_USAGE;
        /* The first thing checked: can the host mount namespace be reached at all. */
        r = km_host_is_current(cli->host, &err);
        if (r < 0) {
                cli_error("check: %s", err.message);
                return EXIT_NO;
        }
        a = json_array();
        for (size_t i = 0; i < paths.n; i++) {
                bool ok;
                json_t *j = cli_propagation_of(cli, paths.list[i], &ok);
                const char *why = json_string_value(json_object_get(j, "message")) ?: "out of memory";

                healthy &= ok;
                if (cli->json)
                        json_array_append(a, j);
                else if (ok)
                        printf("%s\n", why);
                else
                        cli_error("%s", why);
                json_decref(j);
        }
        if (cli->json && cli_print_json(TAKE_PTR(a)) < 0)
                return EXIT_NO;
        return healthy ? EXIT_OK : EXIT_NO;
}
