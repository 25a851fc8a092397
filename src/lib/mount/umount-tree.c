/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * umount -R: the mounts at and below a held target, chosen by mount ID and
 * parent ID from one snapshot of the table, found again below the held
 * target without following a symlink, unmounted deepest first, each level in
 * parallel threads (THREATS 33: a recursive unmount never leaves its tree).
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>

#include "mount-identity.h"
#include "mounttable.h"
#include "resolve.h"
#include "umount-internal.h"
#include "util.h"

struct victim {
        const char *target, *fstype;
        const char *rel; /* the mount point below the target ("" at it, else "/a/b") */
        unsigned id;
        size_t depth, order;
        bool helper; /* has a umount.TYPE helper: unmounted by the calling thread */
        bool top;    /* mounted at the target itself: unmounted last, where the target was found */
};

/*
 * The tree a recursive unmount may not leave: every victim is found again
 * below the held target (no symlink, no ".."), and only a mount whose ID is
 * one of the snapshot's victims is unmounted.
 */
struct tree {
        int root_fd;                  /* the target, held; closed before its own mounts go */
        const struct resolved *where; /* where the target itself was found */
        unsigned *ids;                /* the victims' mount IDs, sorted */
        size_t n_ids;
};

static int id_cmp(const void *a, const void *b) {
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

struct id_index {
        unsigned id;
        size_t i;
};

static int id_index_cmp(const void *a, const void *b) {
        return id_cmp(&((const struct id_index *)a)->id, &((const struct id_index *)b)->id);
}

/* The directory holding a victim's mount point, below the tree's root: never through a symlink or "..". */
static int open_victim_dir(const struct tree *tree, const struct victim *v) {
        const char *slash = strrchr(v->rel, '/');
        _cleanup_free_ char *dir = slash ? strndup(v->rel + 1, slash - v->rel - (slash > v->rel)) : NULL;

        if (!dir)
                return slash ? -ENOMEM : -EINVAL;
        return resolve_beneath(tree->root_fd, dir);
}

/* Whether two victims' mount points are in the same directory. */
static bool same_dir(const struct victim *a, const struct victim *b) {
        const char *x = strrchr(a->rel, '/'), *y = strrchr(b->rel, '/');
        return x && y && x - a->rel == y - b->rel && strncmp(a->rel, b->rel, x - a->rel) == 0;
}

/*
 * One victim: found again below the tree's root (in dir_fd when the caller
 * opened its directory already), checked to be one of the tree's mounts by
 * its ID, unmounted there (escalating when timeout_ms > 0).  -ENOENT when it
 * is gone already.
 */
static int umount_victim(const struct tree *tree, const struct victim *v, int dir_fd, unsigned flags, int mnt_flags,
                         int timeout_ms, bool helpers, struct km_error *err) {
        _cleanup_close_ int parent = -EBADF;
        struct utarget t = { .shown = v->target };
        unsigned id;
        int r;

        if (v->top) {
                t.parent_fd = tree->where->parent_fd;
                t.name = tree->where->name;
        } else {
                if (dir_fd < 0) {
                        parent = open_victim_dir(tree, v);
                        if (parent == -ENOENT)
                                return parent;
                        if (parent < 0)
                                return error_set(err, parent, "umount: %s: no longer reachable below the target",
                                                 v->target);
                        dir_fd = parent;
                }
                t.parent_fd = dir_fd;
                t.name = strrchr(v->rel, '/') + 1;
        }
        r = mount_id_at(t.parent_fd, t.name, &id);
        if (r < 0)
                return r == -ENOENT ? r : error_set(err, r, "umount: %s", v->target);
        if (!bsearch(&id, tree->ids, tree->n_ids, sizeof(*tree->ids), id_cmp))
                return -ENOENT; /* gone (a peer's propagation took it); what is there now is not the tree's */
        if (timeout_ms > 0) {
                /* Checked again before each step: they come seconds apart. */
                t.expect_id = id;
                return umount_escalating(&t, flags, timeout_ms, helpers, v->fstype, err);
        }
        return umount_once(&t, mnt_flags, helpers, v->fstype, err);
}

static int victim_cmp(const void *a, const void *b) {
        const struct victim *x = a, *y = b;
        int d;

        if (x->depth != y->depth)
                return x->depth < y->depth ? 1 : -1; /* deepest first */
        d = strcmp(x->rel, y->rel);                  /* then by directory, to open each once */
        if (d != 0 && !same_dir(x, y))
                return d;
        return x->order < y->order ? 1 : -1; /* then the latest mounted */
}

static size_t path_depth(const char *p) {
        size_t d = 0;
        for (; *p; p++)
                d += *p == '/' && p[1] && p[1] != '/';
        return d;
}

/*
 * One level (same depth) of a recursive unmount, shared by the threads.
 * Each umount2(2) waits for an RCU grace period in the kernel (~0.15 ms
 * here) after it has dropped the namespace lock, so unmounts of mounts of
 * the same depth - none can be the parent of another - overlap well:
 * 20,000 mounts took 2.8 s one by one, 0.5 s with 8 threads, 0.4 s with 16
 * (docs/benchmarks.md, P4).
 */
struct level {
        const struct tree *tree;
        struct victim *v;
        size_t n, next; /* next: of the runs of victims in one directory */
        size_t *runs;   /* their starts, then n */
        int mnt_flags;
        pthread_mutex_t lock;
        size_t done, first_error; /* index of the first failed victim, n if none */
        int r;
        struct km_error err;
};

static void level_record(struct level *l, size_t i, int k, const struct km_error *e) {
        /* Gone already: propagation from a peer took it, or it was stacked. */
        if (k == -EINVAL || k == -ENOENT)
                return;
        pthread_mutex_lock(&l->lock);
        l->done += k == 0;
        if (k < 0 && i < l->first_error) {
                l->first_error = i;
                l->r = k;
                l->err = *e;
        }
        pthread_mutex_unlock(&l->lock);
}

static void level_work(struct level *l) {
        for (;;) {
                size_t run = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
                _cleanup_close_ int dir = -EBADF;

                if (run >= l->n || l->runs[run] >= l->n)
                        return;
                for (size_t i = l->runs[run]; i < l->runs[run + 1]; i++) {
                        struct km_error e = { 0 };
                        int k;

                        if (l->v[i].helper)
                                continue; /* done by the calling thread */
                        if (dir < 0 && !l->v[i].top)
                                dir = open_victim_dir(l->tree, &l->v[i]);
                        k = umount_victim(l->tree, &l->v[i], dir, 0, l->mnt_flags, 0, false, &e);
                        level_record(l, i, k, &e);
                }
        }
}

static void *level_thread(void *userdata) {
        /*
         * Stop sharing the caller's fs_struct right away: km_host_run's
         * setns() back needs it unshared, and a joined thread may not have
         * released it yet (exit_fs runs after the join wake-up).
         */
        if (unshare(CLONE_FS) == 0)
                level_work(userdata);
        return NULL;
}

#define UMOUNT_THREADS_MAX 16
#define UMOUNT_PER_THREAD 32

/* Unmounts v[0..n) (one depth) in parallel; helpers and escalation stay serial. */
static void umount_level(struct level *l, unsigned flags) {
        pthread_t threads[UMOUNT_THREADS_MAX];
        pthread_attr_t attr;
        size_t want = l->n / UMOUNT_PER_THREAD, started = 0, n_runs = 0;
        _cleanup_free_ size_t *runs = calloc(l->n + 1, sizeof(*runs));

        if (!runs) {
                l->r = -ENOMEM;
                error_set(&l->err, -ENOMEM, "umount -R");
                return;
        }
        for (size_t i = 0; i < l->n; i++)
                if (i == 0 || l->v[i].top || !same_dir(&l->v[i - 1], &l->v[i]))
                        runs[n_runs++] = i;
        runs[n_runs] = l->n;
        l->runs = runs;

        l->mnt_flags = (flags & KM_UMOUNT_LAZY) ? MNT_DETACH : (flags & KM_UMOUNT_FORCE) ? MNT_FORCE : 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].helper) {
                        struct km_error e = { 0 };
                        int k = umount_victim(l->tree, &l->v[i], -EBADF, 0, l->mnt_flags, 0, true, &e);
                        level_record(l, i, k, &e);
                }
        if (want > UMOUNT_THREADS_MAX)
                want = UMOUNT_THREADS_MAX;
        if (want > 1 && pthread_attr_init(&attr) == 0) {
                pthread_attr_setstacksize(&attr, 256 * 1024);
                /* New threads are in the calling thread's mount namespace (km_host_run). */
                for (; started < want - 1; started++)
                        if (pthread_create(&threads[started], &attr, level_thread, l) != 0)
                                break;
                pthread_attr_destroy(&attr);
        }
        level_work(l); /* the calling thread works too, alone if no thread started */
        for (size_t i = 0; i < started; i++)
                pthread_join(threads[i], NULL);
}

