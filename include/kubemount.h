/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkubemount: mounts in the host mount namespace for kubelets that may run
 * in a container.
 *
 * Conventions: functions return >= 0 on success (0/1 for predicates) and a
 * negative errno on failure.  Every public call that can fail takes a
 * struct km_error * last (may be NULL) that receives a one-line message.
 * Every call that acts on or reads mounts, images or the agent takes the
 * host (a struct km_host *, below) first.  Types are opaque, made and freed
 * by the library; struct km_error is the one exception (see there).  The
 * library never prints and never exits.
 */
#ifndef KUBEMOUNT_H
#define KUBEMOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Errors: a value type the caller owns (usually on its stack), so that it can
 * be filled after fork() without malloc and read after the call with nothing
 * to free.  Its size is part of the ABI, as crun's libcrun_error_t body is
 * part of its API: a code and one line of text are all an error ever holds.
 */
#define KM_ERROR_MAX 512
struct km_error {
        int code;                   /* negative errno, 0 when unset */
        char message[KM_ERROR_MAX]; /* "what PATH: why", no trailing newline */
};

const char *km_version(void);

/* Debug logging hook: the library reports steps (e.g. umount fallbacks). */
enum km_log_level { KM_LOG_ERR = 3, KM_LOG_WARNING = 4, KM_LOG_NOTICE = 5, KM_LOG_INFO = 6, KM_LOG_DEBUG = 7 };
typedef void (*km_log_fn)(int level, const char *message, void *userdata);
void km_log_set(km_log_fn fn, void *userdata, int max_level);
/*
 * Within a km_log_fn call: the fields of an event ("MESSAGE_ID=...", then
 * "KUBEMOUNT_TARGET=...", ...; NULL-terminated), NULL for a plain message.
 * Events (a mount, an unmount, a refusal, a container's start and exit) reach
 * the function whatever its max_level, so that it can keep an audit trail
 * (kubemount's CLI sends them to the journal); their values are masked.
 */
const char *const *km_log_fields(void);

/*
 * Kernel feature use.  On the mount path, everything newer than Linux 5.4 has a
 * fallback.  KUBEMOUNT_COMPAT in the environment forces fallbacks: "old-kernel"
 * is a 5.4 kernel (no statx mount attributes, statmount, mount_setattr or
 * close_range), "no-mount-api" also drops open_tree/fsopen (pre-5.2), or a
 * comma list of statx, statmount, mount_setattr, mount_api, close_range,
 * clone3, execveat.  km_features_disable() does the same in-process.
 */
enum {
        KM_FEATURE_STATX_MNT = 1u << 0,     /* statx STATX_ATTR_MOUNT_ROOT / STATX_MNT_ID (5.8) */
        KM_FEATURE_STATMOUNT = 1u << 1,     /* statmount(2) (6.8) */
        KM_FEATURE_MOUNT_SETATTR = 1u << 2, /* mount_setattr(2) (5.12) */
        KM_FEATURE_MOUNT_API = 1u << 3,     /* open_tree, move_mount, fsopen, fsmount (5.2) */
        KM_FEATURE_ALL = 0xfu,
};
void km_features_disable(unsigned mask);
unsigned km_features_enabled(void);

/*
 * ---- the host: the mount namespace the calls below act in ----
 *
 * Made once and passed first to every call on mounts, images or the agent;
 * NULL means the calling thread's own mount namespace.  Nothing is opened
 * here: each call opens the namespace file, enters it in the calling thread
 * only (setns, after unshare(CLONE_FS)) unless it is there already, and
 * comes back with root and working directory restored, so multi-threaded
 * callers are safe.  The first switch gives the thread its own fs context:
 * from then on its working directory and umask are its own.  Paths are the
 * host's; a relative path or mount target given to the mount calls is made
 * absolute in the caller's directory first.
 */
