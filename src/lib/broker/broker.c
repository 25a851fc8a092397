/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount broker (see broker.h). */
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "broker.h"
#include "caller-view.h"
#include "fuse-probe.h"
#include "libseccomp-dl.h"
#include "mount-identity.h"
#include "resolve.h"
#include "syscalls.h"

#define PATH_LIMIT 4096 /* the kernel's PATH_MAX */
#define DATA_LIMIT 4096 /* mount(2) copies one page of options */
#define TYPE_LIMIT 256

/* libseccomp's buffers for one notification and its response, sized for the running kernel. */
static int notif_alloc(struct seccomp_notif **req, struct seccomp_notif_resp **resp) {
        if (dlopen_libseccomp() < 0)
                return -EOPNOTSUPP;
        return seccomp_notify_alloc(req, resp);
}

int broker_recv(int listener, struct broker_notif *ret) {
        struct seccomp_notif *req = NULL;
        struct seccomp_notif_resp *resp = NULL;
        int r = notif_alloc(&req, &resp);

        if (r < 0)
                return r;
        r = seccomp_notify_receive(listener, req);
        if (r >= 0) {
                *ret = (struct broker_notif){ .id = req->id, .pid = (pid_t)req->pid, .nr = req->data.nr };
                memcpy(ret->args, req->data.args, sizeof(ret->args));
        }
        seccomp_notify_free(req, resp);
        return r;
}

int broker_answer(int listener, uint64_t id, int error) {
        struct seccomp_notif *req = NULL;
        struct seccomp_notif_resp *resp = NULL;
        int r = notif_alloc(&req, &resp);

        if (r < 0)
                return r;
        *resp = (struct seccomp_notif_resp){ .id = id, .error = error ? -error : 0 };
        r = seccomp_notify_respond(listener, resp);
        seccomp_notify_free(req, resp);
        return r;
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS /* Linux 6.6 */
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

int broker_sync_wakeup(int listener) {
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0 ? -errno : 0;
}

/*
 * A NUL-terminated string of at most limit bytes at addr in the caller:
 * read a page at a time, so that a string ending just before an unmapped
 * page reads and one running into it is -EFAULT.  NULL for a NULL pointer.
 */
static int read_string(int mem, uint64_t addr, size_t limit, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t have = 0;

        *ret = NULL;
        if (addr == 0)
                return 0;
        if (!(buf = malloc(limit)))
                return -ENOMEM;
        while (have < limit) {
                size_t chunk = 4096 - ((addr + have) & 4095);
                ssize_t n;

                if (chunk > limit - have)
                        chunk = limit - have;
                n = pread(mem, buf + have, chunk, (off_t)(addr + have));
                if (n <= 0)
                        return -EFAULT;
                if (memchr(buf + have, '\0', n)) {
                        *ret = TAKE_PTR(buf);
                        return 0;
                }
                have += n;
        }
        return limit == PATH_LIMIT ? -ENAMETOOLONG : -EINVAL;
}

/* The caller's memory, or -ENOENT when its call is gone (the pid may have been reused before the open). */
static int open_caller_mem(int listener, const struct broker_notif *n) {
        char path[64];
        int mem;

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)n->pid);
        mem = open(path, O_RDONLY | O_CLOEXEC);
        if (mem < 0)
                mem = -errno;
        if (seccomp_notify_id_valid(listener, n->id) < 0) {
                if (mem >= 0)
                        close(mem);
                return -ENOENT;
        }
        return mem;
}

/* The call's arguments, copied once: nothing the caller changes afterwards matters. */
static int read_call(int listener, const struct broker_notif *n, struct broker_call *c, char *strings[4]) {
        _cleanup_close_ int mem = open_caller_mem(listener, n);
        int r;

        if (mem < 0)
                return mem;
        if (n->nr == SYS_mount) {
                *c = (struct broker_call){ .op = BROKER_OP_MOUNT, .flags = (unsigned long)n->args[3] };
                if ((r = read_string(mem, n->args[0], PATH_LIMIT, &strings[0])) < 0 ||
                    (r = read_string(mem, n->args[1], PATH_LIMIT, &strings[1])) < 0 ||
                    (r = read_string(mem, n->args[2], TYPE_LIMIT, &strings[2])) < 0 ||
                    (r = read_string(mem, n->args[4], DATA_LIMIT, &strings[3])) < 0)
                        return r;
        } else if (n->nr == SYS_umount2) {
                *c = (struct broker_call){ .op = BROKER_OP_UMOUNT, .flags = (unsigned long)n->args[1] };
                if ((r = read_string(mem, n->args[0], PATH_LIMIT, &strings[1])) < 0)
                        return r;
        } else
                return -ENOSYS;
        c->source = strings[0];
        c->target = strings[1];
        c->fstype = strings[2];
        c->data = strings[3];
        /* What was read is what the caller passed only while its call is still pending. */
        return seccomp_notify_id_valid(listener, n->id) < 0 ? -ENOENT : 0;
}

