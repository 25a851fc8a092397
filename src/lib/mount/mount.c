/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mounting through libmount's context, so that the host's /sbin/mount.TYPE
 * helpers run, in the current or the host mount namespace.  Sensitive options
 * reach the kernel (or the helper) but never a log line or an error.
 */
#include <fcntl.h>
#include <limits.h>
#include "libmount-dl.h"
#include <sys/mount.h>
#include <sys/stat.h>

#include "options.h"
#include "helper-cgroup.h"
#include "hostns.h"
#include "mount-identity.h"
#include "mount-flags.h"
#include "mount-spec.h"
#include "mountpoint.h"
#include "mounttable.h"
#include "newmount.h"
#include "resolve.h"
#include "sd-protocol.h"
#include "secrets.h"
#include "syscalls.h"
#include "util.h"

KM_EXPORT struct km_mount_spec *km_mount_spec_new(void) {
        return calloc(1, sizeof(struct km_mount_spec));
}

static void free_secret(char *s) {
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}

KM_EXPORT void km_mount_spec_free(struct km_mount_spec *s) {
        if (!s)
                return;
        free(s->source);
        free(s->target);
        free(s->fstype);
        free(s->options);
        free(s->confine);
        free_secret(s->sensitive);
        free(s);
}

KM_EXPORT int km_mount_spec_set_source(struct km_mount_spec *s, const char *v) {
        return free_and_strdup(&s->source, v);
}
KM_EXPORT int km_mount_spec_set_target(struct km_mount_spec *s, const char *v) {
        char *abs = NULL;

        /* Relative to the caller's directory: the host namespace has another. "-x" is refused later. */
        if (v && v[0] != '-' && !(abs = path_absolute(v)))
                return -ENOMEM;
        free(s->target);
        s->target = abs ? abs : (v ? strdup(v) : NULL);
        return v && !s->target ? -ENOMEM : 0;
}
KM_EXPORT int km_mount_spec_set_fstype(struct km_mount_spec *s, const char *v) {
        return free_and_strdup(&s->fstype, v);
}

KM_EXPORT int km_mount_spec_set_confine(struct km_mount_spec *s, const char *dir) {
        int r = free_and_strdup(&s->confine, dir);
        if (r == 0 && s->confine)
                path_simplify(s->confine);
        s->confine_required = false;
        return r;
}

KM_EXPORT int km_mount_spec_set_confine_default(struct km_mount_spec *s, const char *dir) {
        int r = km_mount_spec_set_confine(s, dir);
        s->confine_required = r == 0 && s->confine;
        return r;
}

static int add_options(char **field, const char *options, bool secret) {
        char *n = strjoin_opts(*field, options);
        if (!n)
                return -ENOMEM;
        if (secret)
                free_secret(*field);
        else
                free(*field);
        *field = n;
        return 0;
}

KM_EXPORT int km_mount_spec_add_options(struct km_mount_spec *s, const char *options) {
        return add_options(&s->options, options, false);
}
KM_EXPORT int km_mount_spec_add_sensitive_options(struct km_mount_spec *s, const char *options) {
        return add_options(&s->sensitive, options, true);
}
KM_EXPORT void km_mount_spec_set_flags(struct km_mount_spec *s, unsigned flags) {
        s->flags = flags;
}
KM_EXPORT void km_mount_spec_set_propagation(struct km_mount_spec *s, enum km_propagation_kind kind, bool recursive) {
        s->has_propagation = true;
        s->propagation = kind;
        s->propagation_recursive = recursive;
}

KM_EXPORT char *km_mount_spec_describe(const struct km_mount_spec *s) {
        _cleanup_free_ char *shown = options_mask(s->options, false);
        _cleanup_free_ char *secret = s->sensitive ? options_mask(s->sensitive, true) : NULL;
        _cleanup_free_ char *all = NULL;
        char *r;

        if (!shown)
                return NULL;
        all = strjoin_opts(shown, secret);
        if (!all ||
            asprintf(&r, "%s%s%s%s%s%s%s", s->fstype ? "-t " : "", s->fstype ? s->fstype : "", s->fstype ? " " : "",
                     *all ? "-o " : "", all, *all ? " " : "", s->source ? s->source : "") < 0)
                return NULL;
        return r;
}