struct km_host;
#define KM_HOST_MOUNT_NS_DEFAULT "/proc/1/ns/mnt"
/* mount_ns: the host's mount namespace file; NULL or "": $KUBEMOUNT_HOST_MOUNT_NS, else /proc/1/ns/mnt. */
int km_host_new(const char *mount_ns, struct km_host **ret, struct km_error *err);
void km_host_free(struct km_host *h);
/* 1 if the calling thread is in h's namespace (always for NULL), 0 if not; < 0 if its file cannot be opened. */
int km_host_is_current(const struct km_host *h, struct km_error *err);
/*
 * A caller's own steps in h's namespace: fn runs there in the calling thread,
 * as the calls below do theirs.  Inside fn pass NULL as the host: the thread
 * is there already, and h's namespace file may not exist from there.
 */
int km_host_run(const struct km_host *h, int (*fn)(void *userdata, struct km_error *err), void *userdata,
                struct km_error *err);

/* ---- mount table (libmount; mountinfo path injectable for tests) ---- */
struct km_mount_table;
struct km_mount;

/* The mount table of h's namespace; or, with mountinfo, that file's (a test fixture: pass a NULL h). */
int km_mount_table_load(const struct km_host *h, const char *mountinfo, struct km_mount_table **ret,
                        struct km_error *err);
void km_mount_table_free(struct km_mount_table *t);
size_t km_mount_table_size(const struct km_mount_table *t);
const struct km_mount *km_mount_table_at(const struct km_mount_table *t, size_t i);
/* The last (topmost) mount whose mount point is exactly path, or NULL. */
const struct km_mount *km_mount_table_find_target(const struct km_mount_table *t, const char *path);
/*
 * GetMountRefs (mount-utils SearchMountPoints) for an absolute, canonical
 * path, a mount point or not: the mount points that show the directory path
 * names (same device, root = the holding mount's root + the rest of path),
 * the holding mount itself left out.  For a directory inside a mount these
 * are its binds (a subPath source), for a plain directory usually none.
 * *ret is a NULL-terminated array freed with km_strv_free().  Returns the
 * count; -ENOENT when no mount of the table holds path.
 */
int km_mount_table_refs(const struct km_mount_table *t, const char *path, char ***ret, struct km_error *err);
/*
 * The same for any path in h's namespace, as GetMountRefs takes it: symlinks
 * followed first; a path that does not exist has no refs (returns 0), nor has
 * a corrupted mount (with a warning through the log hook).
 */
int km_mount_refs(const struct km_host *h, const char *path, char ***ret, struct km_error *err);
void km_strv_free(char **strv);

enum {
        KM_PROPAGATION_PRIVATE = 0,
        KM_PROPAGATION_SHARED = 1u << 0,
        KM_PROPAGATION_SLAVE = 1u << 1,
        KM_PROPAGATION_UNBINDABLE = 1u << 2,
};
unsigned km_mount_id(const struct km_mount *m);
unsigned km_mount_parent_id(const struct km_mount *m);
const char *km_mount_target(const struct km_mount *m);
const char *km_mount_source(const struct km_mount *m);
const char *km_mount_fstype(const struct km_mount *m);
const char *km_mount_root(const struct km_mount *m);
const char *km_mount_vfs_options(const struct km_mount *m);
const char *km_mount_fs_options(const struct km_mount *m);
/* VFS and filesystem options merged as findmnt shows them, secrets masked; free(). */
char *km_mount_options_masked(const struct km_mount *m);
unsigned km_mount_propagation(const struct km_mount *m);
unsigned km_mount_peer_group(const struct km_mount *m);
unsigned km_mount_master(const struct km_mount *m);
/* "shared", "private", "slave,shared" ... as findmnt prints it. */
const char *km_propagation_name(unsigned propagation);

/* ---- mount points, O(1) in the number of mounts ---- */
/* 1: path is a mount point, 0: not, negative errno (-ENOENT for a missing path). */
int km_is_mount_point(const struct km_host *h, const char *path, struct km_error *err);
/* True for the errors of a corrupted mount (ENOTCONN, ESTALE, EIO, ...). */
bool km_error_is_corrupted_mount(int r);