/*
 * Network filesystems: their source is an address, not a device.  A fixed
 * list, not the source's spelling: a device path may hold a ':' too
 * (/dev/block/7:99, /dev/disk/by-path/pci-0000:...).
 */
static bool fstype_is_network(const char *fstype) {
        static const char *const types[] = { "nfs",      "nfs4",     "cifs", "smb3",   "ceph", "9p",
                                             "virtiofs", "orangefs", "afs",  "lustre", NULL };

        for (size_t i = 0; types[i]; i++)
                if (streq(fstype, types[i]))
                        return true;
        return false;
}

/*
 * Whether source is only a name to the kernel: fstype is listed "nodev" in
 * /proc/filesystems, or is not listed (a module the mount may load) and is a
 * network filesystem.  Else the kernel looks source up as a device path:
 * device_source().
 */
static bool fstype_is_nodev(const char *fstype) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = open("/proc/filesystems", O_RDONLY | O_CLOEXEC);
        size_t size;

        if (fd < 0 || read_full_fd(fd, 65536, &buf, &size) < 0)
                return false;
        for (char *line = buf; line && *line;) {
                char *end = strchr(line, '\n'), *name;

                if (end)
                        *end = '\0';
                name = strchr(line, '\t');
                if (name && streq(name + 1, fstype))
                        return startswith(line, "nodev");
                line = end ? end + 1 : NULL;
        }
        return fstype_is_network(fstype);
}

/*
 * The source of a filesystem on a device: the caller's path, looked up in
 * its own root (no symlink out of it), must be a block device the
 * container was given (view->devices[*ret_index]); *ret_fd is our fd of
 * that node.
 */
static int device_source(pid_t pid, const char *source, const struct broker_view *view, int *ret_fd, size_t *ret_index,
                         char *why, size_t why_size) {
        char path[64];
        _cleanup_close_ int root = -EBADF;
        struct stat st;
        int fd;

        if (!source || source[0] != '/') {
                snprintf(why, why_size, "a filesystem on a device needs the device's absolute path as source");
                return -EPERM;
        }
        snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        fd = sys_openat2(root, source, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode)) {
                close(fd);
                return -ENOTBLK;
        }
        for (size_t i = 0; i < view->n_devices; i++)
                if (view->devices[i] == st.st_rdev) {
                        *ret_fd = fd;
                        *ret_index = i;
                        return 0;
                }
        close(fd);
        snprintf(why, why_size, "device %u:%u was not given to this container", major(st.st_rdev), minor(st.st_rdev));
        return -EPERM;
}

/*
 * What the kernel gets as the source of a mount on device (our fd of it,
 * the view's device i): the kernel records the string in mountinfo, where
 * the host's tools look a device's mounts up by name (mount-utils,
 * findmnt -S, resize2fs and mkfs's "is mounted" checks).  So the host's
 * path of the device, from the container's spec (not the caller), while it
 * still is that device; else /proc/self/fd/N, which names it to no one.
 */
static void device_name(const struct broker_view *view, size_t i, int device, char *buf, size_t size) {
        const char *path = view->device_paths ? view->device_paths[i] : NULL;
        struct stat st;

        if (path && path[0] == '/' && strlen(path) < size && stat(path, &st) == 0 && S_ISBLK(st.st_mode) &&
            st.st_rdev == view->devices[i])
                snprintf(buf, size, "%s", path);
        else
                snprintf(buf, size, "/proc/self/fd/%d", device);
}

