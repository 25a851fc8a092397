/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's trees, checked once and watched while they stay as checked (see tree-watch.h). */
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "store.h"
#include "tree-watch.h"

/* Whatever changes an entry or a directory's list of entries, or ends the watch. */
#define TREE_EVENTS                                                                                                    \
        (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |              \
         IN_MOVED_FROM | IN_MOVED_TO)

struct tree {
        struct tree *next;
        char *store; /* the store's absolute path */
        char digest[DIGEST_STRING_MAX];
        dev_t dev; /* rootfs/HEX when it was checked */
        ino_t ino;
        char sum[DIGEST_STRING_MAX]; /* its record's then */
        int *wds;                    /* sorted, once the check is done */
        size_t n_wds, cap;
        bool incomplete; /* a watch could not be added: never answered from here */
        uint64_t serial; /* which check this is (tree_watch_check's *ret_kept) */
};

struct tree_watch {
        int fd; /* inotify */
        struct tree *trees;
        size_t walks;
        uint64_t serials;
};

int tree_watch_new(struct tree_watch **ret) {
        struct tree_watch *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (w->fd < 0) {
                int r = -errno;
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

static bool tree_has(const struct tree *t, int wd) {
        size_t lo = 0, hi = t->n_wds;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->wds[mid] == wd)
                        return true;
                if (t->wds[mid] < wd)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

static void tree_free(struct tree *t) {
        free(t->store);
        free(t->wds);
        free(t);
}

/* Off the list; its watches go unless another tree has them too (the same inode: a hard link). */
static void forget(struct tree_watch *w, struct tree *t) {
        for (struct tree **p = &w->trees; *p; p = &(*p)->next)
                if (*p == t) {
                        *p = t->next;
                        break;
                }
        for (size_t i = 0; i < t->n_wds; i++) {
                bool shared = false;
                for (struct tree *o = w->trees; o && !shared; o = o->next)
                        shared = tree_has(o, t->wds[i]);
                if (!shared)
                        (void)inotify_rm_watch(w->fd, t->wds[i]);
        }
        tree_free(t);
}

void tree_watch_free(struct tree_watch *w) {
        if (!w)
                return;
        while (w->trees) {
                struct tree *t = w->trees;
                w->trees = t->next;
                tree_free(t);
        }
        closep(&w->fd);
        free(w);
}

/* Every event queued so far: the trees it touches are forgotten (all of them when events were lost). */
static void drain(struct tree_watch *w) {
        char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n;

        while ((n = read(w->fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;
                        for (struct tree *t = w->trees, *next; t; t = next) {
                                next = t->next;
                                if ((ev->mask & IN_Q_OVERFLOW) || tree_has(t, ev->wd))
                                        forget(w, t);
                        }
                        p += sizeof(*ev) + ev->len;
                }
}

struct visit_ctx {
        struct tree_watch *w;
        struct tree *t;
};

/* A watch on the entry, before the check looks at it: so a change after that look is an event. */
static void visit(void *userdata, int dirfd, const char *name) {
        struct visit_ctx *c = userdata;
        struct tree *t = c->t;
        char path[PATH_MAX];
        int wd;

        if (t->incomplete)
                return;
        if ((size_t)snprintf(path, sizeof(path), "/proc/self/fd/%d%s%s", dirfd, *name ? "/" : "", name) >=
            sizeof(path)) {
                t->incomplete = true;
                return;
        }
        /* The root is its fd's magic link, followed; an entry is never followed (a symlink's own inode). */
        wd = inotify_add_watch(c->w->fd, path, TREE_EVENTS | (*name ? IN_DONT_FOLLOW : 0));
        if (wd >= 0 && t->n_wds == t->cap) {
                int *grown = reallocarray(t->wds, t->cap ? t->cap * 2 : 256, sizeof(int));
                /* Without room its wd stays unlisted (it may be another tree's too): the tree is not kept. */
                if (grown) {
                        t->wds = grown;
                        t->cap = t->cap ? t->cap * 2 : 256;
                } else
                        wd = -ENOMEM;
        }
        if (wd < 0) {
                t->incomplete = true;
                return;
        }
        t->wds[t->n_wds++] = wd;
}

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *)a, y = *(const int *)b;
        return (x > y) - (x < y);
}

static bool listed(struct tree_watch *w, const struct tree *t) {
        for (struct tree *o = w->trees; o; o = o->next)
                if (o == t)
                        return true;
        return false;
}

int tree_watch_check(struct tree_watch *w, const char *store_dir, const char *manifest_digest, const char *root_path,
                     uint64_t *ret_kept, struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        _cleanup_free_ char *tree = NULL;
        char sum[DIGEST_STRING_MAX], again[DIGEST_STRING_MAX];
        struct stat root, root_again;
        struct tree *t;
        int r, q;

        if (ret_kept)
                *ret_kept = 0;
        r = store_open(store_dir, &st, err);
        if (r < 0)
                return r;
        if (!digest_is_valid(manifest_digest))
                return error_set_plain(err, -EINVAL, "rootfs digest: invalid: '%s'", manifest_digest);
        tree = store_rootfs_path_unchecked(st, manifest_digest);
        if (!tree)
                return error_set(err, -ENOMEM, "rootfs %s", manifest_digest);
        if (root_path && !streq(root_path, tree))
                return error_set_plain(err, -EINVAL, "the root filesystem %s is not the tree %s of %s", root_path, tree,
                                       manifest_digest);
        if (!w)
                return store_rootfs_check(st, manifest_digest, err);
        drain(w);
        r = store_rootfs_identity(st, manifest_digest, &root, sum, err);
        for (t = w->trees; t; t = t->next)
                if (streq(t->store, store_path(st)) && streq(t->digest, manifest_digest))
                        break;
        if (t && r > 0 && t->dev == root.st_dev && t->ino == root.st_ino && streq(t->sum, sum)) {
                if (ret_kept)
                        *ret_kept = t->serial;
                return 1;
        }
        if (t)
                forget(w, t);
        if (r <= 0)
                return r;

        t = calloc(1, sizeof(*t));
        if (!t || !(t->store = strdup(store_path(st)))) {
                free(t);
                return error_set(err, -ENOMEM, "rootfs %s", manifest_digest);
        }
        snprintf(t->digest, sizeof(t->digest), "%s", manifest_digest);
        t->dev = root.st_dev;
        t->ino = root.st_ino;
        snprintf(t->sum, sizeof(t->sum), "%s", sum);
        t->serial = ++w->serials;
        t->next = w->trees;
        w->trees = t;
        w->walks++;
        r = store_rootfs_check_visit(st, manifest_digest, &(struct tree_visitor){ visit, &(struct visit_ctx){ w, t } },
                                     err);
        if (t->n_wds > 1) {
                size_t k = 1;
                qsort(t->wds, t->n_wds, sizeof(int), cmp_int);
                for (size_t i = 1; i < t->n_wds; i++)
                        if (t->wds[i] != t->wds[k - 1])
                                t->wds[k++] = t->wds[i];
                t->n_wds = k;
        }
        /* Kept only as what was checked: the same directory and record after the walk, no event since. */
        q = r > 0 && !t->incomplete ? store_rootfs_identity(st, manifest_digest, &root_again, again, NULL) : 0;
        drain(w);
        if (listed(w, t) &&
            (q <= 0 || root_again.st_dev != t->dev || root_again.st_ino != t->ino || !streq(again, t->sum)))
                forget(w, t);
        if (r > 0 && ret_kept && listed(w, t) && !t->incomplete)
                *ret_kept = t->serial;
        return r;
}

struct tree_watch_stats tree_watch_stats(struct tree_watch *w) {
        struct tree_watch_stats s = { .walks = w->walks };

        drain(w);
        for (struct tree *t = w->trees; t; t = t->next)
                s.kept++;
        return s;
}