/* What the mount that holds path looks like (the deepest one); km_mount_info_free() it. */
struct km_mount_info;
int km_mount_info_of(const struct km_host *h, const char *path, struct km_mount_info **ret, struct km_error *err);
void km_mount_info_free(struct km_mount_info *i);
uint64_t km_mount_info_id(const struct km_mount_info *i);          /* the id mountinfo shows (field 1) */
unsigned km_mount_info_propagation(const struct km_mount_info *i); /* KM_PROPAGATION_* */
unsigned km_mount_info_peer_group(const struct km_mount_info *i);
unsigned km_mount_info_master(const struct km_mount_info *i);
bool km_mount_info_is_mount_point(const struct km_mount_info *i); /* path itself is the mount point */
const char *km_mount_info_target(const struct km_mount_info *i);  /* mount point of the holding mount */

/* ---- propagation ---- */
enum km_propagation_kind { KM_MAKE_SHARED, KM_MAKE_SLAVE, KM_MAKE_PRIVATE, KM_MAKE_UNBINDABLE };
int km_propagation_set(const struct km_host *h, const char *path, enum km_propagation_kind kind, bool recursive,
                       struct km_error *err);
/*
 * Make sure mounts under path propagate (kubemount setup): create path and
 * its missing parents (0755); if the mount holding path is shared do nothing
 * (returns 0); otherwise bind path onto itself if it is not a mount point yet
 * and make it rshared (returns 1).  Idempotent: never stacks mounts.
 */
int km_ensure_shared(const struct km_host *h, const char *path, struct km_error *err);

/* ---- mount / umount ---- */
struct km_mount_spec;
enum {
        KM_MOUNT_BIND = 1u << 0,
        KM_MOUNT_RBIND = 1u << 1,
        KM_MOUNT_NO_CANONICALIZE = 1u << 2, /* mount -c: recorded; targets are always walked by kubemount itself */
        KM_MOUNT_READ_ONLY = 1u << 3,
        KM_MOUNT_READ_WRITE = 1u << 4,
        KM_MOUNT_FAKE = 1u << 5,
        KM_MOUNT_VERBOSE = 1u << 6,
};
struct km_mount_spec *km_mount_spec_new(void);
void km_mount_spec_free(struct km_mount_spec *s);
int km_mount_spec_set_source(struct km_mount_spec *s, const char *source);
int km_mount_spec_set_target(struct km_mount_spec *s, const char *target);
int km_mount_spec_set_fstype(struct km_mount_spec *s, const char *fstype);
/* Appends comma-separated options; may be called repeatedly like mount -o. */
int km_mount_spec_add_options(struct km_mount_spec *s, const char *options);
/* Options that must never be logged or shown (passwords, keys). */
int km_mount_spec_add_sensitive_options(struct km_mount_spec *s, const char *options);
void km_mount_spec_set_flags(struct km_mount_spec *s, unsigned flags);
/* --make-[r]shared etc.; applied after the mount, or alone when no source. */
void km_mount_spec_set_propagation(struct km_mount_spec *s, enum km_propagation_kind kind, bool recursive);
/*
 * Targets and bind sources at or below dir (e.g. the kubelet dir) must not
 * pass through a symlink or ".." after dir: a pod cannot redirect a mount to
 * /etc.  Refused, too, when dir cannot be looked at (fail closed).
 */
int km_mount_spec_set_confine(struct km_mount_spec *s, const char *dir);
/*
 * As km_mount_spec_set_confine() for a default nobody named (such as
 * /var/lib/kubelet when the kubelet may use another --root-dir): fail
 * closed, a target that the walk does not find inside dir is refused
 * (excode 1, usage), since confinement would silently not apply to it.
 */
int km_mount_spec_set_confine_default(struct km_mount_spec *s, const char *dir);
/* Options as they may be shown: sensitive values replaced by "<masked>". */
char *km_mount_spec_describe(const struct km_mount_spec *s);

/* Mount in h's namespace.  On failure *excode (if not NULL) is set to a mount(8) exit code. */
int km_mount(const struct km_host *h, const struct km_mount_spec *s, int *excode, struct km_error *err);

