/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount called as blkid, mkfs.ext4, fsck, resize2fs, xfs_growfs ... (the
 * links of libexecdir/kubemount/bin, first in a kubelet container's PATH):
 * the tool of that name from the image its type is mapped to (vcs-tools.h),
 * in a short-lived VCS container that gets only the devices its arguments
 * name (and, for the xfs tools, the mount points); with policy host, the
 * host's own tool in the host mount namespace.  The argv, stdout, stderr and
 * exit status are the tool's.  kubemount prints nothing of its own unless it
 * fails, as mount-utils parses what blkid prints; its own failures exit 125.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli.h"
#include "mounttable.h"
#include "multicall-iscsi.h"
#include "tool-devices.h"
#include "tool-resize.h"
#include "vcs-map.h"
#include "vcs-tools.h"

#define HOST_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The container's binds, planned in the host mount namespace where the agent opens their sources. */
struct plan {
        const struct vcs_tool *tool;
        char *const *argv;
        const char *kubelet_dir;
        struct km_vcs *v;
        const char *dest[2 * VCS_TOOL_PATHS_MAX + 2]; /* borrowed: argv's words or table's strings */
        char *owned[2 * VCS_TOOL_PATHS_MAX + 2];
        size_t n, n_owned;
        struct km_mount_table *table; /* loaded on first need */
        const char *device, *volume;  /* a device argument mounted at a volume (VCS_TOOL_DEVICE_MOUNT) */
};

static void plan_done(struct plan *p) {
        for (size_t i = 0; i < p->n_owned; i++)
                free(p->owned[i]);
        km_mount_table_free(p->table);
}

static const char *keep(struct plan *p, char *s) {
        if (s && p->n_owned >= ELEMENTSOF(p->owned)) {
                free(s);
                errno = E2BIG;
                return NULL;
        }
        if (s)
                p->owned[p->n_owned++] = s;
        return s;
}

/* source (a host path) bound at dest, once per dest, never below what propagates back. */
static int add_bind(struct plan *p, const char *source, const char *dest, struct km_error *err) {
        int r;

        for (size_t i = 0; i < p->n; i++)
                if (streq(p->dest[i], dest))
                        return 0;
        if (p->n >= ELEMENTSOF(p->dest))
                return error_set_plain(err, -E2BIG, "more than %zu devices and mount points", ELEMENTSOF(p->dest));
        r = km_vcs_add_mount(p->v, source, dest, KM_MAKE_SLAVE, false);
        if (r < 0)
                return error_set(err, r, "bind %s", dest);
        p->dest[p->n++] = dest;
        return 0;
}

static int load_table(struct plan *p, struct km_error *err) {
        return p->table ? 0 : mount_table_load(NULL, &p->table, err);
}

/* Below the kubelet dir, not the dir itself: a volume's mount, never the node's disks or the whole dir. */
static bool volume_path(const struct plan *p, const char *path) {
        return path_is_below(path, p->kubelet_dir) && !streq(path, p->kubelet_dir);
}

/*
 * The device node the mount table names for dev, bound at that name: a tool
 * that finds the filesystem's mount (xfs_growfs, resize2fs) opens the device
 * by the name the table shows.
 */
static int bind_table_source(struct plan *p, dev_t dev, struct km_error *err) {
        struct stat st;
        int r = load_table(p, err);

        if (r < 0)
                return r;
        for (size_t i = 0; i < km_mount_table_size(p->table); i++) {
                const struct km_mount *m = km_mount_table_at(p->table, i);
                const char *source = km_mount_source(m);

                if (mount_devno(m) != dev || !source || source[0] != '/')
                        continue;
                if (stat(source, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev)
                        continue;
                return add_bind(p, keep(p, realpath(source, NULL)) ?: source, source, err);
        }
        return 0;
}

static int bind_device(struct plan *p, const char *path, dev_t dev, struct km_error *err) {
        const char *real = keep(p, realpath(path, NULL));
        int r;

        if (!real)
                return error_set(err, -errno, "%s", path);
        r = add_bind(p, real, path, err);
        if (r < 0 || !(p->tool->flags & VCS_TOOL_DEVICE_MOUNT))
                return r;
        /* resize2fs grows a mounted ext4 through its mount point: one of the device's volumes. */
        r = load_table(p, err);
        for (size_t i = 0; r >= 0 && i < km_mount_table_size(p->table); i++) {
                const struct km_mount *m = km_mount_table_at(p->table, i);
                const char *target = km_mount_target(m);

                if (mount_devno(m) != dev || !target || !volume_path(p, target))
                        continue;
                p->device = path;
                p->volume = target;
                r = add_bind(p, target, target, err);
                return r < 0 ? r : bind_table_source(p, dev, err);
        }
        return r;
}

static int bind_mount_point(struct plan *p, const char *path, dev_t dev, struct km_error *err) {
        int r;

        if (!volume_path(p, path))
                return 0; /* the tool says what it makes of a path it cannot see */
        r = add_bind(p, path, path, err);
        return r < 0 ? r : bind_table_source(p, dev, err);
}

static int plan_in_host(void *userdata, struct km_error *err) {
        struct plan *p = userdata;
        size_t idx[VCS_TOOL_PATHS_MAX];
        int n = vcs_tool_path_args((const char *const *)p->argv, idx, ELEMENTSOF(idx));

        if (n < 0)
                return error_set_plain(err, n, "more than %d path arguments", VCS_TOOL_PATHS_MAX);
        for (int i = 0; i < n; i++) {
                const char *arg = p->argv[idx[i]];
                struct stat st;
                int r = 0;

                /* A missing path or one of another kind: the tool's own error says so. */
                if (stat(arg, &st) < 0)
                        continue;
                if (S_ISBLK(st.st_mode) && (r = load_table(p, err)) >= 0 &&
                    (r = tool_device_check(arg, p->tool->flags & VCS_TOOL_WRITES, p->kubelet_dir, p->table, err)) >= 0)
                        r = p->v ? bind_device(p, arg, st.st_rdev, err) : 0;
                else if (p->v && S_ISDIR(st.st_mode) && (p->tool->flags & VCS_TOOL_MOUNT_POINT))
                        r = bind_mount_point(p, arg, st.st_dev, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int resize_in_host(void *userdata, struct km_error *err) {
        struct plan *p = userdata;

        return tool_resize_online(p->device, p->volume, err);
}

/* ---- policy host: the host's own tool ------------------------------------- */

struct host_exec {
        const char *name;
        char **argv;
        bool ran, found; /* in the host; a program of that name there */
};

static int exec_in_host(void *userdata, struct km_error *err) {
        static const char *const dirs[] = { "/sbin", "/usr/sbin", "/bin", "/usr/bin" };
        struct host_exec *h = userdata;
        struct stat self, st;
        char path[PATH_MAX];

        h->ran = true;
        if (stat("/proc/self/exe", &self) < 0)
                return error_set(err, -errno, "/proc/self/exe");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s", dirs[i], h->name);
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                h->found = true;
                /* A link to kubemount there would call us again, and again. */
                if (st.st_dev == self.st_dev && st.st_ino == self.st_ino)
                        return error_set_plain(err, -ELOOP, "%s in the host is kubemount itself", path);
                /* Not the caller's PATH, which starts with our links: fsck finds fsck.TYPE there. */
                if (setenv("PATH", HOST_PATH, 1) < 0)
                        return error_set(err, -errno, "setenv");
                execv(path, h->argv);
                return error_set(err, -errno, "cannot run %s in the host", path);
        }
        return error_set_plain(err, -ENOENT, "not found in the host's /sbin, /usr/sbin, /bin or /usr/bin");
}

static int run_host(struct km_host *host, const struct vcs_tool *tool, char **argv, const char *kubelet_dir) {
        _cleanup_(plan_done) struct plan checks = { tool, argv, kubelet_dir, NULL }; /* no container: checks only */
        struct host_exec h = { tool->name, argv, false, false };
        struct km_error err = {};
        char *arg0 = argv[0];
        int r;

        if (km_host_run(host, plan_in_host, &checks, &err) < 0) {
                cli_error("%s: %s", tool->name, err.message);
                return EXIT_TOOL_FAILED;
        }
        argv[0] = (char *)tool->name; /* as in the image: the name, wherever the link was */
        r = km_host_run(host, exec_in_host, &h, &err);
        argv[0] = arg0;

        cli_error("%s: %s (policy host for %s)", tool->name, err.message, tool->type);
        if (!h.ran)
                return EXIT_TOOL_FAILED;
        if (!h.found)
                return 127;
        return r == -ELOOP || r == -EPERM || r == -EACCES || r == -ENOEXEC ? 126 : EXIT_TOOL_FAILED;
}

/* ---- the image ----------------------------------------------------------------- */

static int run_image(struct km_host *host, const struct vcs_tool *tool, const struct vcs_entry *e, char **argv,
                     const char *kubelet_dir) {
        _cleanup_(plan_done) struct plan p = { tool, argv, kubelet_dir, NULL };
        struct km_image_options *io = km_image_options_new();
        struct km_agent *agent = NULL;
        struct km_error err = {};
        int fds[3] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO };
        _cleanup_close_ int null = -EBADF;
        int r, status = -1;
        char *arg0 = argv[0];

        /* A caller that closed its stdin: the tool reads nothing, as it would on the host. */
        if (fcntl(STDIN_FILENO, F_GETFD) < 0)
                fds[0] = null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        p.v = km_vcs_new();
        if (!p.v || !io) {
                km_vcs_free(p.v);
                km_image_options_free(io);
                cli_error("%s: out of memory", tool->name);
                return EXIT_TOOL_FAILED;
        }
        /* The tool by its name, found in the image's PATH; the arguments exactly as given. */
        argv[0] = (char *)tool->name;
        r = km_vcs_set_command(p.v, argv);
        argv[0] = arg0;
        if (r >= 0)
                r = km_vcs_set_kubelet_dir(p.v, kubelet_dir);
        km_vcs_set_host_network(p.v, false);
        /* The tools mount nothing (xfs_growfs works on a mount point bound in): the broker allows no type. */
        km_vcs_set_privileged(p.v, e->privileged);
        if (r < 0) {
                error_set(&err, r, "container");
        } else {
                /* Never a pull behind a kubelet's mkfs: the store has the image or we say how to get it. */
                km_image_options_set_pull(io, false);
                r = km_vcs_set_image(host, p.v, e->image, io, &err);
                char shown[PATH_MAX + 16];

                if (r == -ENOENT)
                        error_set_plain(&err, r,
                                        "image %s (%s, for %s) is not in the store: run 'kubemount vcs pull' "
                                        "or 'kubemount pull %s'",
                                        e->image, str_printable(e->source, shown, sizeof(shown)), tool->type, e->image);
        }
        if (r >= 0)
                r = km_host_run(host, plan_in_host, &p, &err);
        /* mount-utils' online expansion, which no container may make (tool-resize.c). */
        if (r >= 0 && p.volume && streq(tool->name, "resize2fs") && argv[1] && !argv[2]) {
                r = km_host_run(host, resize_in_host, &p, &err);
                fflush(stdout);
                status = r < 0 ? 1 : 0;
                if (r < 0)
                        cli_error("%s: %s", tool->name, err.message);
                r = 0;
                goto done;
        }
        if (r >= 0)
                r = km_agent_new(host, NULL, &agent);
        if (r >= 0)
                r = km_vcs_run_fds(agent, p.v, fds, &status, &err);
        if (r < 0)
                cli_error("%s: %s", tool->name, err.message[0] ? err.message : strerror(-r));
done:
        km_agent_free(agent);
        km_vcs_free(p.v);
        km_image_options_free(io);
        return r < 0 || status < 0 ? EXIT_TOOL_FAILED : status;
}

int multicall_tool(int argc, char **argv) {
        struct vcs_map_sources s = {};
        _cleanup_(vcs_map_freep) struct vcs_map *m = NULL;
        struct km_host *host = NULL;
        const char *kubelet_dir = getenv("KUBEMOUNT_KUBELET_DIR");
        const struct vcs_entry *e;
        struct km_error err = {};
        struct vcs_tool tool;
        int r;

        if (argc < 1 || !vcs_tool_lookup(basename(argv[0]), &tool))
                return EXIT_TOOL_FAILED;
        if (!kubelet_dir || !*kubelet_dir)
                kubelet_dir = "/var/lib/kubelet";
        if (kubelet_dir[0] != '/') {
                cli_error("%s: KUBEMOUNT_KUBELET_DIR: '%s' is not an absolute path", tool.name, kubelet_dir);
                return EXIT_TOOL_FAILED;
        }
        /* The table as `kubemount vcs list` shows it from the same environment; its warnings are not
         * printed here (they would be part of the tool's output). */
        if (dlopen_jansson() < 0) {
                cli_error("%s: cannot load libjansson, which reading the mappings needs", tool.name);
                return EXIT_TOOL_FAILED;
        }
        vcs_map_sources_from_env(&s);
        r = vcs_map_load(&s, &m, &err);
        if (r < 0) {
                cli_error("%s: %s", tool.name, r == -ENOMEM ? "out of memory" : err.message);
                return EXIT_TOOL_FAILED;
        }
        e = vcs_map_find(m, tool.type);
        if (!e) {
                cli_error("%s: no image is mapped to %s (see 'kubemount vcs list')", tool.name, tool.type);
                return EXIT_TOOL_FAILED;
        }
        if (km_host_new(NULL, &host, &err) < 0) {
                cli_error("%s: %s", tool.name, err.message);
                return EXIT_TOOL_FAILED;
        }
        if (e->policy == VCS_POLICY_HOST)
                r = run_host(host, &tool, argv, kubelet_dir);
        else if (tool.flags & VCS_TOOL_ISCSI)
                r = multicall_iscsiadm(host, e, argv);
        else
                r = run_image(host, &tool, e, argv, kubelet_dir);
        km_host_free(host);
        return r;
}
