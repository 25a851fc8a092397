/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount run: a VCS container, short-lived or detached. */
#include <getopt.h>
#include <fcntl.h>
#include <limits.h>

#include "cli.h"
#include "mount-flags.h"
#include "secrets.h"

static const char help[] =
        "Usage: kubemount run --rootfs DIR [OPTIONS] -- COMMAND [ARGS...]\n"
        "       kubemount run --image REF [OPTIONS] [-- COMMAND [ARGS...]]\n"
        "\n"
        "Run volume client software (mount.nfs, sshfs, bindfs, mkfs.xfs, ...) from a\n"
        "root filesystem, in new mount, pid, uts and ipc namespaces, with no_new_privs\n"
        "and the default seccomp filter.  The default is unprivileged: the command runs\n"
        "in a user namespace of its own (its root is an unprivileged host id) with the\n"
        "VCS capability set there and none in the host's, and each mount(2) or\n"
        "umount2(2) it makes is made by kubemount in the host after a policy check:\n"
        "only the types --allow-mount names, only at the paths --mount-target names\n"
        "(and below them), nosuid and nodev forced; a refusal is EPERM and a line in 'kubemount logs NAME' (see\n"
        "docs/SECURITY.md).  With --privileged it holds the VCS capability set in the\n"
        "host's user namespace instead and makes its own mounts.  Mounts made below a\n"
        "--mount bound rshared appear in the host and in pods.\n"
        "Containers are made by the kubemount agent, which this starts when needed\n"
        "(from the host's pid namespace); a containerized caller needs it running.\n"
        "\n"
        "Options:\n"
        "  --rootfs DIR           the root filesystem (a host path), used as it is:\n"
        "                         what the container writes lands in DIR\n"
        "  --image REF            an image's instead, pulled when the store lacks it; its\n"
        "                         Entrypoint+Cmd, Env and WorkingDir are the defaults.\n"
        "                         The container writes to a layer of its own (overlay),\n"
        "                         removed with it; the image stays as pulled\n"
        "  --insecure-registry, --certs-dir, --authfile, --platform: as for pull\n"
        "  --name NAME            the container's name (default: generated)\n"
        "  -d, --detach           keep it running; print its name; output goes to\n"
        "                         'kubemount logs NAME'\n"
        "  --mount SRC:DST[:PROPAGATION][:ro]\n"
        "                         bind host SRC on DST (made in the container when\n"
        "                         missing); PROPAGATION rshared (default), rslave or\n"
        "                         private.  Below the kubelet dir (--kubelet-dir) SRC\n"
        "                         may not pass through a symlink or '..'\n"
        "  -e, --env K=V          set an environment variable\n"
        "  --net host|none        the host's network (default) or none\n"
        "  --host-dev             the host's /dev instead of a fresh one\n"
        "  --read-only            mount the root filesystem read-only\n"
        "  --allow-mount TYPE     let kubemount make mounts of TYPE (fuse.sshfs, nfs,\n"
        "                         tmpfs, ...) for the container; repeatable.  Default:\n"
        "                         none, every mount it asks for is refused\n"
        "  --mount-target PATH    let kubemount mount for the container at host PATH\n"
        "                         and below it (its path through its --mount);\n"
        "                         repeatable.  A pod's volume dir (KUBELET/pods/UID/\n"
        "                         volumes/PLUGIN/NAME) or a plugin's (KUBELET/plugins/\n"
        "                         NAME/X), never the kubelet's own dirs nor another\n"
        "                         running container's target.  Default: none\n"
        "  --privileged           the VCS capability set in the host's user namespace\n"
        "                         and mounts of its own, unchecked: a host root for\n"
        "                         whoever controls the image.  Only for clients that\n"
        "                         cannot work otherwise (an iSCSI initiator, reserved\n"
        "                         ports, raw devices); default: unprivileged\n"
        "  -w, --cwd DIR          working directory in the container (default /)\n"
        "  --timeout SECS         kill the container after SECS (exit status 124)\n"
        "  -i, --interactive      pass stdin (else the command reads /dev/null)\n"
        "  --runtime NAME         embedded (default); crun, runc or a path: run the\n"
        "                         same OCI bundle with that runtime\n"
        "  --print-spec           print the OCI config.json (a bundle for crun or runc)\n"
        "                         instead of running\n"
        "  -h, --help             show this help\n"
        "\n"
        "Exit status: the command's; 128+N if it was killed by signal N; 124 after\n"
        "--timeout; 125 if kubemount itself failed; 126 if COMMAND cannot be run;\n"
        "127 if it is not found.\n";

