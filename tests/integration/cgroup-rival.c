/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clean-up of a rival kubemount at its worst moment.  Each kubemount that
 * starts a FUSE helper removes the empty "mount-*" groups next to its own
 * (what daemons that ended left), and another one may be between making its
 * group and entering it.  This program watches DIR... (inotify) and removes
 * each "mount-*" group the first time it sees it appear, as soon as it does;
 * a group made again under the same name is left alone.  It prints "ready"
 * once it watches, then one line per group it took, until SIGTERM.
 * Usage: cgroup-rival DIR...   (run by fuse-survival.sh)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define MAX_DIRS 32
#define MAX_SEEN 4096

static char *seen[MAX_SEEN];
static size_t n_seen;

static int first_time(const char *dir, const char *name) {
        char key[PATH_MAX];

        snprintf(key, sizeof(key), "%s/%s", dir, name);
        for (size_t i = 0; i < n_seen; i++)
                if (strcmp(seen[i], key) == 0)
                        return 0;
        if (n_seen < MAX_SEEN)
                seen[n_seen++] = strdup(key);
        return 1;
}

int main(int argc, char **argv) {
        int fd, dirfd[MAX_DIRS], wd[MAX_DIRS];
        char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));

        if (argc < 2 || argc - 1 > MAX_DIRS) {
                fprintf(stderr, "usage: cgroup-rival DIR... (at most %d)\n", MAX_DIRS);
                return 2;
        }
        fd = inotify_init1(IN_CLOEXEC);
        if (fd < 0) {
                perror("cgroup-rival: inotify_init1");
                return 1;
        }
        for (int i = 1; i < argc; i++) {
                dirfd[i - 1] = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                wd[i - 1] = inotify_add_watch(fd, argv[i], IN_CREATE | IN_ONLYDIR);
                if (dirfd[i - 1] < 0 || wd[i - 1] < 0) {
                        fprintf(stderr, "cgroup-rival: %s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        perror("cgroup-rival: read");
                        return 1;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *)p;

                        p += sizeof(*e) + e->len;
                        if (!(e->mask & IN_ISDIR) || e->len == 0 || strncmp(e->name, "mount-", 6) != 0)
                                continue;
                        for (int i = 0; i < argc - 1; i++)
                                if (wd[i] == e->wd && first_time(argv[i + 1], e->name) &&
                                    unlinkat(dirfd[i], e->name, AT_REMOVEDIR) == 0)
                                        printf("took %s/%s\n", argv[i + 1], e->name);
                }
        }
}