/*
 * A FUSE mount: the kernel takes a connection only from a /dev/fuse opened
 * in the user namespace that owns the mount (the host's, so that pods may
 * use it), so we open one and mount with it.  The daemon then gets that
 * connection on its own open file: FUSE_DEV_IOC_CLONE attaches the file at
 * its fd=N (taken with pidfd_getfd) to our connection.  Every process that
 * shares that file serves it -- glusterfs mounts from a forked mount agent
 * and reads in its parent -- which installing our fd at N in the caller
 * alone (SECCOMP_IOCTL_NOTIF_ADDFD) would not give.
 */
static int do_fuse(int listener, const struct broker_notif *n, const struct broker_verdict *v,
                   const struct broker_call *c, const char *at, char *why, size_t why_size) {
        _cleanup_close_ int fuse = -EBADF, pidfd = -EBADF, theirs = -EBADF;
        _cleanup_free_ char *data = NULL;
        struct stat st;
        uint32_t ours;

        pidfd = sys_pidfd_open(n->pid, 0);
        if (pidfd < 0)
                return pidfd;
        /* The pid is the caller's only while its call is pending. */
        if (seccomp_notify_id_valid(listener, n->id) < 0)
                return -ENOENT;
        theirs = sys_pidfd_getfd(pidfd, v->fuse_fd);
        if (theirs < 0)
                return theirs == -EBADF ? -EINVAL : theirs;
        /* Anything else (a file of the caller's own FUSE mount) could block the ioctl below for ever. */
        if (fstat(theirs, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(10, 229)) {
                snprintf(why, why_size, "fd=%d is not /dev/fuse (character device 10:229)", v->fuse_fd);
                return -EINVAL;
        }
        if (!fuse_clone_crosses_userns()) {
                /* Its /dev/fuse is one serve_open() gave it, of the host's user namespace: mounted as it is. */
                if (asprintf(&data, "fd=%d%s%s", theirs, v->data && *v->data ? "," : "", v->data ?: "") < 0)
                        return -ENOMEM;
                return mount(c->source ?: c->fstype, at, c->fstype, v->flags, data) < 0 ? -errno : 0;
        }
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse < 0)
                return -errno;
        if (asprintf(&data, "fd=%d%s%s", fuse, v->data && *v->data ? "," : "", v->data ?: "") < 0)
                return -ENOMEM;
        if (mount(c->source ?: c->fstype, at, c->fstype, v->flags, data) < 0)
                return -errno;
        ours = (uint32_t)fuse;
        /* Not /dev/fuse, or already connected: the kernel refuses, and the mount must not stay daemonless. */
        if (ioctl(theirs, FUSE_DEV_IOC_CLONE, &ours) < 0) {
                int r = -errno;

                (void)umount2(at, MNT_DETACH);
                return r;
        }
        return 0;
}

static int do_bind(const struct broker_verdict *v, int source, int target) {
        struct mount_attr attr = {
                .attr_set = (v->flags & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0) |
                            (v->flags & MS_NOSUID ? MOUNT_ATTR_NOSUID : 0) |
                            (v->flags & MS_NODEV ? MOUNT_ATTR_NODEV : 0) |
                            (v->flags & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0),
        };
        _cleanup_close_ int tree = sys_open_tree(source, "",
                                                 AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                                         (v->flags & MS_REC ? AT_RECURSIVE : 0));
        int r;

        if (tree < 0)
                return tree;
        if ((r = sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr)) < 0)
                return r;
        return sys_move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* The call as the caller made it, in its own view (caller-view.h): where perform() finds its paths. */
struct caller {
        int root;                    /* its root, caller_enter()'s */
        const char *target, *source; /* its own paths, untranslated */
};

/* What is mounted at the caller's path now: an O_PATH fd of the top mount there, and which it is; *at kept if given. */
static int caller_top(const struct caller *who, const struct broker_view *view, const struct broker_policy *p,
                      const char *path, struct mount_ident *ret, struct resolved *ret_at, char *why, size_t why_size) {
        struct resolved at;
        int r = caller_resolve(who->root, view, p, path, &at, why, why_size);

        if (r < 0)
                return r;
        r = mount_top_at(at.parent_fd, at.name, &ret->id);
        ret->unique = r >= 0 ? fd_mount_unique_id(r) : 0;
        if (ret_at && r >= 0)
                *ret_at = at;
        else
                resolved_done(&at);
        return r;
}