/* Validates everything that came from outside; *excode = 1 (usage) on error. */
static int spec_validate(const struct km_mount_spec *s, struct km_error *err) {
        const char *why = NULL;
        char shown[256];

        if (!s->target)
                return error_set(err, -EINVAL, "mount: no target given");
        if (argument_validate("target", s->target, &why) < 0)
                return error_set(err, -EINVAL, "mount: target '%s' %s", str_printable(s->target, shown, sizeof(shown)),
                                 why);
        if (s->source && argument_validate("source", s->source, &why) < 0)
                return error_set(err, -EINVAL, "mount: source '%s' %s", str_printable(s->source, shown, sizeof(shown)),
                                 why);
        if (s->fstype && fstype_validate(s->fstype, &why) < 0)
                return error_set(err, -EINVAL, "mount: type '%s' %s", str_printable(s->fstype, shown, sizeof(shown)),
                                 why);
        if (options_validate(s->options, &why) < 0)
                return error_set(err, -EINVAL, "mount: %s: options %s", s->target, why);
        if (options_validate(s->sensitive, &why) < 0)
                return error_set(err, -EINVAL, "mount: %s: sensitive options %s", s->target, why);
        return 0;
}

/* Replaces any sensitive value that a helper or libmount echoed. */
static void scrub(char *message, const char *sensitive) {
        const char *p = sensitive, *n, *v;
        size_t nsz, vsz;

        if (!message)
                return;
        while (options_next(&p, &n, &nsz, &v, &vsz) == 0) {
                char *hit;
                if (!v || vsz == 0)
                        continue;
                while ((hit = memmem(message, strlen(message), v, vsz)))
                        memset(hit, '*', vsz);
        }
}

/*
 * Refuses to stack the same filesystem on a target again (multiplied mounts
 * are a classic kubelet leak).  Reads the table only when the target already
 * is a mount point.
 */
/* -B/-R or -o bind/rbind. */
static bool spec_is_bind(const struct km_mount_spec *s) {
        return (s->flags & (KM_MOUNT_BIND | KM_MOUNT_RBIND)) || options_has(s->options, "bind") ||
               options_has(s->options, "rbind");
}

static int refuse_duplicate(const struct km_mount_spec *s, struct km_error *err) {
        struct km_mount_table *t = NULL;
        const struct km_mount *m;
        int r;

        if (!s->source || spec_is_bind(s) || options_has(s->options, "remount"))
                return 0;
        if (is_mount_point(s->target, NULL) <= 0)
                return 0;
        r = mount_table_load(NULL, &t, NULL);
        if (r < 0)
                return 0;
        m = km_mount_table_find_target(t, s->target);
        r = m && km_mount_source(m) && streq(km_mount_source(m), s->source) &&
            (!s->fstype || streq(km_mount_fstype(m), s->fstype));
        km_mount_table_free(t);
        return r ? error_set(err, -EBUSY, "mount: %s on %s: already mounted", s->source, s->target) : 0;
}

/*
 * The target as a held fd, walked under the confinement of the kubelet dir;
 * where (may be NULL) gets where it was found, to find the new mount again.
 */
static int open_confined(const struct km_mount_spec *s, const char *path, const char *what, struct resolved *where,
                         struct km_error *err) {
        struct resolved ignored;
        const char *why;
        char component[256] = "";
        int fd;

        fd = resolve_confined_at(path, s->confine, where ? where : &ignored, &why, component, sizeof(component));
        if (!where)
                resolved_done(&ignored);
        if (fd >= 0)
                return fd;
        if (why)
                return error_set_plain(err, fd, "mount: %s: %s %s: '%s' %s %s", s->target, what, path, component, why,
                                       s->confine);
        if (fd == -ENOENT)
                return error_set_plain(err, fd, "mount: %s: %s %s does not exist", s->target, what, path);
        return error_set(err, fd, "mount: %s: %s %s", s->target, what, path);
}

/*
 * The target, walked like open_confined(); with a default kubelet dir that
 * nobody named, a target the walk does not find in it is refused (fail
 * closed): *ret_usage says so.
 */