enum {
        KM_UMOUNT_FORCE = 1u << 0,            /* MNT_FORCE right away */
        KM_UMOUNT_LAZY = 1u << 1,             /* MNT_DETACH right away */
        KM_UMOUNT_RECURSIVE = 1u << 2,        /* everything under target, deepest first */
        KM_UMOUNT_CONFINE_REQUIRED = 1u << 3, /* confine is a default nobody named: see below */
};
/*
 * Unmount target in h's namespace.  timeout_ms > 0: if the normal unmount
 * does not finish in time, retry with MNT_FORCE, then MNT_DETACH, logging
 * each step.  Corrupted mounts (dead FUSE daemon, stale NFS handle) unmount normally.
 * confine (may be NULL): as km_mount_spec_set_confine(), a target below it
 * may not pass through a symlink or "..".  With KM_UMOUNT_CONFINE_REQUIRED
 * a target that the walk does not find inside confine is refused, as
 * km_mount_spec_set_confine_default() does for mounts.
 */
int km_umount(const struct km_host *h, const char *target, const char *confine, unsigned flags, int timeout_ms,
              int *excode, struct km_error *err);

/* Mount options: mask values of sensitive keys ("password=<masked>"). */
char *km_options_mask(const char *options);

/* ---- VCS containers: volume client software run from a root filesystem ---- */

/*
 * A VCS container description.  The container gets new mount, pid, uts and
 * ipc namespaces, the host network unless km_vcs_set_host_network(v, false),
 * a fresh /proc, /dev and read-only /sys, the VCS capability set (mount and
 * FUSE allowed, nothing inheritable or ambient), no_new_privs and the default
 * seccomp filter.  Binds made KM_MAKE_SHARED carry mounts made in the
 * container to the host (the source must be on a shared mount there).
 */
struct km_vcs;
struct km_image_options;
struct km_vcs *km_vcs_new(void);
void km_vcs_free(struct km_vcs *v);
int km_vcs_set_rootfs(struct km_vcs *v, const char *dir);
/*
 * Instead of a root filesystem: REF's from the image store in h's namespace
 * (pulled when missing, with o's settings; see km_image_pull), with its Env,
 * Cmd and WorkingDir as defaults, and with a writable layer of its own over
 * it: the store's tree is never written.
 */
int km_vcs_set_image(const struct km_host *h, struct km_vcs *v, const char *ref, const struct km_image_options *o,
                     struct km_error *err);
int km_vcs_set_name(struct km_vcs *v, const char *name);
int km_vcs_set_command(struct km_vcs *v, char *const *argv);
int km_vcs_add_env(struct km_vcs *v, const char *assignment); /* "K=V" */
int km_vcs_add_mount(struct km_vcs *v, const char *source, const char *destination, enum km_propagation_kind kind,
                     bool readonly);
/*
 * The kubelet dir (default /var/lib/kubelet): a mount source below it may not
 * pass through a symlink or "..", as with km_mount_spec_set_confine().
 */
int km_vcs_set_kubelet_dir(struct km_vcs *v, const char *dir);
int km_vcs_set_cwd(struct km_vcs *v, const char *dir);
/* "crun", "runc" or a path: the agent runs the same bundle with that OCI runtime; NULL or "embedded": its own. */
int km_vcs_set_runtime(struct km_vcs *v, const char *runtime);
void km_vcs_set_host_network(struct km_vcs *v, bool host);
void km_vcs_set_host_dev(struct km_vcs *v, bool host);
void km_vcs_set_readonly(struct km_vcs *v, bool readonly);
void km_vcs_set_timeout_ms(struct km_vcs *v, int timeout_ms);
/*
 * Unprivileged (the default): the container runs in a user namespace of its
 * own (its root is an unprivileged host id), holds no capability in the
 * host's, and every mount(2) or umount2(2) it makes is trapped and made by
 * the agent's mount broker after a policy check (docs/SECURITY.md).
 * Privileged: the VCS capabilities in the host's user namespace, its own
 * mounts, as before; for clients that cannot work otherwise.
 */
void km_vcs_set_privileged(struct km_vcs *v, bool privileged);
/* An fstype the broker mounts for it (none by default; "fuse.sshfs", "tmpfs", ...). */
int km_vcs_allow_mount(struct km_vcs *v, const char *fstype);
/*
 * A path where the broker mounts for it, and below (repeatable; none by
 * default, so that nothing is mounted): a pod's volume dir or a plugin's
 * dir below the kubelet dir, never the kubelet's own dirs nor another live
 * container's target (the agent refuses the run otherwise).
 */