enum { EXIT_RUN_FAILED = 125 };

/* SRC:DST[:PROPAGATION][:ro] */
static int parse_mount(struct km_vcs *v, const char *arg) {
        _cleanup_free_ char *copy = strdup(arg);
        char *src, *dst, *opt, *save = NULL;
        enum km_propagation_kind kind = KM_MAKE_SHARED;
        bool ro = false;

        if (!copy)
                return -ENOMEM;
        src = strtok_r(copy, ":", &save);
        dst = strtok_r(NULL, ":", &save);
        if (!src || !dst)
                return -EINVAL;
        while ((opt = strtok_r(NULL, ":", &save))) {
                const struct mount_flag *f = mount_flag_lookup(opt);

                /* The bind is recursive: rshared, rslave or rprivate ("private" too, as documented). */
                if (f && f->propagation && f->kind != KM_MAKE_UNBINDABLE &&
                    ((f->ms & MS_REC) || f->kind == KM_MAKE_PRIVATE))
                        kind = f->kind;
                else if (streq(opt, "ro"))
                        ro = true;
                else
                        return -EINVAL;
        }
        _cleanup_free_ char *abs = path_absolute(src);
        return abs ? km_vcs_add_mount(v, abs, dst, kind, ro) : -ENOMEM;
}

static int parse_timeout(const char *s, int *ms) {
        char *end;
        double secs = strtod(s, &end);

        if (end == s || *end || secs <= 0 || secs > INT_MAX / 1000)
                return -EINVAL;
        *ms = (int)(secs * 1000);
        return 0;
}

