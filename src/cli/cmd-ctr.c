/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount agent, ps, exec, stop, rm, logs, gc: detached VCS containers. */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <termios.h>

#include "cli.h"

enum { EXIT_CTR_FAILED = 125 };

static struct km_agent *agent_or_fail(struct cli *cli) {
        struct km_agent *a = NULL;

        if (km_agent_new(cli->host, NULL, &a) < 0)
                cli_error("out of memory");
        return a;
}

/* One NAME and optional flags: -f (rm), --timeout SECS (stop). */
static int name_options(int argc, char **argv, const char *help, bool *force, int *timeout_ms, const char **name) {
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "force", no_argument, NULL, 'f' },
                { "timeout", required_argument, NULL, 't' },
                {},
        };
        int c;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, force ? "+hf" : timeout_ms ? "+ht:" : "+h", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        return 1;
                case 'f':
                        if (!force)
                                goto bad;
                        *force = true;
                        break;
                case 't': {
                        char *end;
                        double s = strtod(optarg, &end);
                        if (!timeout_ms || end == optarg || *end || s < 0 || s > INT_MAX / 1000) {
                                cli_error("%s: invalid timeout '%s'", argv[0], optarg);
                                return -EINVAL;
                        }
                        *timeout_ms = (int)(s * 1000);
                        break;
                }
                default:
                bad:
                        cli_error("%s: unrecognized option '%s'", argv[0], argv[optind - 1]);
                        return -EINVAL;
                }
        if (optind != argc - 1) {
                cli_error("%s: exactly one container name expected", argv[0]);
                return -EINVAL;
        }
        *name = argv[optind];
        return 0;
}

int cmd_agent(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount agent [--state-dir DIR] [--idle-exit SECS]\n"
                "\n"
                "Serve VCS container requests on STATE_DIR/agent.sock, in the foreground.\n"
                "The agent makes every container from a small template mount namespace,\n"
                "keeps them in cgroups of their own, and owns the state directory.  Run it\n"
                "from kubemount-agent.service; 'kubemount run' starts one when none runs:\n"
                "the installed " KM_BINDIR
                "/kubemount (or $KUBEMOUNT_AGENT_BINARY, owned\n"
                "by root), with a fixed PATH and environment, umask 022 and soft rlimits\n"
                "reset, whoever the caller is (kubemount(8)).\n"
                "\n"
                "  --state-dir DIR     default $KUBEMOUNT_STATE_DIR or /run/kubemount\n"
                "  --idle-exit SECS    exit after SECS with no container and no client\n";
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "state-dir", required_argument, NULL, 's' },
                { "idle-exit", required_argument, NULL, 'i' },
                {},
        };
        const char *state_dir = NULL, *ready = getenv("KUBEMOUNT_READY_FD");
        struct km_error err = {};
        int c, idle = 0, r;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        return 0;
                case 's':
                        state_dir = optarg;
                        break;
                case 'i':
                        idle = atoi(optarg);
                        break;
                default:
                        cli_error("agent: unrecognized option '%s'", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        unsetenv("KUBEMOUNT_READY_FD");
        /* Notices too: the containers started privileged and the mount broker's decisions are the audit trail. */
        if (cli->verbose == 0)
                cli_log_setup_level(KM_LOG_NOTICE);
        r = km_agent_serve(state_dir, idle, ready ? atoi(ready) : -1, &err);
        if (r == -EALREADY)
                return 0; /* another agent serves: fine for whoever started us */
        if (r < 0)
                cli_error("agent: %s", err.message);
        return r < 0 ? EXIT_NO : 0;
}

/*
 * "running", "exited 1", ...; ",privileged" after it for a container with host
 * capabilities (state.json's "privileged": absent in an older agent's, then nothing).
 */
static void row_status(json_t *c, char *buf, size_t size) {
        json_t *code = json_object_get(c, "exit_code");
        const char *mark = json_is_true(json_object_get(c, "privileged")) ? ",privileged" : "";

        if (json_is_true(json_object_get(c, "running")))
                snprintf(buf, size, "running%s", mark);
        else if (json_is_integer(code))
                snprintf(buf, size, "exited %lld%s", (long long)json_integer_value(code), mark);
        else
                snprintf(buf, size, "%.32s%s", json_string_value(json_object_get(c, "status")) ?: "unknown", mark);
}

static void print_row(json_t *c, int name_width, int status_width) {
        json_t *cmd = json_object_get(c, "command"), *v;
        json_t *mount = json_object_get(c, "mount");
        const char *digest = json_string_value(json_object_get(c, "digest"));
        char status[64];
        size_t i;

        row_status(c, status, sizeof(status));
        printf("%-*s %-8lld %-*s %-20s %-19.19s", name_width, json_string_value(json_object_get(c, "name")) ?: "?",
               (long long)json_integer_value(json_object_get(c, "pid")), status_width, status,
               json_string_value(json_object_get(c, "created")) ?: "", digest ?: "-");
        if (mount)
                /* A routed mount's container: what it serves says more than its idle command. */
                printf(" mount %s on %s", json_string_value(json_object_get(mount, "type")) ?: "?",
                       json_string_value(json_object_get(mount, "target")) ?: "?");
        else
                json_array_foreach(cmd, i, v) printf(" %s", json_string_value(v) ?: "");
        putchar('\n');
}

