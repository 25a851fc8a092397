/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe: what a process inside a kubemount container sees, as key=value
 * lines (built static into the test rootfs by tests/lib/rootfs.sh).
 *
 *   probe              pid, ppid, uid, CapInh/CapPrm/CapEff/CapBnd/CapAmb,
 *                      NoNewPrivs, Seccomp (from /proc/self/status); the open
 *                      fds (fds=0 1 2, fd.N=readlink target, fdtype.N=dir|reg|
 *                      chr|fifo|sock|lnk|blk); clone3=ERRNO (ENOSYS expected
 *                      under kubemount's filter), kexec_load=ERRNO; whether
 *                      /proc/1/exe opens for writing (proc1_exe_write=ERRNO or
 *                      "opened": nothing is written); cwd and confined (below).
 *   probe cwd          cwd=getcwd() or error:ERRNO, confined=yes|no: whether
 *                      walking ".." from the working directory ends at this
 *                      process's "/" (no: the directory lies outside the
 *                      root, e.g. a leaked host fd), and entries= the first
 *                      names in ".".
 *   probe exe-write [--write DEV:INO] [SECS]
 *                      for SECS (default 0: one pass) tries to open every
 *                      /proc/PID/exe it can see (not its own) for writing,
 *                      also by reopening an O_PATH fd of /proc/1/exe held
 *                      from the first pass (the CVE-2019-5736 trick).  With
 *                      --write it writes a marker over the first bytes of a
 *                      file that opened, but only if that file is DEV:INO
 *                      (decimal st_dev:st_ino as the host's stat -c %d:%i
 *                      prints them): a copy of the kubemount binary made for
 *                      the test, so that nothing else can ever be damaged.
 *                      Prints exe_open.PID=ERRNO|opened, and at the end
 *                      exe_held=yes|no exe_opened=N exe_written=N.
 *
 * Exit status 0 (the output is the result), 2 on a usage error.
 *
 * Neither syscall probe can do harm when no filter stops it: clone3 gets a
 * NULL argument of size 0 (EINVAL), kexec_load unknown flags and too many
 * segments (EINVAL) -- an unfiltered kexec_load with 0 segments would unload
 * the machine's crash kernel.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static const char *errname(int e) {
        static char buf[32];
        const char *n = e ? strerrorname_np(e) : "0";

        if (n)
                return n;
        snprintf(buf, sizeof(buf), "E%d", e);
        return buf;
}

static const char *ftype(mode_t m) {
        switch (m & S_IFMT) {
        case S_IFDIR:
                return "dir";
        case S_IFREG:
                return "reg";
        case S_IFCHR:
                return "chr";
        case S_IFBLK:
                return "blk";
        case S_IFIFO:
                return "fifo";
        case S_IFSOCK:
                return "sock";
        case S_IFLNK:
                return "lnk";
        default:
                return "unknown";
        }
}

static void status_fields(void) {
        static const char *const keys[] = { "Uid",    "CapInh",     "CapPrm",  "CapEff",         "CapBnd",
                                            "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters" };
        char line[512];
        FILE *f = fopen("/proc/self/status", "re");

        if (!f) {
                printf("status=error:%s\n", errname(errno));
                return;
        }
        while (fgets(line, sizeof(line), f)) {
                char *colon = strchr(line, ':'), *v;

                if (!colon)
                        continue;
                *colon = '\0';
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        if (strcmp(line, keys[i]) != 0)
                                continue;
                        v = colon + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        /* Uid: real effective saved fs -> the effective one */
                        if (strcmp(keys[i], "Uid") == 0)
                                continue;
                        printf("%s=%s\n", keys[i], v);
                }
        }
        fclose(f);
}

static void fds(void) {
        DIR *d = opendir("/proc/self/fd");
        int list[1024], n = 0;
        struct dirent *e;

        if (!d) {
                printf("fds=error:%s\n", errname(errno));
                return;
        }
        while ((e = readdir(d)) && n < 1024) {
                char *end;
                long fd = strtol(e->d_name, &end, 10);

                if (*e->d_name == '.' || *end || fd == dirfd(d))
                        continue;
                list[n++] = (int)fd;
        }
        closedir(d);
        /* readdir order is ascending for /proc/self/fd, but be sure. */
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && list[j - 1] > list[j]; j--) {
                        int t = list[j];
                        list[j] = list[j - 1];
                        list[j - 1] = t;
                }
        printf("fds=");
        for (int i = 0; i < n; i++)
                printf("%s%d", i ? " " : "", list[i]);
        printf("\n");
        for (int i = 0; i < n; i++) {
                char path[64], target[PATH_MAX];
                struct stat st;
                ssize_t len;

                snprintf(path, sizeof(path), "/proc/self/fd/%d", list[i]);
                len = readlink(path, target, sizeof(target) - 1);
                target[len < 0 ? 0 : len] = '\0';
                printf("fd.%d=%s\n", list[i], len < 0 ? errname(errno) : target);
                printf("fdtype.%d=%s\n", list[i], fstat(list[i], &st) == 0 ? ftype(st.st_mode) : "error");
        }
}

static void syscalls(void) {
        long r;

        errno = 0;
        r = syscall(SYS_clone3, NULL, 0);
        printf("clone3=%s\n", r < 0 ? errname(errno) : "ok");
        errno = 0;
        /* 1000 segments > KEXEC_SEGMENT_MAX and an unknown flag: EINVAL if permitted */
        r = syscall(SYS_kexec_load, 0UL, 1000UL, NULL, 0x100UL);
        printf("kexec_load=%s\n", r < 0 ? errname(errno) : "ok");
}

