/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a start takes from the host, recorded and checked again (see start-pins.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "launch-rootfs.h"
#include "launch.h"
#include "start-pins.h"

/* Which entry a name of the directory is: any name added, removed or moved; the directory itself moved or gone. */
#define DIR_MASK                                                                                                       \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD)
/* A source itself: gone (its inode number free for another) or moved. */
#define SOURCE_MASK (IN_DELETE_SELF | IN_MOVE_SELF | IN_MASK_ADD)

static int pin_identity(int fd, struct start_pin *pin) {
        struct statfs sfs;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
                return -errno;
        pin->dev = st.st_dev;
        pin->ino = st.st_ino;
        pin->mount_flags = (unsigned long)sfs.f_flags;
        r = fd_mount_ident(fd, &pin->mount);
        return r < 0 ? r : 0;
}

/* Whether fd (closed here) is open on what pin recorded. */
static bool pin_same(const struct start_pin *pin, int fd) {
        _cleanup_close_ int now_fd = fd;
        struct start_pin now = {};

        return now_fd >= 0 && pin_identity(now_fd, &now) == 0 && now.dev == pin->dev && now.ino == pin->ino &&
               now.mount_flags == pin->mount_flags && mount_ident_same(&pin->mount, &now.mount);
}

static int watch(struct start_pins *p, const char *at, uint32_t mask) {
        int *wds, wd = inotify_add_watch(p->inotify_fd, at, mask);

        if (wd < 0)
                return -errno;
        wds = reallocarray(p->wds, p->n_wds + 1, sizeof(*wds));
        if (!wds) {
                (void)inotify_rm_watch(p->inotify_fd, wd);
                return -ENOMEM;
        }
        p->wds = wds;
        p->wds[p->n_wds++] = wd;
        return 0;
}

static int watch_fd(struct start_pins *p, int fd, const char *rel, uint32_t mask) {
        char at[PATH_MAX + 32];

        snprintf(at, sizeof(at), "/proc/self/fd/%d%s", fd, rel);
        return watch(p, at, mask);
}

/* Reads what the instance has queued: whether one of p's watches had an event (or some were lost). */
static bool read_events(struct start_pins *p) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n;

        while ((n = read(p->inotify_fd, buf, sizeof(buf))) > 0)
                for (char *e = buf; e < buf + n; e += sizeof(struct inotify_event) + ((struct inotify_event *)e)->len) {
                        const struct inotify_event *ev = (const struct inotify_event *)e;

                        p->changed |= (ev->mask & IN_Q_OVERFLOW) != 0;
                        /* Watch numbers are not given again soon: an earlier user's events are not ours. */
                        for (size_t i = 0; i < p->n_wds && !p->changed; i++)
                                p->changed = ev->wd == p->wds[i];
                }
        return p->changed;
}

static bool covered(const struct container_spec *s, size_t before, const char *prefix) {
        for (size_t j = 0; j < before; j++)
                if (streq(s->mounts[j].destination, prefix))
                        return true;
        return false;
}

/*
 * Each directory dest passes below the root, up to one the first `before`
 * mounts cover: the last component's directory holds what a start
 * resolves, so every change to which entry is there shows.
 */
static int watch_path(struct start_pins *p, const struct container_spec *s, size_t before, const char *dest,
                      struct km_error *err) {
        _cleanup_free_ char *prefix = strdup(dest);
        int r;

        if (!prefix)
                return -ENOMEM;
        for (char *c = prefix + strspn(prefix, "/"), *slash; (slash = strchr(c, '/')); c = slash + 1) {
                *slash = '\0';
                if (covered(s, before, prefix))
                        return 0;
                /* Not followed: a start resolves a symlink in the root, this watch would follow it in the host. */
                if ((r = watch_fd(p, p->pin[0].fd, prefix, DIR_MASK | IN_DONT_FOLLOW)) < 0)
                        return r == -ENOENT ? 0 /* made by the start: its parent's watch shows it */
                                            : error_set(err, r, "rootfs %s: watch %s", s->root_path, prefix);
                *slash = '/';
        }
        return 0;
}

