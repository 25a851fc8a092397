/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsenter for legacy kubelets and CSI drivers: util-linux 2.38 nsenter's
 * options, messages and exit codes, with mount/umount routed through
 * libkubemount and the kubelet's probes answered in-process (route.c).
 */
#include <err.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "nsenter-args.h"
#include "route.h"
#include "sd-protocol.h"

static const char usage_text[] =
        "\nUsage:\n"
        " %s [options] [<program> [<argument>...]]\n"
        "\n"
        "Run a program with namespaces of other processes.\n"
        "kubemount's drop-in nsenter: mount and umount in the entered mount namespace go\n"
        "through libkubemount; findmnt/realpath/stat probes are answered in-process.\n"
        "\n"
        "Options:\n"
        " -a, --all              enter all namespaces\n"
        " -t, --target <pid>     target process to get namespaces from\n"
        " -m, --mount[=<file>]   enter mount namespace\n"
        " -u, --uts[=<file>]     enter UTS namespace (hostname etc)\n"
        " -i, --ipc[=<file>]     enter System V IPC namespace\n"
        " -n, --net[=<file>]     enter network namespace\n"
        " -p, --pid[=<file>]     enter pid namespace\n"
        " -C, --cgroup[=<file>]  enter cgroup namespace\n"
        " -U, --user[=<file>]    enter user namespace\n"
        " -T, --time[=<file>]    enter time namespace\n"
        " -S, --setuid <uid>     set uid in entered namespace\n"
        " -G, --setgid <gid>     set gid in entered namespace\n"
        "     --preserve-credentials do not touch uids or gids\n"
        " -r, --root[=<dir>]     set the root directory\n"
        " -w, --wd[=<dir>]       set the working directory\n"
        " -W, --wdns <dir>       set the working directory in namespace\n"
        " -F, --no-fork          do not fork before exec'ing <program>\n"
        " -Z, --follow-context   accepted; SELinux contexts are not changed\n"
        "\n"
        " -h, --help             display this help\n"
        " -V, --version          display version\n"
        "\n"
        "Exit status: 1 for nsenter's own errors, 126/127 when the program cannot be\n"
        "executed, else the program's status (or its signal, re-raised).\n";

static int ns_fd[NS_KINDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static int root_fd = -1, wd_fd = -1;

/* open_target_fd(): FILE, else /proc/PID/TYPE; errors end nsenter. */
static void open_target(int *fd, const char *type, const char *path, pid_t pid) {
        char buf[PATH_MAX];

        if (!path && pid) {
                snprintf(buf, sizeof(buf), "/proc/%u/%s", (unsigned)pid, type);
                path = buf;
        }
        if (!path)
                errx(EXIT_FAILURE, "neither filename nor target pid supplied for %s", type);
        if (*fd >= 0)
                close(*fd);
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
                err(EXIT_FAILURE, "cannot open %s", path);
}

static bool usable_namespace(pid_t target, enum ns_kind ns) {
        char path[PATH_MAX];
        struct stat mine, theirs;

        snprintf(path, sizeof(path), "/proc/%u/%s", (unsigned)getpid(), ns_table[ns].name);
        if (stat(path, &mine) < 0 && errno == ENOENT)
                return false; /* the kernel lacks it */
        if (ns == NS_USER) {
                /* setns() into one's own user namespace fails: skip it. */
                snprintf(path, sizeof(path), "/proc/%u/%s", (unsigned)target, ns_table[ns].name);
                if (stat(path, &theirs) != 0)
                        err(EXIT_FAILURE, "stat of %s failed", path);
                if (mine.st_ino == theirs.st_ino)
                        return false;
        }
        return true;
}

/*
 * The parent waits and leaves with the child's status or signal; PROGRAM
 * (argc words) is the child's, whose secrets need not stay in the parent.
 */
static void continue_as_child(int argc, char **program) {
        int status = 0, code, sig;
        pid_t child, r;

        signal(SIGCHLD, SIG_DFL);
        child = fork();
        if (child < 0)
                err(EXIT_FAILURE, "fork failed");
        if (child == 0)
                return;
        route_scrub(argc, program);
        for (;;) {
                r = waitpid(child, &status, WUNTRACED);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r == child && WIFSTOPPED(status)) {
                        kill(getpid(), SIGSTOP);
                        kill(child, SIGCONT);
                } else
                        break;
        }
        code = exit_code_from_status(status, &sig);
        if (!sig)
                exit(code);
        kill(getpid(), sig); /* die the way the child did */
        exit(EXIT_FAILURE);
}

static void exec_program(char **argv) {
        execvp(argv[0], argv);
        err(errno == ENOENT ? 127 : 126, "failed to execute %s", argv[0]);
}

static void exec_shell(void) {
        const char *shell = getenv("SHELL");
        char arg0[PATH_MAX];

        if (!shell)
                shell = "/bin/sh";
        snprintf(arg0, sizeof(arg0), "-%s", strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell);
        execl(shell, arg0, (char *)NULL);
        err(errno == ENOENT ? 127 : 126, "failed to execute %s", shell);
}

/*
 * The library's warnings (a FUSE daemon left in the caller's cgroup) reach the
 * caller; its events (a mount, a refusal) the journal, if one listens: never
 * nsenter's own output.
 */
static void log_warning(int level, const char *message, void *userdata _unused_) {
        const char *const *fields = km_log_fields();

        if (fields) {
                if (journal_present())
                        (void)journal_send(level, message, fields);
                return;
        }
        fprintf(stderr, "%s: warning: %s\n", program_invocation_short_name, message);
}

