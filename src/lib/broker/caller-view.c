/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's view, where the broker performs its calls (see caller-view.h). */
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/stat.h>

#include "caller-view.h"
#include "libseccomp-dl.h"
#include "mount-identity.h"
#include "syscalls.h"

int view_bind_of(const struct broker_view *view, const char *path) {
        size_t best_len = 0;
        int best = -EPERM;

        for (size_t i = 0; path && path[0] == '/' && i < view->n_binds; i++) {
                const char *d = view->binds[i].destination;
                size_t len = streq(d, "/") ? 0 : strlen(d);

                if (strncmp(path, d, len) == 0 && (path[len] == '/' || path[len] == '\0') &&
                    (best < 0 || len >= best_len))
                        best = (int)i, best_len = len;
        }
        return best;
}

int view_translate(const struct broker_view *view, char **path) {
        int i = view_bind_of(view, *path);
        const char *d;
        char *host;

        if (i < 0)
                return i;
        d = view->binds[i].destination;
        if (asprintf(&host, "%s%s", view->binds[i].source, *path + (streq(d, "/") ? 0 : strlen(d))) < 0)
                return -ENOMEM;
        free(*path);
        *path = host;
        return 0;
}

int caller_absolute(pid_t pid, char **path) {
        char link[64], cwd[PATH_MAX];
        char *abs;
        ssize_t n;

        if (!*path || !**path || **path == '/')
                return 0;
        snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
        n = readlink(link, cwd, sizeof(cwd) - 1);
        if (n < 0)
                return -errno;
        cwd[n] = '\0';
        /* "(unreachable)/x" or "/x (deleted)": no path of its view; left relative, which the policy refuses. */
        if (cwd[0] != '/' || strstr(cwd, " (deleted)"))
                return 0;
        if (streq(*path, "."))
                abs = strdup(cwd);
        else if (asprintf(&abs, "%s/%s", streq(cwd, "/") ? "" : cwd, *path) < 0)
                abs = NULL;
        if (!abs)
                return -ENOMEM;
        free(*path);
        *path = abs;
        return 0;
}

int caller_enter(int listener, const struct broker_notif *n, int *ret_root) {
        _cleanup_close_ int host = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), ns = -EBADF, root = -EBADF;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)n->pid);
        ns = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof(path), "/proc/%d/root", (int)n->pid);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (host < 0 || ns < 0 || root < 0)
                return -errno;
        /* The pid was the caller's only while its call is pending. */
        if (seccomp_notify_id_valid(listener, n->id) < 0)
                return -ENOENT;
        if (setns(ns, CLONE_NEWNS) < 0)
                return -errno;
        /* setns() moved our root and cwd to the namespace's root; its mounts are then reached through fds. */
        if (fchdir(host) < 0 || chroot(".") < 0)
                return -errno;
        *ret_root = TAKE_FD(root);
        return 0;
}

static int open_in_root(int root, const char *path, int flags) {
        return sys_openat2(root, path, flags | O_PATH | O_CLOEXEC,
                           RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/*
 * Whether fd, opened at b's destination in the caller's root, is that bind:
 * the inode of its source on the host, or a mount the broker made there.
 * A container cannot move a mount, but it can rename the directories above
 * one in its own tree and make new ones in their place.  Cached attributes
 * only: a hung FUSE daemon must not block the check.
 */
static bool is_the_bind(int fd, const struct broker_bind *b, const struct broker_policy *p) {
        char component[256];
        const char *w = NULL;
        _cleanup_close_ int source = resolve_confined(b->source, p->kubelet_dir, &w, component, sizeof(component));
        struct stat st, sst;
        struct mount_ident id;

        if (source >= 0 && fstat_sync(fd, AT_STATX_DONT_SYNC, &st) >= 0 &&
            fstat_sync(source, AT_STATX_DONT_SYNC, &sst) >= 0 && st.st_dev == sst.st_dev && st.st_ino == sst.st_ino)
                return true;
        if (fd_mount_ident(fd, &id) < 0)
                return false;
        /* A record from an older agent (no ID) is not enough here: the bind check would be skipped. */
        for (size_t i = 0; p->mounted_ids && p->mounted[i]; i++)
                if (streq(p->mounted[i], b->source) && p->mounted_ids[i].id &&
                    mount_ident_same(&p->mounted_ids[i], &id))
                        return true;
        return false;
}

int caller_resolve(int root, const struct broker_view *view, const struct broker_policy *p, const char *path,
                   struct resolved *at, char *why, size_t why_size) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int top = -EBADF, below = -EBADF;
        const struct broker_bind *b;
        const char *rel, *name;
        char shown[96];
        unsigned id;
        int i = view_bind_of(view, path);

        *at = (struct resolved){ .parent_fd = -EBADF };
        if (i < 0) {
                snprintf(why, why_size, "%s is in none of the container's binds",
                         str_printable(path, shown, sizeof(shown)));
                return -EPERM;
        }
        b = &view->binds[i];
        rel = path + (streq(b->destination, "/") ? 0 : strlen(b->destination));
        rel += strspn(rel, "/");
        if (!*rel) {
                /* The bind's destination itself: found from its parent, the mount on top checked. */
                name = strrchr(b->destination, '/');
                if (!name || !name[1]) {
                        snprintf(why, why_size, "the container's root is not a mount target");
                        return -EPERM;
                }
                dir = strndup(b->destination, name - b->destination + 1);
                name++;
                if (!dir)
                        return -ENOMEM;
                at->parent_fd = open_in_root(root, dir, O_DIRECTORY);
                if (at->parent_fd < 0)
                        return at->parent_fd;
                top = mount_top_at(at->parent_fd, name, &id);
                if (top < 0)
                        return top;
        } else {
                top = open_in_root(root, b->destination, O_DIRECTORY);
                if (top < 0)
                        return top;
                name = strrchr(rel, '/');
                dir = name ? strndup(rel, name - rel) : strdup("");
                name = name ? name + 1 : rel;
                if (!dir)
                        return -ENOMEM;
        }
        if (!is_the_bind(top, b, p)) {
                snprintf(why, why_size, "%s is not the bind of %s it was given", b->destination, b->source);
                resolved_done(at);
                return -EPERM;
        }
        if (*rel) {
                below = resolve_beneath(top, dir);
                if (below < 0)
                        return below;
                at->parent_fd = TAKE_FD(below);
        }
        if (strlen(name) >= sizeof(at->name)) {
                resolved_done(at);
                return -ENAMETOOLONG;
        }
        snprintf(at->name, sizeof(at->name), "%s", name);
        return 0;
}