int cmd_ps(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount ps [--json] [-a|--all]\n"
                "\n"
                "List VCS containers: name, PID 1 (host pid), status, creation time, the\n"
                "image's manifest digest (shortened; --json has it whole, and the reference),\n"
                "and the command, or for a container that serves a routed mount, the mount\n"
                "(\"mount TYPE on TARGET\").  Exited ones are listed with -a.  The status of\n"
                "a privileged container (run --privileged, or a mapping entry's \"privileged\":\n"
                "true: host capabilities, its own mounts) ends in \",privileged\"; --json has\n"
                "\"privileged\" and the types the mount broker makes for it, \"mounts_allowed\".\n";
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'J' },
                { "all", no_argument, NULL, 'a' },
                {},
        };
        _cleanup_free_ char *text = NULL;
        struct km_agent *a;
        struct km_error err = {};
        bool all = false;
        int c, r;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+ha", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        return 0;
                case 'J':
                        cli->json = true;
                        break;
                case 'a':
                        all = true;
                        break;
                default:
                        cli_error("ps: unrecognized option '%s'", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        if (!(a = agent_or_fail(cli)))
                return EXIT_USAGE;
        r = km_vcs_list(a, &text, &err);
        km_agent_free(a);
        if (r < 0) {
                cli_error("ps: %s", err.message);
                return EXIT_USAGE;
        }
        json_t *doc = json_loads(text, 0, NULL), *list = json_object_get(doc, "containers"), *e;
        size_t i;
        if (cli->json) {
                json_t *out = json_array();
                json_array_foreach(list, i, e) if (all || json_is_true(json_object_get(e, "running")))
                        json_array_append(out, e);
                json_decref(doc);
                return cli_print_json(out) < 0 ? EXIT_USAGE : 0;
        }
        /* As wide as the longest name and status shown (a routed mount's container's name is up to 63). */
        int width = 24, status_width = 12;
        json_array_foreach(list, i, e) {
                size_t n = strlen(json_string_value(json_object_get(e, "name")) ?: "");
                char status[64];

                if (!all && !json_is_true(json_object_get(e, "running")))
                        continue;
                row_status(e, status, sizeof(status));
                if (n > (size_t)width)
                        width = (int)n;
                if (strlen(status) > (size_t)status_width)
                        status_width = (int)strlen(status);
        }
        printf("%-*s %-8s %-*s %-20s %-19s %s\n", width, "NAME", "PID", status_width, "STATUS", "CREATED", "IMAGE",
               "COMMAND");
        json_array_foreach(list, i, e) if (all || json_is_true(json_object_get(e, "running")))
                print_row(e, width, status_width);
        json_decref(doc);
        return 0;
}

int cmd_exec(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount exec [-i] [-t] [-e K=V]... [-w DIR] NAME -- COMMAND [ARGS...]\n"
                "\n"
                "Run COMMAND in a running VCS container's namespaces, with its capabilities,\n"
                "seccomp filter and no_new_privs.  Output is streamed; the exit status is\n"
                "COMMAND's (128+N for signal N; 125 if kubemount failed).\n"
                "\n"
                "  -i, --interactive   pass stdin (else /dev/null)\n"
                "  -t, --tty           stdin is a terminal: give COMMAND one of the container's\n"
                "                      own, relayed to it (without -t a terminal of ours\n"
                "                      reaches COMMAND only through a pipe)\n"
                "  -e, --env K=V       the environment (replaces the container's when given)\n"
                "  -w, --cwd DIR       working directory in the container\n";
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },      { "interactive", no_argument, NULL, 'i' },
                { "tty", no_argument, NULL, 't' },       { "env", required_argument, NULL, 'e' },
                { "cwd", required_argument, NULL, 'w' }, {},
        };
        bool interactive = false, tty = false;
        const char *cwd = NULL;
        char **env = NULL;
        size_t n_env = 0;
        struct km_agent *a;
        struct km_error err = {};
        int c, r, status = -1;
        _cleanup_close_ int null = -EBADF;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hite:w:", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        free(env);
                        return 0;
                case 'i':
                        interactive = true;
                        break;
                case 't':
                        tty = true;
                        break;
                case 'e': {
                        char **e = realloc(env, sizeof(char *) * (n_env + 2));
                        if (!e || !strchr(optarg, '=')) {
                                cli_error("exec: invalid environment '%s'", optarg);
                                free(e ? e : env);
                                return EXIT_CTR_FAILED;
                        }
                        env = e;
                        env[n_env++] = optarg;
                        env[n_env] = NULL;
                        break;
                }
                case 'w':
                        cwd = optarg;
                        break;
                default:
                        cli_error("exec: unrecognized option '%s'", argv[optind - 1]);
                        free(env);
                        return EXIT_CTR_FAILED;
                }
        const char *name = optind < argc ? argv[optind++] : NULL;
        if (optind < argc && streq(argv[optind], "--"))
                optind++;
        if (!name || optind >= argc) {
                cli_error("exec: usage: kubemount exec NAME -- COMMAND");
                free(env);
                return EXIT_CTR_FAILED;
        }
        if (tty && !isatty(STDIN_FILENO)) {
                cli_error("exec: -t: stdin is not a terminal");
                free(env);
                return EXIT_CTR_FAILED;
        }
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int fds[3] = { interactive ? STDIN_FILENO : null, STDOUT_FILENO, STDERR_FILENO };
        if (!(a = agent_or_fail(cli))) {
                free(env);
                return EXIT_CTR_FAILED;
        }
        if (tty)
                fds[0] = STDIN_FILENO;
        r = km_vcs_exec_fds(a, name, argv + optind, env, cwd, tty, fds, &status, &err);
        km_agent_free(a);
        free(env);
        if (r < 0) {
                cli_error("exec: %s", err.message);
                return EXIT_CTR_FAILED;
        }
        return status < 0 ? EXIT_CTR_FAILED : status;
}