static int open_target(const struct km_mount_spec *s, struct resolved *where, bool *ret_usage, struct km_error *err) {
        _cleanup_(resolved_done) struct resolved own = { .parent_fd = -EBADF };
        _cleanup_close_ int fd = -EBADF;

        *ret_usage = false;
        if (!where)
                where = &own;
        fd = open_confined(s, s->target, "mount point", where, err);
        if (fd < 0 || !s->confine_required || where->inside)
                return TAKE_FD(fd);
        *ret_usage = true;
        return error_set_plain(err, -EPERM,
                               "mount: %s: outside the kubelet dir %s, the default, so not confined; name the "
                               "kubelet's root dir (kubemount --kubelet-dir=DIR or KUBEMOUNT_KUBELET_DIR=DIR)",
                               s->target, s->confine);
}

int mount_spec_check_target(const struct km_mount_spec *s, bool *ret_usage, struct km_error *err) {
        _cleanup_close_ int fd = open_target(s, NULL, ret_usage, err);

        return fd < 0 ? fd : refuse_duplicate(s, err);
}

char **mount_spec_argv(const struct km_mount_spec *s, const char *extra) {
        _cleanup_free_ char *given = strjoin_opts(s->options, s->sensitive), *opts = NULL, *all = NULL;
        const char *flag = s->flags & KM_MOUNT_READ_ONLY ? "ro" : s->flags & KM_MOUNT_READ_WRITE ? "rw" : NULL;
        char **argv = calloc(8, sizeof(char *));
        size_t n = 0;

        opts = given ? strjoin_opts(given, extra) : NULL;
        if (given)
                explicit_bzero(given, strlen(given));
        all = opts ? strjoin_opts(flag, opts) : NULL;
        if (!argv || !all)
                goto oom;
        if (!(argv[n++] = strdup("mount")))
                goto oom;
        if (s->fstype && (!(argv[n++] = strdup("-t")) || !(argv[n++] = strdup(s->fstype))))
                goto oom;
        if (*all && (!(argv[n++] = strdup("-o")) || !(argv[n++] = strdup(all))))
                goto oom;
        if (s->source && !(argv[n++] = strdup(s->source)))
                goto oom;
        if (!(argv[n++] = strdup(s->target)))
                goto oom;
        explicit_bzero(opts, strlen(opts));
        explicit_bzero(all, strlen(all));
        return argv;
oom:
        if (opts)
                explicit_bzero(opts, strlen(opts));
        if (all)
                explicit_bzero(all, strlen(all));
        km_strv_free(argv);
        return NULL;
}

/* A bind's source, walked like the target: a subPath symlink cannot bind /etc (THREATS 3). */
static int open_bind_source(const struct km_mount_spec *s, struct km_error *err) {
        _cleanup_free_ char *abs = path_absolute(s->source);

        if (!abs)
                return error_set(err, -ENOMEM, "mount: %s", s->target);
        return open_confined(s, abs, "bind source", NULL, err);
}

bool fstype_keeps_daemon(const char *t) {
        return t && (startswith(t, "fuse") || streq(t, "glusterfs") || streq(t, "ceph-fuse") || streq(t, "sshfs"));
}

bool mount_spec_is_bind_or_remount(const struct km_mount_spec *s) {
        return spec_is_bind(s) || options_has(s->options, "remount") || (!s->source && s->has_propagation);
}

/* Whether libmount would run a /sbin/mount.TYPE helper (which needs a path). */
static bool may_use_helper(const struct km_mount_spec *s) {
        /* No type (probed) or a subtype (fuse.sshfs -> mount.fuse): libmount may look further. */
        if (!s->fstype || strchr(s->fstype, '.'))
                return !spec_is_bind(s);
        return host_helper_exists("mount", s->fstype);
}

/* --make-*: on the mount now at the target, found by a fresh confined walk. */
static int apply_propagation(const struct km_mount_spec *s, bool *ret_usage, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;

        *ret_usage = false;
        if (!s->has_propagation)
                return 0;
        fd = open_target(s, NULL, ret_usage, err);
        if (fd < 0)
                return fd;
        return propagation_set_fd(fd, s->target, s->propagation, s->propagation_recursive, err);
}

/* The entry of a mount ID (unique within one table). */
static const struct km_mount *table_find_id(const struct km_mount_table *t, unsigned id) {
        for (size_t i = km_mount_table_size(t); i > 0; i--)
                if (km_mount_id(km_mount_table_at(t, i - 1)) == id)
                        return km_mount_table_at(t, i - 1);
        return NULL;
}