/* What follows the first n components of path ("" or "/..."), NULL if it has fewer. */
static const char *skip_components(const char *p, size_t n) {
        for (; n > 0; n--) {
                p += strspn(p, "/");
                if (!*p)
                        return NULL;
                p += strcspn(p, "/");
        }
        return p[strspn(p, "/")] ? p : p + strlen(p);
}

/*
 * The victims, by parent ID in one snapshot: if the target (mount root_id,
 * path root_path as the kernel shows it) is a mount point, the mounts at it
 * (stacked ones too) and all their descendants; else the mounts below it in
 * root_id and their descendants.  -ESTALE when root_id is not in the table.
 *
 * The table spells each mount point as it was when its line was printed: a
 * directory renamed above the target meanwhile changes the spelling, not
 * the number of components.  So a mount point is placed below the target by
 * its components after the target's, and what is found there later must
 * still be one of these mounts, by ID: a wrong spelling can make a victim be
 * missed, never make a mount outside the target go.
 */
static int select_victims(const struct km_mount_table *t, unsigned root_id, bool is_root, const char *root_path,
                          bool helpers, struct victim *v, size_t *ret_n) {
        size_t n = km_mount_table_size(t), root = n, k = 0, root_depth = path_depth(root_path);
        _cleanup_free_ signed char *in = NULL; /* 1 in the tree, -1 not, 0 not known yet */
        _cleanup_free_ size_t *parent = NULL, *stack = NULL;
        _cleanup_free_ struct id_index *by_id = NULL;

        for (size_t i = n; i > 0 && root == n; i--)
                if (km_mount_id(km_mount_table_at(t, i - 1)) == root_id)
                        root = i - 1;
        if (root == n)
                return -ESTALE;
        in = calloc(n, sizeof(*in));
        parent = calloc(n, sizeof(*parent));
        by_id = calloc(n, sizeof(*by_id));
        stack = calloc(n, sizeof(*stack));
        if (!in || !parent || !by_id || !stack)
                return -ENOMEM;
        /* The parent's index of each entry (n for none). */
        for (size_t i = 0; i < n; i++)
                by_id[i] = (struct id_index){ km_mount_id(km_mount_table_at(t, i)), i };
        qsort(by_id, n, sizeof(*by_id), id_index_cmp);
        for (size_t i = 0; i < n; i++) {
                struct id_index key = { km_mount_parent_id(km_mount_table_at(t, i)), 0 };
                const struct id_index *p = bsearch(&key, by_id, n, sizeof(*by_id), id_index_cmp);
                parent[i] = p && p->i != i ? p->i : n;
        }

        if (is_root) {
                /* A mount point: down to the lowest mount stacked at it. */
                size_t base = root;
                for (size_t hops = 0;
                     hops < n && parent[base] < n && km_mount_target(km_mount_table_at(t, parent[base])) &&
                     path_depth(km_mount_target(km_mount_table_at(t, parent[base]))) == root_depth;
                     hops++)
                        base = parent[base];
                in[base] = 1;
        } else
                for (size_t i = 0; i < n; i++) {
                        const char *mp = km_mount_target(km_mount_table_at(t, i));
                        if (parent[i] == root && mp && path_is_below(mp, root_path) && !streq(mp, root_path))
                                in[i] = 1;
                }
        /* Everything below a chosen mount, by walking up each chain once. */
        for (size_t i = 0; i < n; i++) {
                size_t depth = 0, j = i;
                signed char verdict;

                while (!in[j] && parent[j] < n && depth < n) {
                        stack[depth++] = j;
                        j = parent[j];
                }
                verdict = in[j] == 1 ? 1 : -1;
                if (!in[j])
                        in[j] = -1;
                while (depth > 0)
                        in[stack[--depth]] = verdict;
        }
        for (size_t i = 0; i < n; i++) {
                const struct km_mount *m = km_mount_table_at(t, i);
                const char *mp = km_mount_target(m), *rel = mp ? skip_components(mp, root_depth) : NULL;
                if (in[i] != 1 || !rel)
                        continue;
                v[k++] = (struct victim){ mp,
                                          km_mount_fstype(m),
                                          rel,
                                          km_mount_id(m),
                                          path_depth(mp),
                                          i,
                                          helpers && host_helper_exists("umount", km_mount_fstype(m)),
                                          !*rel };
        }
        *ret_n = k;
        return 0;
}