/* Whether the mount on top at target is one the broker made for this container there (or one it cannot tell). */
static bool mount_is_ours(const struct broker_policy *p, const char *target, const struct mount_ident *now) {
        bool known = false;

        for (size_t i = 0; p->mounted_ids && p->mounted[i]; i++)
                if (streq(p->mounted[i], target)) {
                        if (mount_ident_same(&p->mounted_ids[i], now))
                                return true;
                        known = true;
                }
        return !known;
}

static int do_umount(const struct caller *who, const struct broker_view *view, const struct broker_policy *p,
                     const struct broker_verdict *v, const char *target, char *why, size_t why_size) {
        struct resolved at = { .parent_fd = -EBADF };
        struct mount_ident id = {};
        int fd = caller_top(who, view, p, who->target, &id, &at, why, why_size), r;

        if (fd < 0)
                return fd;
        /* Our fd is inside the mount: it would keep it busy. */
        close(fd);
        if (!mount_is_ours(p, target, &id)) {
                /* Host root mounted over it (the kubelet's own volume): that is not the container's to remove. */
                snprintf(why, why_size, "the mount on top of the target (ID %u) is not the one it made", id.id);
                r = -EPERM;
        } else
                r = umount_at(at.parent_fd, at.name, (int)v->flags);
        resolved_done(&at);
        return r;
}

/*
 * Which mount was just made at place (held from before the mount): found
 * with no walk that could wait on a FUSE daemon of the container's
 * (RESOLVE_CACHED, Linux 5.12), so that nothing between the mount(2) and
 * its record can block and leave a mount the record lacks.  Where the
 * kernel has no RESOLVE_CACHED, the plain lookup; where the entry would
 * have to be asked for, 0s (the target alone decides then).
 */
static void made_ident(const struct resolved *place, struct mount_ident *ret) {
        _cleanup_close_ int fd = sys_openat2(place->parent_fd, place->name, O_PATH | O_NOFOLLOW,
                                             RESOLVE_CACHED | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

        *ret = (struct mount_ident){};
        if (fd == -EINVAL || fd == -ENOSYS)
                fd = mount_top_at(place->parent_fd, place->name, &ret->id);
        else if (fd >= 0)
                (void)fd_mount_id(fd, &ret->id);
        if (fd >= 0)
                ret->unique = fd_mount_unique_id(fd);
}

/* An allowed mount of verdict v at the caller's target, open at target ("/proc/self/fd/N": at). */
static int perform_mount(int listener, const struct broker_notif *n, const struct broker_policy *p,
                         const struct broker_call *c, const struct broker_verdict *v, const struct broker_view *view,
                         const struct caller *who, int target, const char *at, char *why, size_t why_size) {
        _cleanup_close_ int device = -EBADF, source = -EBADF;
        char dev[PATH_LIMIT];
        struct mount_ident id;
        size_t i = 0;
        int r;

        switch (v->action) {
        case BROKER_DO_FUSE:
                /* fuseblk's source is a device the kernel opens in our namespace: not for the container to name. */
                if (startswith(c->fstype, "fuseblk")) {
                        snprintf(why, why_size, "fuseblk is not brokered (its device would be the host's)");
                        return -EPERM;
                }
                return do_fuse(listener, n, v, c, at, why, why_size);
        case BROKER_DO_BIND:
                source = caller_top(who, view, p, who->source, &id, NULL, why, why_size);
                return source < 0 ? source : do_bind(v, source, target);
        case BROKER_DO_MOUNT:
                if (fstype_is_nodev(c->fstype))
                        r = mount(c->source ?: c->fstype, at, c->fstype, v->flags, v->data) < 0 ? -errno : 0;
                else if ((r = device_source(n->pid, c->source, view, &device, &i, why, why_size)) >= 0) {
                        device_name(view, i, device, dev, sizeof(dev));
                        r = mount(dev, at, c->fstype, v->flags, v->data) < 0 ? -errno : 0;
                }
                return r;
        default:
                return -EPERM;
        }
}

/*
 * Performs an allowed verdict in the caller's mount namespace, on its
 * paths; *ret is the mount it made.  A refusal by its own checks, on what
 * the policy's strings cannot show (a path not where its bind is, a device
 * the container was not given, fuseblk), fills why; a failure of the
 * kernel's leaves it empty.
 */
static int perform(int listener, const struct broker_notif *n, const struct broker_policy *p,
                   const struct broker_call *c, const struct broker_verdict *v, const struct broker_view *view,
                   const struct caller *who, struct mount_ident *ret, char *why, size_t why_size) {
        struct resolved place = { .parent_fd = -EBADF };
        struct mount_ident id;
        char at[64];
        int target, r;

        if (v->action == BROKER_DO_UMOUNT)
                return do_umount(who, view, p, v, c->target, why, why_size);
        target = caller_top(who, view, p, who->target, &id, &place, why, why_size);
        if (target < 0)
                return target;
        snprintf(at, sizeof(at), "/proc/self/fd/%d", target);
        r = perform_mount(listener, n, p, c, v, view, who, target, at, why, why_size);
        close(target);
        if (r >= 0)
                made_ident(&place, ret);
        resolved_done(&place);
        return r;
}

bool broker_notif_is_open(const struct broker_notif *n) {
#ifdef SYS_open
        if (n->nr == SYS_open)
                return true;
#endif
        return n->nr == SYS_openat;
}

int broker_continue(int listener, uint64_t id) {
        struct seccomp_notif_resp resp = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? -errno : 0;
}

/* The kernel's answer to a trapped call: fd, installed in the caller, as its result. */
static int respond_fd(int listener, uint64_t id, int fd, bool cloexec) {
        struct seccomp_notif_addfd add = { .id = id,
                                           .flags = SECCOMP_ADDFD_FLAG_SEND,
                                           .srcfd = (uint32_t)fd,
                                           .newfd_flags = cloexec ? O_CLOEXEC : 0 };
        struct seccomp_notif_resp resp = { .id = id };
        int r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);

        if (r >= 0 || errno != EINVAL)
                return r < 0 ? -errno : 0;
        /* Before 5.14 (no ADDFD_FLAG_SEND): install it, then answer with its number. */
        add.flags = 0;
        if ((r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add)) < 0)
                return -errno;
        resp.val = r;
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? -errno : 0;
}