/* Whether a mount the table shows (its root open at root_fd) is what s asked for. */
static bool mount_is_ours(const struct km_mount_spec *s, const struct km_mount *m, int root_fd, int source_fd) {
        const char *type = km_mount_fstype(m), *source = km_mount_source(m);
        struct stat a, b;

        if (source_fd >= 0) /* a bind: its root is the checked source */
                return fstat(root_fd, &a) == 0 && fstat(source_fd, &b) == 0 && a.st_dev == b.st_dev &&
                       a.st_ino == b.st_ino;
        /* By the source as the helper gave it to the kernel (sshfs#u@h: shows as u@h:) ... */
        if (s->source && source)
                return streq(source, s->source) || (strlen(source) < strlen(s->source) &&
                                                    streq(s->source + strlen(s->source) - strlen(source), source));
        /* ... else by the type: nfs shows as nfs4, glusterfs as fuse.glusterfs. */
        return !s->fstype ||
               (type && (startswith(type, s->fstype) || (startswith(type, "fuse.") && streq(type + 5, s->fstype))));
}

struct id_index {
        unsigned id;
        size_t i;
};

static int id_index_cmp(const void *a, const void *b) {
        unsigned x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
        return x < y ? -1 : x > y;
}

/* The mounts of a table by ID, to tell which mounts of a later table are new. */
struct table_index {
        const struct km_mount_table *t;
        struct id_index *ids;
        size_t n;
};

static int table_index_init(struct table_index *x, const struct km_mount_table *t) {
        x->t = t;
        x->n = km_mount_table_size(t);
        x->ids = calloc(x->n + 1, sizeof(*x->ids));
        if (!x->ids)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++)
                x->ids[i] = (struct id_index){ km_mount_id(km_mount_table_at(t, i)), i };
        qsort(x->ids, x->n, sizeof(*x->ids), id_index_cmp);
        return 0;
}

/*
 * Whether m (of a later table) was there already: the same ID, parent,
 * device and root.  Not the mount point's spelling: a directory renamed
 * above it changes that.
 */
static bool table_index_had(const struct table_index *x, const struct km_mount *m) {
        struct id_index key = { km_mount_id(m), 0 };
        const struct id_index *hit = bsearch(&key, x->ids, x->n, sizeof(*x->ids), id_index_cmp);
        const struct km_mount *old = hit ? km_mount_table_at(x->t, hit->i) : NULL;
        const char *root = km_mount_root(m);

        return old && km_mount_parent_id(old) == km_mount_parent_id(m) && mount_devno(old) == mount_devno(m) && root &&
               km_mount_root(old) && streq(root, km_mount_root(old));
}

/*
 * Whether the mount now at where (its topmost) is a new one on the directory
 * target_fd holds: found through the held parent and name, mounted on
 * target_fd's mount, not there before.  By mount IDs only: no path, not even
 * the kernel's spelling of one, which a rename higher up changes meanwhile.
 */
static bool landed_on_target(int target_fd, const struct resolved *where, const struct table_index *before,
                             const struct km_mount_table *after) {
        _cleanup_close_ int top = -EBADF;
        unsigned top_id, target_id;
        const struct km_mount *m;

        top = mount_top_at(where->parent_fd, where->name, &top_id);
        if (top < 0 || fd_mount_id(target_fd, &target_id) < 0 || top_id == target_id)
                return false;
        m = table_find_id(after, top_id);
        return m && km_mount_parent_id(m) == target_id && !table_index_had(before, m);
}

/*
 * Undoes the mounts of s that appeared since before, wherever a changed path
 * sent them: each found again by its mount point without following a
 * symlink, checked by its mount ID, detached there.  Returns how many; a
 * mount of s that could not be reached safely leaves its path in *ret_left.
 */