int km_vcs_add_mount_target(struct km_vcs *v, const char *path);
/* The OCI runtime-spec config.json the container is made from (free()). */
char *km_vcs_config_json(const struct km_vcs *v, struct km_error *err);

/*
 * The agent makes the containers: a host process (`kubemount agent`) that a
 * containerized caller reaches through STATE_DIR/agent.sock in h's mount
 * namespace, so the containers live outside the caller's pid namespace and
 * cgroup.  A caller in the host's pid namespace starts it (in h's mount
 * namespace) when it is not running.  The agent keeps its own copy of h.
 * state_dir NULL: $KUBEMOUNT_STATE_DIR or /run/kubemount.  The km_vcs_*
 * calls below reach the host through the agent.
 */
struct km_agent;
int km_agent_new(const struct km_host *h, const char *state_dir, struct km_agent **ret);
void km_agent_free(struct km_agent *a);
/*
 * The agent itself: serves in this process until idle for idle_exit_s (0:
 * forever); ready_fd (or -1) gets "1" once listening.  It takes no host: it
 * runs in the host, whose mount namespace is the one this process is in.
 */
int km_agent_serve(const char *state_dir, int idle_exit_s, int ready_fd, struct km_error *err);

/* A short run: combined output (free()) and exit status (128+N for signal N, 124 on timeout). */
int km_vcs_run(struct km_agent *a, const struct km_vcs *v, char **output, size_t *size, int *exit_status,
               struct km_error *err);
/* The same with the command's stdin, stdout and stderr given. */
int km_vcs_run_fds(struct km_agent *a, const struct km_vcs *v, const int fds[3], int *exit_status,
                   struct km_error *err);
/* A long-running container (a FUSE daemon): returns once it runs, with its name (free(); may be NULL). */
int km_vcs_start(struct km_agent *a, const struct km_vcs *v, char **ret_name, struct km_error *err);
/* A command in a running container (RunCommandInContainer): combined output and exit status. */
int km_vcs_exec(struct km_agent *a, const char *name, char *const *argv, char **output, size_t *size, int *exit_status,
                struct km_error *err);
/* The same streamed: env and cwd NULL for the container's; tty: fds[0] is a terminal to control. */
int km_vcs_exec_fds(struct km_agent *a, const char *name, char *const *argv, char *const *env, const char *cwd,
                    bool tty, const int fds[3], int *exit_status, struct km_error *err);
/* SIGTERM to PID 1 (forwarded to the command), SIGKILL after timeout_ms; exit status, -1 if unknown. */
int km_vcs_stop(struct km_agent *a, const char *name, int timeout_ms, int *exit_status, struct km_error *err);
int km_vcs_remove(struct km_agent *a, const char *name, bool force, struct km_error *err);
/* JSON text (free()): {"containers": [{name, status, pid, exit_code, created, command, running}, ...]}. */
int km_vcs_list(struct km_agent *a, char **json, struct km_error *err);
/* fds of the log, older part first; returns how many (0-2). */
int km_vcs_logs(struct km_agent *a, const char *name, int fds[2], struct km_error *err);
/* Reconciles the state dir with the kernel; JSON text {"actions": [...]} (free()). */
int km_vcs_gc(struct km_agent *a, const char *kubelet_dir, char **json, struct km_error *err);

/* ---- VCS images: pull, import, list, remove (the store: $KUBEMOUNT_STORE_DIR or /var/lib/kubemount) ---- */

/*
 * The store lives in the host's mount namespace: each call below takes the
 * host first, as mounts do.  The options say how: the store dir, registries
 * allowed over plain HTTP, extra CA directories (HOST:PORT/ca.crt),
 * docker-style auth files, the platform to choose in an index, a terminal
 * for progress, a size limit.
 */