/*
 * A trapped open (seccomp-notify.h, trap_fuse_open): "/dev/fuse" gets a
 * /dev/fuse of ours, opened in the host's user namespace, so that do_fuse
 * can mount with the caller's own file where FUSE_DEV_IOC_CLONE does not
 * cross user namespaces (fuse-probe.h); every process that shares the file
 * then serves the mount, as with the clone.  Any other path goes on as the
 * caller asked: the kernel runs the call with the caller's own rights, so
 * what we read of the path cannot be raced into anything.
 */
static void serve_open(int listener, const struct broker_notif *n, const struct broker_view *view,
                       struct broker_outcome *out) {
        bool at = n->nr == SYS_openat;
        _cleanup_close_ int mem = open_caller_mem(listener, n), fuse = -EBADF;
        _cleanup_free_ char *path = NULL;
        int r;

        out->answered = true;
        /* Not given /dev/fuse, or a longer path (read_string fails): it goes on as made. */
        if (!view->fuse_device || mem < 0 ||
            read_string(mem, at ? n->args[1] : n->args[0], sizeof("/dev/fuse"), &path) < 0 || !path ||
            !streq(path, "/dev/fuse")) {
                (void)broker_continue(listener, n->id);
                return;
        }
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        r = fuse < 0 ? -errno : respond_fd(listener, n->id, fuse, (at ? n->args[2] : n->args[1]) & O_CLOEXEC);
        if (r < 0) {
                (void)broker_answer(listener, n->id, -r);
                snprintf(out->line, sizeof(out->line), "open /dev/fuse from pid %d: the host's: %s", (int)n->pid,
                         strerror(-r));
        }
}