int cmd_stop(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount stop [--timeout SECS] NAME\n"
                "\n"
                "SIGTERM to the container's PID 1, which forwards it to the command;\n"
                "SIGKILL after SECS (default 10).  Prints the exit status.\n";
        struct km_error err = {};
        const char *name;
        int ms = 10000, status = -1, r = name_options(argc, argv, help, NULL, &ms, &name);
        struct km_agent *a;

        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (!(a = agent_or_fail(cli)))
                return EXIT_USAGE;
        r = km_vcs_stop(a, name, ms, &status, &err);
        km_agent_free(a);
        if (r < 0) {
                cli_error("stop: %s", err.message);
                return EXIT_NO;
        }
        if (status >= 0)
                printf("%s exited %d\n", name, status);
        return 0;
}

int cmd_rm(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount rm [-f|--force] NAME\n"
                "\n"
                "Remove a stopped container's state and log; -f kills it first.\n";
        struct km_error err = {};
        const char *name;
        bool force = false;
        int r = name_options(argc, argv, help, &force, NULL, &name);
        struct km_agent *a;

        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (!(a = agent_or_fail(cli)))
                return EXIT_USAGE;
        r = km_vcs_remove(a, name, force, &err);
        km_agent_free(a);
        if (r < 0)
                cli_error("rm: %s", err.message);
        return r < 0 ? EXIT_NO : 0;
}

int cmd_logs(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount logs NAME\n"
                "\n"
                "Print a detached container's output (the last 1-2 MiB of it).\n";
        struct km_error err = {};
        const char *name;
        int fds[2], r = name_options(argc, argv, help, NULL, NULL, &name);
        struct km_agent *a;

        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (!(a = agent_or_fail(cli)))
                return EXIT_USAGE;
        r = km_vcs_logs(a, name, fds, &err);
        km_agent_free(a);
        if (r < 0) {
                cli_error("logs: %s", err.message);
                return EXIT_NO;
        }
        fflush(stdout);
        for (int i = 0; i < r; i++) {
                char buf[65536];
                ssize_t n;
                while ((n = read(fds[i], buf, sizeof(buf))) > 0)
                        if (write(STDOUT_FILENO, buf, n) != n)
                                break;
                close(fds[i]);
        }
        return 0;
}

int cmd_gc(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount gc [--json]\n"
                "\n"
                "Reconcile the state directory with the kernel: containers whose PID 1 is\n"
                "gone are marked exited, unreadable state files are rebuilt or removed, and\n"
                "FUSE mounts below the kubelet dir whose daemon is gone are unmounted; one\n"
                "that does not answer within 2 s (a stopped daemon, a hung server) is\n"
                "reported as hung-fuse and left mounted.  The empty cgroups that host FUSE\n"
                "helpers' ended daemons leave below $KUBEMOUNT_CGROUP_PARENT are removed.\n";
        _cleanup_free_ char *text = NULL;
        struct km_error err = {};
        struct km_agent *a;
        int optind_ret, r = cli_simple_options(cli, argc, argv, help, &optind_ret);

        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (!(a = agent_or_fail(cli)))
                return EXIT_USAGE;
        r = km_vcs_gc(a, cli->kubelet_dir, &text, &err);
        km_agent_free(a);
        if (r < 0) {
                cli_error("gc: %s", err.message);
                return EXIT_NO;
        }
        json_t *doc = json_loads(text, 0, NULL), *e;
        size_t i;
        if (cli->json)
                return cli_print_json(json_incref(json_object_get(doc, "actions"))) < 0 ? EXIT_USAGE
                                                                                        : (json_decref(doc), 0);
        json_array_foreach(json_object_get(doc, "actions"), i, e)
                printf("%s %s%s%s\n", json_string_value(json_object_get(e, "action")),
                       json_string_value(json_object_get(e, "name")), json_object_get(e, "detail") ? ": " : "",
                       json_string_value(json_object_get(e, "detail")) ?: "");
        json_decref(doc);
        return 0;
}