static void proc1_exe(void) {
        int fd = open("/proc/1/exe", O_WRONLY | O_CLOEXEC);

        if (fd >= 0) {
                printf("proc1_exe_write=opened\n");
                close(fd); /* nothing written */
        } else {
                printf("proc1_exe_write=%s\n", errname(errno));
        }
}

static int cwd(void) {
        char buf[PATH_MAX];
        struct stat root, cur, up;
        int fd, depth = 0;
        bool confined = false;
        DIR *d;
        struct dirent *e;
        int shown = 0;

        if (getcwd(buf, sizeof(buf)))
                printf("cwd=%s\n", buf);
        else
                printf("cwd=error:%s\n", errname(errno));
        if (stat("/", &root) < 0) {
                printf("confined=error:%s\n", errname(errno));
                return 0;
        }
        fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                printf("confined=error:%s\n", errname(errno));
                return 0;
        }
        /* Up to the top: a directory whose ".." is itself.  Inside a chroot
         * or pivot_root that is "/", outside it the real root. */
        for (;;) {
                int next;

                if (fstat(fd, &cur) < 0 || fstatat(fd, "..", &up, 0) < 0 || ++depth > 4096)
                        break;
                if (cur.st_dev == up.st_dev && cur.st_ino == up.st_ino) {
                        confined = cur.st_dev == root.st_dev && cur.st_ino == root.st_ino;
                        break;
                }
                if (cur.st_dev == root.st_dev && cur.st_ino == root.st_ino) {
                        confined = true; /* the kernel stops ".." at the root */
                        break;
                }
                next = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(fd);
                fd = next;
                if (fd < 0)
                        break;
        }
        if (fd >= 0)
                close(fd);
        printf("confined=%s\n", confined ? "yes" : "no");
        printf("entries=");
        d = opendir(".");
        while (d && (e = readdir(d)) && shown < 40) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                printf("%s%s", shown++ ? " " : "", e->d_name);
        }
        if (d)
                closedir(d);
        printf("\n");
        return 0;
}

#define MAX_PIDS 4096

static bool do_write;
static unsigned long long write_dev, write_ino;

/* Writes the marker if FD is the file named by --write. */
static int try_write(int fd) {
        struct stat st;

        if (!do_write || fstat(fd, &st) < 0 || (unsigned long long)st.st_dev != write_dev ||
            (unsigned long long)st.st_ino != write_ino)
                return 0;
        return pwrite(fd, "KMPWN", 5, 0) == 5;
}

static int exe_write(int argc, char **argv) {
        static char seen[MAX_PIDS * 8];
        double secs = 0;
        int opened = 0, written = 0, held = -1;
        struct timespec start, now;
        pid_t self = getpid();

        for (int i = 2; i < argc; i++) {
                if (strcmp(argv[i], "--write") == 0) {
                        if (i + 1 >= argc || sscanf(argv[++i], "%llu:%llu", &write_dev, &write_ino) != 2) {
                                fprintf(stderr, "probe: --write DEV:INO\n");
                                return 2;
                        }
                        do_write = true;
                } else {
                        secs = atof(argv[i]);
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                DIR *d = opendir("/proc");
                struct dirent *e;

                while (d && (e = readdir(d))) {
                        char path[64], *end;
                        long pid = strtol(e->d_name, &end, 10);
                        int fd, err;

                        if (*end || pid <= 0 || pid == self)
                                continue;
                        snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
                        if (held < 0 && pid == 1)
                                held = open(path, O_PATH | O_CLOEXEC);
                        fd = open(path, O_WRONLY | O_CLOEXEC);
                        err = errno;
                        if (fd >= 0) {
                                opened++;
                                written += try_write(fd);
                                close(fd);
                        }
                        if (pid < (long)sizeof(seen) && !seen[pid]) {
                                seen[pid] = 1;
                                printf("exe_open.%ld=%s\n", pid, fd >= 0 ? "opened" : errname(err));
                        }
                }
                if (d)
                        closedir(d);
                if (held >= 0) {
                        char path[64];
                        int fd;

                        snprintf(path, sizeof(path), "/proc/self/fd/%d", held);
                        fd = open(path, O_WRONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                opened++;
                                written += try_write(fd);
                                close(fd);
                        }
                }
                fflush(stdout);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (secs > 0)
                        usleep(2000);
        } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < secs);
        printf("exe_held=%s\n", held >= 0 ? "yes" : "no");
        printf("exe_opened=%d\nexe_written=%d\n", opened, written);
        return 0;
}

int main(int argc, char **argv) {
        if (argc > 1 && strcmp(argv[1], "cwd") == 0)
                return cwd();
        if (argc > 1 && strcmp(argv[1], "exe-write") == 0)
                return exe_write(argc, argv);
        if (argc > 1) {
                fprintf(stderr, "usage: probe [cwd | exe-write [--write DEV:INO] [SECS]]\n");
                return 2;
        }
        printf("pid=%d\nppid=%d\nuid=%d\n", (int)getpid(), (int)getppid(), (int)geteuid());
        status_fields();
        fds();
        syscalls();
        proc1_exe();
        fflush(stdout);
        return cwd();
}
