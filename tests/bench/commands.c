/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench: spawning the commands being timed (stderr collected in
 * one log in the work directory, shown when a command fails) and finding
 * the util-linux peers.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

int errlog_fd = -1; /* stderr of every spawned command goes here */
char **env_plain, **env_compat;

char **make_env(const char *extra1, const char *extra2) {
        size_t n = 0, k = 0;
        char **e;

        while (environ[n])
                n++;
        e = calloc(n + 4, sizeof(char *));
        if (!e)
                abort();
        for (size_t i = 0; i < n; i++)
                if (strncmp(environ[i], "KUBEMOUNT_", 10) != 0 && strncmp(environ[i], "LC_ALL=", 7) != 0)
                        e[k++] = environ[i];
        e[k++] = (char *)"LC_ALL=C";
        if (extra1)
                e[k++] = strdup(extra1);
        if (extra2)
                e[k++] = strdup(extra2);
        return e;
}

void show_errlog(void) {
        char buf[2048];
        off_t end = lseek(errlog_fd, 0, SEEK_END);
        off_t start = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
        ssize_t n = pread(errlog_fd, buf, sizeof(buf) - 1, start);
        if (n > 0) {
                buf[n] = '\0';
                fprintf(stderr, "---- stderr of the commands (tail) ----\n%s\n----\n", buf);
        }
}

/*
 * Spawns argv (PATH searched) with stdin /dev/null, stdout out_fd or
 * /dev/null, stderr err_fd or the log; waits; returns the exit status (or -1).
 */
int run_fds(char *const argv[], char **envp, int out_fd, int err_fd) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status, r;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (out_fd >= 0)
                posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        else
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, err_fd >= 0 ? err_fd : errlog_fd, 2);
        r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0) {
                fail("spawn %s: %s", argv[0], strerror(r));
                return -1;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -1;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int run_env(char *const argv[], char **envp, int out_fd) {
        return run_fds(argv, envp, out_fd, -1);
}

static int run(char *const argv[]) {
        return run_env(argv, env_plain, -1);
}

bool run_ok(char *const argv[]) {
        int r = run(argv);
        if (r != 0) {
                char line[512] = "";
                for (size_t i = 0; argv[i]; i++) {
                        strncat(line, argv[i], sizeof(line) - strlen(line) - 2);
                        strcat(line, " ");
                }
                fail("command failed (exit %d): %s", r, line);
                show_errlog();
                return false;
        }
        return true;
}

/* The output of a command, for ldd and strace counts. */
char *capture(char *const argv[], char **envp) {
        char path[] = "/tmp/kubemount-bench-out.XXXXXX";
        int fd = mkstemp(path);
        char *buf;
        off_t n;

        if (fd < 0)
                return NULL;
        unlink(path);
        run_env(argv, envp, fd);
        n = lseek(fd, 0, SEEK_END);
        buf = calloc(1, (size_t)n + 1);
        if (buf && pread(fd, buf, (size_t)n, 0) < 0)
                buf[0] = '\0';
        close(fd);
        return buf;
}

/* The absolute path of a program in $PATH (malloc'ed), or NULL. */
char *find_program(const char *name) {
        const char *path = getenv("PATH");
        char buf[4096];

        if (!path)
                path = "/usr/sbin:/usr/bin:/sbin:/bin";
        while (*path) {
                size_t n = strcspn(path, ":");
                snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
                if (access(buf, X_OK) == 0)
                        return strdup(buf);
                path += n + (path[n] == ':');
        }
        return NULL;
}

bool have_program(const char *name) {
        char *p = find_program(name);
        free(p);
        return p != NULL;
}

/*
 * The peers by absolute path, so that neither we nor nsenter walk $PATH
 * (a kubelet's nsenter mounter passes the host's absolute mount path too).
 */
char *NSENTER, *MOUNT, *UMOUNT, *FINDMNT;

bool find_peers(void) {
        NSENTER = find_program("nsenter");
        MOUNT = find_program("mount");
        UMOUNT = find_program("umount");
        FINDMNT = find_program("findmnt");
        if (!NSENTER || !MOUNT || !UMOUNT || !FINDMNT) {
                fprintf(stderr, "kubemount-bench: nsenter, mount, umount and findmnt (util-linux) are needed\n");
                return false;
        }
        return true;
}

char **env_with(char **base, const char *a, const char *b) {
        size_t n = 0;
        char **e;

        while (base[n])
                n++;
        e = calloc(n + 3, sizeof(char *));
        if (!e)
                abort();
        memcpy(e, base, n * sizeof(char *));
        e[n] = strdup(a);
        e[n + 1] = b ? strdup(b) : NULL;
        return e;
}