int cmd_run(struct cli *cli, int argc, char **argv) {
        static const struct option run_opts[] = {
                { "image", required_argument, NULL, 'G' },        { "rootfs", required_argument, NULL, 'R' },
                { "name", required_argument, NULL, 'n' },         { "detach", no_argument, NULL, 'd' },
                { "mount", required_argument, NULL, 'm' },        { "env", required_argument, NULL, 'e' },
                { "net", required_argument, NULL, 'N' },          { "host-dev", no_argument, NULL, 'D' },
                { "read-only", no_argument, NULL, 'r' },          { "cwd", required_argument, NULL, 'w' },
                { "timeout", required_argument, NULL, 'T' },      { "interactive", no_argument, NULL, 'i' },
                { "runtime", required_argument, NULL, 'U' },      { "print-spec", no_argument, NULL, 'P' },
                { "privileged", no_argument, NULL, 'p' },         { "allow-mount", required_argument, NULL, 'A' },
                { "mount-target", required_argument, NULL, 'M' }, { "help", no_argument, NULL, 'h' },
        };
        struct option opts[ELEMENTSOF(run_opts) + 5];
        struct km_image_options *io = cli_image_options_new();
        const char *image = NULL;
        struct km_vcs *v = km_vcs_new();
        struct km_agent *agent = NULL;
        struct km_error err = {};
        bool detach = false, interactive = false, print_spec = false, said = false;
        int c, r = 0, ms, status = -1;

        memcpy(opts, run_opts, sizeof(run_opts));
        memcpy(opts + ELEMENTSOF(run_opts), cli_image_long_options, sizeof(struct option) * 5);
        if (!v || !io) {
                km_vcs_free(v);
                km_image_options_free(io);
                return EXIT_RUN_FAILED;
        }
        optind = 0;
        opterr = 0;
        while (r == 0 && (c = getopt_long(argc, argv, "+hde:w:i", opts, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        km_vcs_free(v);
                        km_image_options_free(io);
                        return 0;
                case 'G':
                        image = optarg;
                        break;
                case 'R':
                        r = km_vcs_set_rootfs(v, optarg);
                        break;
                case 'n':
                        r = km_vcs_set_name(v, optarg);
                        break;
                case 'd':
                        detach = true;
                        break;
                case 'm':
                        r = parse_mount(v, optarg);
                        break;
                case 'e':
                        r = km_vcs_add_env(v, optarg);
                        secret_scrub_word(optarg); /* copied: /proc/PID/cmdline shows the rest */
                        break;
                case 'N':
                        if (!streq(optarg, "host") && !streq(optarg, "none"))
                                r = -EINVAL;
                        km_vcs_set_host_network(v, streq(optarg, "host"));
                        break;
                case 'D':
                        km_vcs_set_host_dev(v, true);
                        break;
                case 'r':
                        km_vcs_set_readonly(v, true);
                        break;
                case 'A':
                        r = km_vcs_allow_mount(v, optarg);
                        said = r == -EINVAL;
                        if (said)
                                cli_error(
                                        "run: --allow-mount: '%s' is not a filesystem type name (at most 64 "
                                        "letters, digits and . _ + -)",
                                        optarg);
                        break;
                case 'M':
                        r = km_vcs_add_mount_target(v, optarg);
                        said = r == -EINVAL;
                        if (said)
                                cli_error("run: --mount-target: '%s' is not an absolute path", optarg);
                        break;
                case 'p':
                        km_vcs_set_privileged(v, true);
                        break;
                case 'w':
                        r = km_vcs_set_cwd(v, optarg);
                        break;
                case 'T':
                        r = parse_timeout(optarg, &ms);
                        if (r == 0)
                                km_vcs_set_timeout_ms(v, ms);
                        break;
                case 'i':
                        interactive = true;
                        break;
                case 'P':
                        print_spec = true;
                        break;
                case 'U':
                        r = km_vcs_set_runtime(v, optarg);
                        break;
                default:
                        if (c != '?' && (r = cli_image_option(io, c, optarg)) <= 0)
                                break;
                        cli_error("run: unrecognized option '%s'", argv[optind - 1]);
                        km_vcs_free(v);
                        km_image_options_free(io);
                        return EXIT_RUN_FAILED;
                }
                if (r < 0 && !said)
                        cli_error("run: %s: invalid value '%s'", argv[optind - 1], optarg ? optarg : "");
        }
        /* Mount sources below it are walked as mount targets are: no symlink, no "..". */
        if (r == 0)
                r = km_vcs_set_kubelet_dir(v, cli->kubelet_dir);
        if (r == 0 && optind >= argc && !image) {
                cli_error("run: no command given (kubemount run --rootfs DIR -- COMMAND)");
                r = -EINVAL;
        }
        if (r == 0 && optind < argc)
                r = km_vcs_set_command(v, argv + optind);
        if (r == 0) /* copied: /proc/PID/cmdline shows the rest */
                secret_scrub_argv(argv + optind);
        if (r == 0 && image) {
                km_image_options_set_progress_fd(io, STDERR_FILENO);
                r = km_vcs_set_image(cli->host, v, image, io, &err);
                if (r < 0) {
                        cli_error("run: image %s: %s", image, err.message);
                        km_vcs_free(v);
                        km_image_options_free(io);
                        return EXIT_RUN_FAILED;
                }
        }
        if (r == 0 && print_spec) {
                _cleanup_free_ char *json = km_vcs_config_json(v, &err);
                if (json)
                        puts(json);
                else
                        cli_error("run: %s", err.message);
                km_vcs_free(v);
                km_image_options_free(io);
                return json ? 0 : EXIT_RUN_FAILED;
        }
        if (r == 0)
                r = km_agent_new(cli->host, NULL, &agent);
        if (r == 0) {
                int fds[3] = { interactive ? STDIN_FILENO : -1, STDOUT_FILENO, STDERR_FILENO };
                _cleanup_close_ int null = interactive ? -EBADF : open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (!interactive)
                        fds[0] = null;
                _cleanup_free_ char *name = NULL;

                r = detach ? km_vcs_start(agent, v, &name, &err) : km_vcs_run_fds(agent, v, fds, &status, &err);
                if (r < 0)
                        cli_error("run: %s", err.message);
                else if (detach)
                        printf("%s\n", name);
        }
        km_agent_free(agent);
        km_vcs_free(v);
        km_image_options_free(io);
        return r < 0 ? EXIT_RUN_FAILED : detach ? 0 : status < 0 ? EXIT_RUN_FAILED : status;
}