static int undo_strays(const struct km_mount_spec *s, const struct table_index *before,
                       const struct km_mount_table *after, int source_fd, char **ret_left) {
        size_t undone = 0;

        for (size_t i = km_mount_table_size(after); i > 0; i--) {
                const struct km_mount *m = km_mount_table_at(after, i - 1);
                _cleanup_close_ int parent = -EBADF, root = -EBADF;
                const char *name;
                unsigned id;

                if (!km_mount_target(m) || table_index_had(before, m))
                        continue;
                parent = open_parent_nofollow(km_mount_target(m), &name);
                if (parent >= 0)
                        root = mount_top_at(parent, name, &id);
                if (root < 0 || id != km_mount_id(m)) {
                        if (source_fd < 0 && mount_is_ours(s, m, -EBADF, -EBADF) && !*ret_left)
                                *ret_left = strdup(km_mount_target(m));
                        continue;
                }
                if (!mount_is_ours(s, m, root, source_fd))
                        continue;
                closep(&root); /* it would keep the mount busy */
                if (umount_at(parent, name, MNT_DETACH) == 0) {
                        log_msg(KM_LOG_WARNING, "mount %s: undid the mount that landed on %s", s->target,
                                km_mount_target(m));
                        undone++;
                } else if (!*ret_left)
                        *ret_left = strdup(km_mount_target(m));
        }
        return (int)undone;
}

/*
 * After a mount by path (a helper, or a bind through libmount): the new mount
 * must sit on the directory that was checked, found again through the held
 * parent and name.  A component swapped for a symlink in between sends the
 * mount elsewhere (THREATS 2): then the mounts of this request that appeared
 * since before are found by mount ID and detached.
 */
static int verify_landed(const struct km_mount_spec *s, int target_fd, const struct resolved *where, int source_fd,
                         const struct km_mount_table *before, struct km_error *err) {
        _cleanup_(km_mount_table_freep) struct km_mount_table *after = NULL;
        _cleanup_free_ struct id_index *ids = NULL;
        _cleanup_free_ char *left = NULL;
        struct table_index index = { 0 };
        int r;

        r = table_index_init(&index, before);
        ids = index.ids;
        if (r == 0)
                r = mount_table_load(NULL, &after, err);
        if (r < 0) {
                _cleanup_close_ int top = -EBADF;
                unsigned top_id, target_id;

                /* Undo what is new on the held target at least. */
                top = mount_top_at(where->parent_fd, where->name, &top_id);
                if (top >= 0 && fd_mount_id(target_fd, &target_id) == 0 && top_id != target_id) {
                        closep(&top);
                        (void)umount_at(where->parent_fd, where->name, MNT_DETACH);
                }
                return error_set(err, r, "mount: %s: cannot check where the mount landed; undone", s->target);
        }
        if (landed_on_target(target_fd, where, &index, after))
                return 0;
        r = undo_strays(s, &index, after, source_fd, &left);
        if (left)
                return error_set_plain(err, -EXDEV,
                                       "mount: %s: the path changed while mounting; the mount that landed on %s "
                                       "could not be undone",
                                       s->target, left);
        return error_set_plain(err, -EXDEV, "mount: %s: the path changed while mounting; %s", s->target,
                               r > 0 ? "the mount was undone" : "no mount of it was found");
}

/* After a successful mount: --make-* if asked (km_mount()'s event logs it, source masked). */
static int mounted(const struct km_mount_spec *s, int *excode, struct km_error *err) {
        bool usage;
        int r;

        r = s->flags & KM_MOUNT_FAKE ? 0 : apply_propagation(s, &usage, err);
        *excode = r < 0 ? MNT_EX_FAIL : MNT_EX_SUCCESS;
        return r;
}

struct libmount_call {
        const struct km_mount_spec *s;
        const char *options;
        int target_fd, source_fd;
        const struct resolved *where;
        bool bind;
};

