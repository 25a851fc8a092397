/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entering the host mount namespace in-process.  setns(CLONE_NEWNS) is
 * refused while the fs_struct is shared with other threads, so the calling
 * thread first takes a private one with unshare(CLONE_FS); only that thread
 * moves, and it comes back with its root and working directory restored.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "hostns.h"
#include "sd-protocol.h"

static int same_ns(int fd_a, int fd_b) {
        struct stat a, b;

        if (fstat(fd_a, &a) < 0 || fstat(fd_b, &b) < 0)
                return -errno;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Opens the namespace at path and the calling thread's: 1 if they are the same, else 0. */
static int open_namespaces(const char *path, int *ret_target, int *ret_self, struct km_error *err) {
        int r;

        *ret_target = open(path, O_RDONLY | O_CLOEXEC);
        if (*ret_target < 0)
                return error_set(err, -errno, "host mount namespace %s", path);
        *ret_self = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (*ret_self < 0)
                return error_set(err, -errno, "open /proc/thread-self/ns/mnt");
        r = same_ns(*ret_target, *ret_self);
        return r < 0 ? error_set(err, r, "host mount namespace %s", path) : r;
}

KM_EXPORT int km_host_new(const char *mount_ns, struct km_host **ret, struct km_error *err) {
        const char *env = getenv("KUBEMOUNT_HOST_MOUNT_NS");
        struct km_host *h;

        if (!mount_ns || !*mount_ns)
                mount_ns = env && *env ? env : KM_HOST_MOUNT_NS_DEFAULT;
        h = calloc(1, sizeof(*h));
        if (!h || !(h->mount_ns = strdup(mount_ns))) {
                free(h);
                return error_set(err, -ENOMEM, "host mount namespace %s", mount_ns);
        }
        *ret = h;
        return 0;
}

KM_EXPORT void km_host_free(struct km_host *h) {
        if (!h)
                return;
        free(h->mount_ns);
        free(h);
}

KM_EXPORT int km_host_is_current(const struct km_host *h, struct km_error *err) {
        _cleanup_close_ int target = -EBADF, self = -EBADF;

        return h ? open_namespaces(h->mount_ns, &target, &self, err) : 1;
}

/* Set when a thread could not come back: it must not be used for another switch. */
static __thread bool stranded;

KM_EXPORT int km_host_run(const struct km_host *h, int (*fn)(void *userdata, struct km_error *err), void *userdata,
                          struct km_error *err) {
        _cleanup_close_ int target = -EBADF, self = -EBADF, root = -EBADF, cwd = -EBADF;
        const char *path = h ? h->mount_ns : NULL;
        int r, back;

        if (!h)
                return fn(userdata, err); /* the calling thread's own namespace */
        if (stranded)
                return error_set_plain(err, -EIO, "this thread could not return from a host mount namespace earlier");
        r = open_namespaces(path, &target, &self, err);
        if (r < 0)
                return r;
        if (r > 0)
                return fn(userdata, err); /* already there: no switch */

        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0 || cwd < 0)
                return error_set(err, -errno, "save root and working directory");
        if (unshare(CLONE_FS) < 0)
                return error_set(err, -errno, "unshare(CLONE_FS)");
        if (setns(target, CLONE_NEWNS) < 0)
                return error_set(err, -errno, "enter host mount namespace %s", path);

        journal_connect_asked(); /* the host's journal, reached in this entry instead of one of its own */
        r = fn(userdata, err);

        back = setns(self, CLONE_NEWNS) < 0 ? -errno : 0;
        if (back == 0 && (fchdir(root) < 0 || chroot(".") < 0 || fchdir(cwd) < 0))
                back = -errno;
        if (back < 0) {
                /* The thread is still in the host namespace: the caller must stop using it. */
                stranded = true;
                return error_set(err, back, "return from host mount namespace %s", path);
        }
        return r;
}

struct path_call {
        const char *path;
        int (*fn)(const char *path, void *userdata, struct km_error *err);
        void *userdata;
};

static int path_call_run(void *userdata, struct km_error *err) {
        struct path_call *c = userdata;
        return c->fn(c->path, c->userdata, err);
}

int host_run_path(const struct km_host *h, const char *path,
                  int (*fn)(const char *path, void *userdata, struct km_error *err), void *userdata,
                  struct km_error *err) {
        _cleanup_free_ char *abs = NULL;
        struct path_call c = { path, fn, userdata };

        if (!h)
                return fn(path, userdata, err);
        /* Absolute paths stay as given (messages show them so); relative ones are the caller's. */
        if (path && *path && path[0] != '/') {
                abs = path_absolute(path);
                if (!abs)
                        return error_set(err, -ENOMEM, "%s", path);
                c.path = abs;
        }
        return km_host_run(h, path_call_run, &c, err);
}