/*
 * The mount table and the path of fd as the kernel spells it, read so that
 * they agree (a directory renamed above fd in between changes the spelling):
 * the path is read before and after the table, up to 8 times.
 */
static int table_with_path(int fd, struct km_mount_table **ret, char *path, size_t size, struct km_error *err) {
        char link[64], again[PATH_MAX];
        ssize_t n;
        int r;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        for (int tries = 0; tries < 8; tries++) {
                struct km_mount_table *t = NULL;

                n = readlink(link, path, size - 1);
                if (n < 0)
                        return -errno;
                path[n] = '\0';
                r = mount_table_load(NULL, &t, err);
                if (r < 0)
                        return r;
                n = readlink(link, again, sizeof(again) - 1);
                if (n >= 0 && (again[n] = '\0', streq(again, path))) {
                        *ret = t;
                        return 0;
                }
                km_mount_table_free(t);
        }
        return -EAGAIN;
}

int umount_recursive(const char *shown, int *root_fd, const struct resolved *where, unsigned flags, int timeout_ms,
                     bool helpers, struct km_error *err) {
        _cleanup_(km_mount_table_freep) struct km_mount_table *t = NULL;
        _cleanup_free_ struct victim *v = NULL;
        _cleanup_free_ unsigned *ids = NULL;
        char root_path[PATH_MAX];
        size_t n = 0, n_inner = 0, done = 0;
        unsigned root_id, parent_id;
        bool is_root = true;
        int r;

        /* The target's mount and path as the kernel knows them: no path is resolved again. */
        r = fd_mount_id(*root_fd, &root_id);
        if (r < 0)
                return error_set(err, r, "umount -R %s: mount ID", shown);
        /* A mount point: its mount is not the one of the directory it was found in. */
        if (where->parent_fd >= 0) {
                r = fd_mount_id(where->parent_fd, &parent_id);
                if (r < 0)
                        return error_set(err, r, "umount -R %s: mount ID", shown);
                is_root = parent_id != root_id;
        }
        r = table_with_path(*root_fd, &t, root_path, sizeof(root_path), err);
        if (r == -EAGAIN)
                return error_set_plain(err, r, "umount: %s: its path keeps changing; not unmounted", shown);
        if (r < 0)
                return error_set(err, r, "umount -R %s", shown);
        if (root_path[0] != '/')
                return error_set_plain(err, -ENOENT, "umount: %s: not reachable from this root", shown);
        v = calloc(km_mount_table_size(t) + 1, sizeof(*v));
        if (!v)
                return error_set(err, -ENOMEM, "umount -R %s", shown);
        r = select_victims(t, root_id, is_root, root_path, helpers, v, &n);
        if (r == -ESTALE)
                return error_set_plain(err, r, "umount: %s: its mount is not in the mount table (unmounted meanwhile?)",
                                       shown);
        if (r < 0)
                return error_set(err, r, "umount -R %s", shown);
        if (n == 0)
                return error_set_plain(err, -EINVAL, "umount: %s: not mounted", shown);
        qsort(v, n, sizeof(*v), victim_cmp);
        ids = calloc(n, sizeof(*ids));
        if (!ids)
                return error_set(err, -ENOMEM, "umount -R %s", shown);
        for (size_t i = 0; i < n; i++) {
                ids[i] = v[i].id;
                n_inner += !v[i].top; /* the mounts at the target itself are the shallowest: last */
        }
        qsort(ids, n, sizeof(*ids), id_cmp);
        struct tree tree = { *root_fd, where, ids, n };

        r = 0;
        if (timeout_ms <= 0) {
                /* Level by level; a level is finished before its parents start. */
                for (size_t i = 0, j; i < n; i = j) {
                        struct level l = { .tree = &tree, .v = v + i, .lock = PTHREAD_MUTEX_INITIALIZER };
                        if (i == n_inner)
                                closep(root_fd);
                        for (j = i; j < n && v[j].depth == v[i].depth && v[j].top == v[i].top; j++)
                                ;
                        l.n = l.first_error = j - i;
                        umount_level(&l, flags);
                        done += l.done;
                        if (l.r < 0 && r == 0) {
                                r = l.r;
                                if (err)
                                        *err = l.err;
                        }
                }
        } else
                /* With a timeout each attempt runs in a child process: one by one. */
                for (size_t i = 0; i < n; i++) {
                        struct km_error e = { 0 };
                        int k;

                        if (i == n_inner)
                                closep(root_fd);
                        k = umount_victim(&tree, &v[i], -EBADF, flags & ~KM_UMOUNT_RECURSIVE, 0, timeout_ms, helpers,
                                          &e);
                        /* Gone already: propagation from a peer took it, or it was stacked. */
                        if (k == -EINVAL || k == -ENOENT)
                                continue;
                        if (k < 0 && r == 0) {
                                r = k;
                                if (err)
                                        *err = e;
                        }
                        done += k == 0;
                }
        log_msg(KM_LOG_INFO, "unmounted %zu of %zu mounts under %s", done, n, shown);
        return r;
}