/* The mount through libmount's context: helpers, remounts, what the kernel API path does not take. */
static int mount_with_libmount(void *userdata, int *excode, struct km_error *err) {
        const struct libmount_call *c = userdata;
        const struct km_mount_spec *s = c->s;
        _cleanup_(sym_mnt_free_contextp) struct libmnt_context *cxt = NULL;
        _cleanup_(km_mount_table_freep) struct km_mount_table *before = NULL;
        char msg[KM_ERROR_MAX] = "", fd_path[PATH_MAX], source_path[64], held[64];
        const char *options = c->options;
        int target_fd = c->target_fd, source_fd = c->source_fd, r, rc, ex;
        bool bind = c->bind && !options_has(options, "remount"), by_path;

        if (!(cxt = sym_mnt_new_context()))
                return error_set(err, -ENOMEM, "mount: %s", s->target);

        /*
         * The kernel mounts on the held fd.  A helper gets the checked path
         * (it walks it again, and records it).  A new bind gets the held
         * parent and the name: libmount's second step (remount with the
         * flags) must find the new mount, not the directory under it.
         */
        snprintf(held, sizeof(held), "/proc/self/fd/%d", target_fd);
        snprintf(fd_path, sizeof(fd_path), "%s", held);
        if (access(held, F_OK) < 0 || may_use_helper(s) || (bind && c->where->parent_fd < 0))
                snprintf(fd_path, sizeof(fd_path), "%s", s->target);
        else if (bind)
                snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d/%s", c->where->parent_fd, c->where->name);
        /* A mount that walks a path again is checked afterwards, against the table of before. */
        by_path = !streq(fd_path, held) && !(s->flags & KM_MOUNT_FAKE);
        if (by_path) {
                if (c->where->parent_fd < 0)
                        return error_set_plain(err, -EINVAL, "mount: %s: a target ending in '..' is not mounted on",
                                               s->target);
                r = mount_table_load(NULL, &before, err);
                if (r < 0)
                        return r;
        }
        /* A checked bind source is handed over as its fd, too. */
        snprintf(source_path, sizeof(source_path), "/proc/self/fd/%d", source_fd);
        if ((s->source && sym_mnt_context_set_source(cxt, source_fd >= 0 ? source_path : s->source) < 0) ||
            sym_mnt_context_set_target(cxt, fd_path) < 0 ||
            (s->fstype && sym_mnt_context_set_fstype(cxt, s->fstype) < 0) ||
            (*options && sym_mnt_context_set_options(cxt, options) < 0))
                return error_set(err, -ENOMEM, "mount: %s", s->target);
        sym_mnt_context_disable_mtab(cxt, 1);
        /* The target was resolved by open_target(): never again through links. */
        sym_mnt_context_disable_canonicalize(cxt, 1);
        if (s->flags & KM_MOUNT_FAKE)
                sym_mnt_context_enable_fake(cxt, 1);
        if (s->flags & KM_MOUNT_VERBOSE)
                sym_mnt_context_enable_verbose(cxt, 1);

        rc = sym_mnt_context_mount(cxt);
        ex = sym_mnt_context_get_excode(cxt, rc, msg, sizeof(msg));
        if (ex != MNT_EX_SUCCESS) {
                scrub(msg, s->sensitive);
                *excode = ex;
                r = sym_mnt_context_syscall_called(cxt) ? -sym_mnt_context_get_syscall_errno(cxt) : -EINVAL;
                if (r >= 0)
                        r = -EIO; /* a helper failed: the helper printed why */
                return error_set_plain(err, r, "mount: %s: %s", s->target, *msg ? msg : "mount failed");
        }
        if (by_path) {
                r = verify_landed(s, target_fd, c->where, source_fd, before, err);
                if (r < 0) {
                        *excode = MNT_EX_FAIL;
                        return r;
                }
        }
        *excode = MNT_EX_SUCCESS;
        return 0;
}