struct km_image_options *km_image_options_new(void);
void km_image_options_free(struct km_image_options *o);
int km_image_options_set_store_dir(struct km_image_options *o, const char *dir);
int km_image_options_add_insecure_registry(struct km_image_options *o, const char *host_port);
int km_image_options_set_certs_dir(struct km_image_options *o, const char *dir);
int km_image_options_add_auth_file(struct km_image_options *o, const char *path);
int km_image_options_set_platform(struct km_image_options *o, const char *os_arch_variant); /* "linux/arm64/v8" */
void km_image_options_set_progress_fd(struct km_image_options *o, int fd);
/* What one image may take: the bytes its layers declare, and unpack to all together (0: the default, 16 GiB). */
void km_image_options_set_max_image_size(struct km_image_options *o, uint64_t bytes);
/* Whether km_vcs_set_image pulls an image the store lacks (default true); false: -ENOENT, err naming it. */
void km_image_options_set_pull(struct km_image_options *o, bool pull);

/* Each returns the image's record as JSON text (free()): {"ref", "manifest", "config", "rootfs", ...}. */
int km_image_pull(const struct km_host *h, const struct km_image_options *o, const char *ref, char **json,
                  struct km_error *err);
/* SOURCE: oci:DIR[:NAME], oci-archive:FILE[:NAME], rootfs:TARFILE (NAME required then). */
int km_image_import(const struct km_host *h, const struct km_image_options *o, const char *source, const char *name,
                    char **json, struct km_error *err);
/* {"images": [records]}. */
int km_image_list(const struct km_host *h, const struct km_image_options *o, char **json, struct km_error *err);
/* Drops REF and what nothing else uses, sparing the root filesystems in keep_rootfs (live containers). */
int km_image_remove(const struct km_host *h, const struct km_image_options *o, const char *ref,
                    char *const *keep_rootfs, struct km_error *err);

/* ---- Routing: the kubelet's mount, served by the host's client or a VCS container ---- */

/*
 * A router decides per filesystem type, from the type -> image table
 * (command line, ConfigMap $KUBEMOUNT_VCS_CONFIGMAP, $KUBEMOUNT_VCS_DIR or
 * /etc/kubemount/vcs.d, compiled-in defaults), who makes a mount: policy
 * "host" (km_mount: the host's mount.TYPE helper or kernel), "container"
 * (the mapped image's own `mount -t TYPE -o OPTIONS SOURCE TARGET`, in a
 * VCS container that has the kubelet dir at its own path, rshared, and the
 * host's network), or "auto", the default: the host when it has what the
 * type needs (a mount.TYPE helper, or a kernel type that needs none), else
 * the image.  A container whose client keeps running (FUSE, glusterfs)
 * stays, named after the mount, until km_route_umount() or gc; others end
 * when their mount(8) does.  Images come from the store only.
 */
struct km_router;
int km_router_new(const struct km_host *h, struct km_router **ret);
void km_router_free(struct km_router *r);
/* "TYPE=REF" as --vcs-image gives it, or a whole "--TYPE_mount_container=REF" word. */
int km_router_add_vcs_image(struct km_router *r, const char *arg);
/* The kubelet dir (default /var/lib/kubelet); named: targets outside it are allowed on the host path. */
int km_router_set_kubelet_dir(struct km_router *r, const char *dir, bool named);
/* The agent's state dir (NULL: $KUBEMOUNT_STATE_DIR, else the default) and the store's options (borrowed). */
int km_router_set_state_dir(struct km_router *r, const char *dir);
void km_router_set_image_options(struct km_router *r, const struct km_image_options *o);

/* Mount s where its type's policy says; *excode as km_mount() (32 when no one can mount the type). */
int km_route_mount(struct km_router *r, const struct km_mount_spec *s, int *excode, struct km_error *err);
/*
 * km_umount() in the router's host, confined to its kubelet dir (required
 * when not named), then the end of the container that served target, if one
 * did and the mount is gone.
 */
int km_route_umount(struct km_router *r, const char *target, unsigned flags, int timeout_ms, int *excode,
                    struct km_error *err);
/*
 * {"type", "route": "host"|"container", "policy", "image", "daemon", "options",
 * "source", "reason"}: what km_route_mount() would do for fstype, as JSON.
 */
int km_route_explain(struct km_router *r, const char *fstype, char **json, struct km_error *err);

#ifdef __cplusplus
}
#endif
#endif