int main(int argc, char **argv) {
        struct nsenter_args a;
        bool setgroups_failed = false, mount_entered;
        int do_fork = -1;

        km_log_set(log_warning, NULL, KM_LOG_WARNING);

        /*
         * Silently first: nsenter would have stopped at a failed open before
         * getopt complained about a later word.
         */
        nsenter_args_parse(argc, argv, false, &a);
        /* Replay the opens that nsenter makes while it parses, in order. */
        for (size_t i = 0; i < a.n_events; i++) {
                const struct ns_event *e = &a.events[i];
                if (e->kind == EV_OPEN_NS)
                        open_target(&ns_fd[e->ns], ns_table[e->ns].name, e->path, a.target_pid);
                else if (e->kind == EV_OPEN_ROOT)
                        open_target(&root_fd, "root", e->path, a.target_pid);
                else
                        open_target(&wd_fd, "cwd", e->path, a.target_pid);
        }
        if (a.failed) {
                if (a.try_help) {
                        /* The opens went well: the same parse again, for getopt's message. */
                        nsenter_args_done(&a);
                        nsenter_args_parse(argc, argv, true, &a);
                }
                if (a.err.message[0])
                        warnx("%s", a.err.message);
                if (a.try_help)
                        fprintf(stderr, "Try '%s --help' for more information.\n", program_invocation_short_name);
                return EXIT_FAILURE;
        }
        if (a.help) {
                printf(usage_text, program_invocation_short_name);
                return EXIT_SUCCESS;
        }
        if (a.version) {
                printf("%s from kubemount %s (util-linux 2.38 compatible)\n", program_invocation_short_name,
                       km_version());
                return EXIT_SUCCESS;
        }

        if (a.all) {
                if (!a.target_pid)
                        errx(EXIT_FAILURE, "no target PID specified for --all");
                for (int ns = 0; ns < NS_KINDS; ns++)
                        if (ns_fd[ns] < 0 && usable_namespace(a.target_pid, ns))
                                a.namespaces |= ns_table[ns].clone_flag;
        }
        for (int ns = 0; ns < NS_KINDS; ns++)
                if (a.namespaces & ns_table[ns].clone_flag)
                        open_target(&ns_fd[ns], ns_table[ns].name, NULL, a.target_pid);
        if (a.do_root)
                open_target(&root_fd, "root", NULL, a.target_pid);
        if (a.do_wd)
                open_target(&wd_fd, "cwd", NULL, a.target_pid);
        mount_entered = ns_fd[NS_MNT] >= 0;

        if (ns_fd[NS_USER] >= 0 && !a.preserve_credentials) {
                a.force_uid = a.force_gid = true;
                setgroups_failed = setgroups(0, NULL) != 0; /* tried again after entering */
        }

        /*
         * Two passes: the user namespace last when it drops privileges
         * (pass 0 skips it), first when it grants them (its setns in pass 0
         * fails and is retried in pass 1).
         */
        for (int pass = 0; pass < 2; pass++)
                for (int ns = 1 - pass; ns < NS_KINDS; ns++) {
                        if (ns_fd[ns] < 0)
                                continue;
                        if (ns == NS_PID && do_fork == -1)
                                do_fork = 1;
                        if (setns(ns_fd[ns], ns_table[ns].clone_flag) < 0) {
                                if (pass != 0)
                                        err(EXIT_FAILURE, "reassociate to namespace '%s' failed", ns_table[ns].name);
                                continue;
                        }
                        close(ns_fd[ns]);
                        ns_fd[ns] = -1;
                }
        if (a.no_fork)
                do_fork = 0;

        if (root_fd >= 0 && wd_fd < 0 && !a.wdns) {
                wd_fd = open(".", O_RDONLY | O_CLOEXEC);
                if (wd_fd < 0)
                        err(EXIT_FAILURE, "cannot open current working directory");
        }
        if (root_fd >= 0) {
                if (fchdir(root_fd) < 0)
                        err(EXIT_FAILURE, "change directory by root file descriptor failed");
                if (chroot(".") < 0)
                        err(EXIT_FAILURE, "chroot failed");
                if (chdir("/") < 0)
                        err(EXIT_FAILURE, "cannot change directory to %s", "/");
                close(root_fd);
        }
        if (a.wdns) {
                wd_fd = open(a.wdns, O_RDONLY | O_CLOEXEC);
                if (wd_fd < 0)
                        err(EXIT_FAILURE, "cannot open current working directory");
        }
        if (wd_fd >= 0) {
                if (fchdir(wd_fd) < 0)
                        err(EXIT_FAILURE, "change directory by working directory file descriptor failed");
                close(wd_fd);
        }

        if (do_fork == 1)
                continue_as_child(argc - a.program, argv + a.program);

        if (a.force_gid && setgroups(0, NULL) != 0 && setgroups_failed)
                err(EXIT_FAILURE, "setgroups failed");
        if (a.force_gid && setgid(a.gid) < 0)
                err(EXIT_FAILURE, "setgid failed");
        if (a.force_uid && setuid(a.uid) < 0)
                err(EXIT_FAILURE, "setuid failed");

        if (a.program < argc) {
                int status = route_program(argc - a.program, argv + a.program, mount_entered);
                if (status >= 0)
                        return status;
                exec_program(argv + a.program);
        }
        exec_shell();
}
