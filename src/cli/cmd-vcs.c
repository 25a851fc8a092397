/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount vcs list: the filesystem type -> VCS image table (route/vcs-map.h). */
#include "cli.h"
#include "vcs-map.h"

static const char vcs_help[] =
        "Usage: kubemount [MAPPING OPTIONS] vcs list [--json]\n"
        "       kubemount [MAPPING OPTIONS] vcs pull [--json] [REGISTRY OPTIONS] [TYPE...]\n"
        "\n"
        "The effective table of filesystem types and the VCS images that serve them,\n"
        "one line per type, sorted by type: image, policy (auto, host or container),\n"
        "whether the client keeps running (daemon), and where the entry came from;\n"
        "\"(privileged)\" after it marks an entry whose containers keep the VCS\n"
        "capabilities in the host's user namespace and make their own mounts (the\n"
        "default is unprivileged: mounts made by kubemount after a policy check).\n"
        "Sources, highest first: the command line, the ConfigMap directory, the files\n"
        "of /etc/kubemount/vcs.d/*.json, the compiled-in defaults (see kubemount(8)).\n"
        "vcs pull pulls every image of the table once (see kubemount vcs pull --help).\n"
        "\n"
        "Mapping options (global, before the command):\n"
        "  --vcs-image TYPE=REF            map TYPE to REF, policy container (repeatable)\n"
        "  --TYPE_mount_container=REF      the same, as the design spells it\n"
        "  --vcs-configmap DIR             a ConfigMap volume (default $KUBEMOUNT_VCS_CONFIGMAP)\n"
        "\n"
        "Exit status: 0, or 2 for a bad option or a source that was ignored (each named\n"
        "on stderr; the table then shows what is used without it).\n";

static json_t *entry_json(const struct vcs_entry *e) {
        _cleanup_free_ char *options = e->options ? km_options_mask(e->options) : NULL;
        return json_pack("{s:s, s:s?, s:s, s:b, s:s?, s:b, s:s}", "type", e->type, "image", e->image, "policy",
                         vcs_policy_to_string(e->policy), "daemon", e->daemon, "options", options, "privileged",
                         e->privileged, "source", e->source);
}

static int print_table(struct cli *cli, const struct vcs_map *m) {
        if (cli->json) {
                json_t *a = json_array();

                for (size_t i = 0; a && i < m->n; i++)
                        if (json_array_append_new(a, entry_json(&m->entries[i])) < 0) {
                                json_decref(a);
                                a = NULL;
                        }
                return cli_print_json(a) < 0 ? EXIT_USAGE : EXIT_OK;
        }
        printf("%-20s %-40s %-9s %-6s %s\n", "TYPE", "IMAGE", "POLICY", "DAEMON", "SOURCE");
        for (size_t i = 0; i < m->n; i++) {
                const struct vcs_entry *e = &m->entries[i];
                _cleanup_free_ char *options = e->options ? km_options_mask(e->options) : NULL;
                char shown[PATH_MAX + 16];

                printf("%-20s %-40s %-9s %-6s %s", e->type, e->image ?: "-", vcs_policy_to_string(e->policy),
                       e->daemon ? "yes" : "no", str_printable(e->source, shown, sizeof(shown)));
                /* Last, so that the columns of tables without them stay as they were. */
                if (options)
                        printf(" (options %s)", options);
                if (e->privileged)
                        fputs(" (privileged)", stdout);
                putchar('\n');
        }
        return EXIT_OK;
}

int cmd_vcs(struct cli *cli, int argc, char **argv) {
        struct vcs_map_sources s = {
                .command_line = cli->vcs_options,
                .n_command_line = cli->n_vcs_options,
        };
        _cleanup_(vcs_map_freep) struct vcs_map *m = NULL;
        struct km_error err = {};
        int optind_ret, r;
        bool pull = argc >= 2 && streq(argv[1], "pull");

        if (argc < 2 || streq(argv[1], "-h") || streq(argv[1], "--help")) {
                fputs(vcs_help, argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_USAGE : EXIT_OK;
        }
        if (!streq(argv[1], "list") && !pull) {
                cli_error("vcs: unknown command '%s'\nTry 'kubemount vcs --help'.", argv[1]);
                return EXIT_USAGE;
        }
        if (!pull) {
                r = cli_simple_options(cli, argc - 1, argv + 1, vcs_help, &optind_ret);
                if (r != 0)
                        return r > 0 ? EXIT_OK : EXIT_USAGE;
                if (optind_ret < argc - 1) {
                        cli_error("vcs list: unexpected argument '%s'", argv[1 + optind_ret]);
                        return EXIT_USAGE;
                }
        }
        vcs_map_sources_from_env(&s);
        r = vcs_map_load(&s, &m, &err);
        if (r < 0) {
                cli_error("%s", r == -ENOMEM ? "out of memory" : err.message);
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < m->n_warnings; i++)
                cli_error("warning: %s", m->warnings[i]);
        if (pull)
                return cli_pull_all(cli, argc - 1, argv + 1, m);
        r = print_table(cli, m);
        return r != EXIT_OK ? r : m->n_warnings ? EXIT_USAGE : EXIT_OK;
}