void broker_serve(int listener, const struct broker_notif *n, const struct broker_policy *p,
                  const struct broker_view *view, struct broker_outcome *out) {
        char *strings[4] = {}, why[512] = "";
        _cleanup_free_ char *own_target = NULL, *own_source = NULL;
        struct caller who = { .root = -EBADF };
        struct broker_call c = {};
        struct broker_verdict v = { .fuse_fd = -1 };
        _cleanup_free_ char *line = NULL;
        int r;

        *out = (struct broker_outcome){};
        if (broker_notif_is_open(n)) {
                serve_open(listener, n, view, out);
                return;
        }
        r = read_call(listener, n, &c, strings);
        if (r == -ENOENT) {
                snprintf(out->line, sizeof(out->line), "a caller (pid %d) went away before its call was read",
                         (int)n->pid);
                out->error = ENOENT;
                goto done;
        }
        if (r < 0) {
                snprintf(out->line, sizeof(out->line), "%s from pid %d: unreadable arguments: %s",
                         n->nr == SYS_mount ? "mount" : "umount", (int)n->pid, strerror(-r));
                out->error = -r;
                goto answer;
        }
        /* A relative path is the caller's cwd's (mount.cifs mounts on "." after chdir()ing into its target). */
        r = caller_absolute(n->pid, &strings[1]);
        if (r >= 0 && c.op == BROKER_OP_MOUNT && (c.flags & MS_BIND))
                r = caller_absolute(n->pid, &strings[0]);
        if (r >= 0 && seccomp_notify_id_valid(listener, n->id) < 0)
                r = -ENOENT;
        if (r < 0) {
                out->error = r == -ENOENT ? ENOENT : -r;
                snprintf(out->line, sizeof(out->line), "%s from pid %d: its cwd: %s",
                         n->nr == SYS_mount ? "mount" : "umount", (int)n->pid, strerror(-r));
                goto answer;
        }
        /*
         * A path of the container's own tree is no host path, whatever it spells (a container given no
         * bind could name another pod's volume by its host path): one outside every bind is refused.
         * The policy decides on the host's paths; perform() works on the caller's own.
         */
        c.source = strings[0];
        c.target = strings[1];
        bool bind = c.op == BROKER_OP_MOUNT && (c.flags & MS_BIND) && c.source && c.source[0] == '/';
        if (c.target && c.target[0] == '/' && !(own_target = strdup(c.target)))
                r = -ENOMEM;
        else if (bind && !(own_source = strdup(c.source)))
                r = -ENOMEM;
        int rt = own_target ? view_translate(view, &strings[1]) : 0;
        int rs = bind && r == 0 ? view_translate(view, &strings[0]) : 0;
        c.source = strings[0];
        c.target = strings[1];
        if (r < 0 || rt == -ENOMEM || rs == -ENOMEM)
                r = -ENOMEM;
        else if (rt == -EPERM || rs == -EPERM) {
                char shown[96];

                v = (struct broker_verdict){ .action = BROKER_DENY, .error = EPERM, .fuse_fd = -1 };
                if (rt == -EPERM)
                        snprintf(v.why, sizeof(v.why), "target %s is in none of the container's binds",
                                 str_printable(c.target, shown, sizeof(shown)));
                else
                        snprintf(v.why, sizeof(v.why), "bind source is in none of the container's binds");
        } else
                r = broker_decide(p, &c, &v);
        if (r < 0) {
                out->error = -r;
                snprintf(out->line, sizeof(out->line), "%s", strerror(-r));
                goto answer;
        }
        who.target = own_target;
        who.source = own_source;
        if (v.action == BROKER_DENY)
                out->error = v.error;
        else if ((r = caller_enter(listener, n, &who.root)) < 0 ||
                 (r = perform(listener, n, p, &c, &v, view, &who, &out->mount, why, sizeof(why))) < 0) {
                out->error = -r;
                if (*why) {
                        /* One of perform's own checks (paths resolved, devices given): a refusal, logged as one. */
                        broker_verdict_done(&v);
                        v.action = BROKER_DENY;
                        v.error = -r;
                        snprintf(v.why, sizeof(v.why), "%s", why);
                } else
                        snprintf(why, sizeof(why), "%s", strerror(-r));
        } else {
                out->mounted = v.action != BROKER_DO_UMOUNT;
                out->unmounted = v.action == BROKER_DO_UMOUNT;
                snprintf(out->target, sizeof(out->target), "%s", c.target);
        }
        line = broker_describe(&c, &v);
        snprintf(out->line, sizeof(out->line), "%s%s%s", line ?: "(no description)",
                 v.action != BROKER_DENY && out->error ? ", but failed: " : "",
                 v.action != BROKER_DENY && out->error ? why : "");
answer:
done:
        closep(&who.root);
        broker_verdict_done(&v);
        for (size_t i = 0; i < ELEMENTSOF(strings); i++)
                free(strings[i]);
}