/* km_mount() in the calling thread's namespace. */
static int mount_here(const struct km_mount_spec *s, int *excode, struct km_error *err) {
        _cleanup_(resolved_done) struct resolved where = { .parent_fd = -EBADF };
        _cleanup_free_ char *given = NULL, *options = NULL;
        _cleanup_close_ int target_fd = -EBADF, source_fd = -EBADF;
        bool bind, usage;
        int r;
        int dummy;

        if (!excode)
                excode = &dummy;
        *excode = MNT_EX_USAGE;
        r = spec_validate(s, err);
        if (r < 0)
                return r;

        /* "mount --make-rshared TARGET" alone changes propagation only. */
        if (!s->source && s->has_propagation && !s->options && !s->sensitive &&
            !(s->flags & (KM_MOUNT_BIND | KM_MOUNT_RBIND))) {
                r = apply_propagation(s, &usage, err);
                *excode = r < 0 ? (usage ? MNT_EX_USAGE : MNT_EX_FAIL) : MNT_EX_SUCCESS;
                return r;
        }

        *excode = MNT_EX_FAIL;
        target_fd = open_target(s, &where, &usage, err);
        if (target_fd < 0) {
                if (usage)
                        *excode = MNT_EX_USAGE;
                return target_fd;
        }
        r = refuse_duplicate(s, err);
        if (r < 0)
                return r;

        *excode = MNT_EX_SYSERR;
        given = strjoin_opts(s->options, s->sensitive);
        options = given ? mount_options_from_km_flags(given, s->flags) : NULL;
        if (given)
                explicit_bzero(given, strlen(given));
        if (!options)
                return error_set(err, -ENOMEM, "mount: %s", s->target);

        /* The new mount API where it takes the request; libmount for the rest. */
        r = -ENOSYS;
        bind = s->source && spec_is_bind(s);
        if (bind && !options_has(options, "remount")) {
                source_fd = open_bind_source(s, err);
                if (source_fd < 0) {
                        *excode = MNT_EX_FAIL;
                        return source_fd;
                }
        }
        if (!(s->flags & KM_MOUNT_FAKE) && s->source) {
                if (bind) {
                        if (!s->sensitive && source_fd >= 0)
                                r = newmount_bind(source_fd, s->source, options, options_has(options, "rbind"),
                                                  target_fd, s->target, err);
                } else if (s->fstype && !may_use_helper(s))
                        r = newmount_fs(s->fstype, s->source, options, target_fd, s->target, err);
        }
        if (r != -ENOSYS) {
                explicit_bzero(options, strlen(options));
                if (r < 0) {
                        scrub(err ? err->message : NULL, s->sensitive);
                        *excode = MNT_EX_FAIL;
                        return r;
                }
                return mounted(s, excode, err);
        }

        if (dlopen_libmount() < 0)
                return error_set(err, -EOPNOTSUPP, "mount: %s: cannot load libmount", s->target);
        struct libmount_call call = { s, options, target_fd, source_fd, &where, bind };
        /* A helper that leaves a daemon (FUSE) runs in cgroups of its own: it must outlive the caller's. */
        if (fstype_keeps_daemon(s->fstype) && may_use_helper(s) && !(s->flags & KM_MOUNT_FAKE))
                r = run_in_own_cgroup("mount", mount_with_libmount, &call, excode, err);
        else
                r = mount_with_libmount(&call, excode, err);
        explicit_bzero(options, strlen(options));
        return r < 0 ? r : mounted(s, excode, err);
}

struct host_call {
        const struct km_mount_spec *spec;
        int *excode;
};

static int mount_cb(void *userdata, struct km_error *err) {
        struct host_call *c = userdata;
        return mount_here(c->spec, c->excode, err);
}

int mount_spec_event(const struct km_mount_spec *s, int r, const struct km_error *err, const struct mount_by *by) {
        bool refused = r == -EPERM || r == -ELOOP;

        if (r < 0 && !refused)
                return r;
        _cleanup_free_ char *source = s->source ? secret_mask_source(s->source) : NULL,
                            *options = s->options ? secret_mask_word(s->options) : NULL;
        const struct mount_by none = {};
        if (!by)
                by = &none;
        const char *pairs[] = { "KUBEMOUNT_TARGET",
                                s->target,
                                "KUBEMOUNT_FSTYPE",
                                s->fstype,
                                "KUBEMOUNT_SOURCE",
                                source,
                                "KUBEMOUNT_OPTIONS",
                                options,
                                "KUBEMOUNT_CONTAINER",
                                by->container,
                                "KUBEMOUNT_IMAGE",
                                by->image,
                                "KUBEMOUNT_DIGEST",
                                by->digest,
                                NULL };

        if (r < 0)
                log_event(KM_LOG_WARNING, MESSAGE_ID_REFUSED, pairs, "%s",
                          err && err->code ? err->message : "mount: refused");
        else if (by->container)
                log_event(KM_LOG_NOTICE, MESSAGE_ID_MOUNT, pairs, "mount: %s mounted on %s by container %s of %s",
                          source ?: "none", s->target, by->container, by->image);
        else
                log_event(KM_LOG_NOTICE, MESSAGE_ID_MOUNT, pairs, "mount: %s mounted on %s", source ?: "none",
                          s->target);
        return r;
}

KM_EXPORT int km_mount(const struct km_host *h, const struct km_mount_spec *s, int *excode, struct km_error *err) {
        int dummy = MNT_EX_SYSERR;
        struct host_call c = { s, excode ? excode : &dummy };

        if (!h)
                return mount_spec_event(s, mount_here(s, excode, err), err, NULL);
        *c.excode = MNT_EX_SYSERR; /* until the switch is made */
        return mount_spec_event(s, km_host_run(h, mount_cb, &c, err), err, NULL);
}