static int watch_root(struct start_pins *p, const struct container_spec *s, struct km_error *err) {
        int r;

        if ((r = watch_fd(p, p->pin[0].fd, "", DIR_MASK)) < 0)
                return error_set(err, r, "rootfs %s: watch it", s->root_path);
        for (size_t i = 0; i < s->n_mounts; i++)
                if ((r = watch_path(p, s, i, s->mounts[i].destination, err)) < 0)
                        return r;
        for (char **v = s->masked_paths; v && *v; v++)
                if ((r = watch_path(p, s, s->n_mounts, *v, err)) < 0)
                        return r;
        for (char **v = s->readonly_paths; v && *v; v++)
                if ((r = watch_path(p, s, s->n_mounts, *v, err)) < 0)
                        return r;
        return 0;
}

static int pin(struct start_pins *p, size_t k, int fd, uint32_t mask) {
        int r;

        p->pin[k].fd = p->fds[k] = fd;
        p->pin[k].used = true;
        if ((r = pin_identity(fd, &p->pin[k])) < 0)
                return r;
        return watch_fd(p, fd, "", mask);
}

int start_pins_open(struct start_pins *p, const struct container_spec *s, const char *confine, int inotify_fd,
                    struct km_error *err) {
        int fd, r;

        *p = START_PINS_INIT;
        p->n = 1 + s->n_mounts;
        p->pin = calloc(p->n, sizeof(*p->pin));
        p->fds = calloc(p->n, sizeof(*p->fds));
        if (!p->pin || !p->fds)
                return error_set(err, -ENOMEM, "rootfs %s", s->root_path);
        for (size_t k = 0; k < p->n; k++)
                p->pin[k].fd = p->fds[k] = -EBADF;
        if (inotify_fd < 0)
                return error_set_plain(err, -EINVAL, "rootfs %s: no inotify instance to watch it", s->root_path);
        p->inotify_fd = inotify_fd;
        (void)read_events(p); /* what an earlier user left: none of ours yet */
        if (!s->root_overlay) {
                /* As open_tree(2) takes it for a start: its symlinks followed. */
                fd = open(s->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return error_set(err, -errno, "rootfs %s", s->root_path);
                if ((r = pin(p, 0, fd, DIR_MASK)) < 0)
                        return error_set(err, r, "rootfs %s", s->root_path);
                if ((r = watch_root(p, s, err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_mounts; i++) {
                if (!launch_is_bind(&s->mounts[i]))
                        continue;
                fd = launch_open_source(&s->mounts[i], confine, err);
                if (fd < 0)
                        return fd;
                if ((r = pin(p, 1 + i, fd, SOURCE_MASK)) < 0)
                        return error_set(err, r, "bind source %s", s->mounts[i].source);
        }
        return 0;
}

void start_pins_release(struct start_pins *p) {
        for (size_t k = 0; p->pin && k < p->n; k++)
                closep(&p->pin[k].fd);
        for (size_t k = 0; p->fds && k < p->n; k++)
                p->fds[k] = -EBADF;
}

int start_pins_hold(struct start_pins *p, const struct container_spec *s, const char *confine) {
        if (p->n != 1 + s->n_mounts || read_events(p))
                return 0;
        if (p->pin[0].used && !pin_same(&p->pin[0], open(s->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC)))
                return 0;
        for (size_t i = 0; i < s->n_mounts; i++)
                if (p->pin[1 + i].used && !pin_same(&p->pin[1 + i], launch_open_source(&s->mounts[i], confine, NULL)))
                        return 0;
        return 1;
}

void start_pins_done(struct start_pins *p) {
        start_pins_release(p);
        for (size_t i = 0; i < p->n_wds; i++)
                (void)inotify_rm_watch(p->inotify_fd, p->wds[i]);
        free(p->pin);
        free(p->fds);
        free(p->wds);
        *p = START_PINS_INIT;
}
