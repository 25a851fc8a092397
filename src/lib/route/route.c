/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Routing (see kubemount.h): the kubelet's mount made by the host's client
 * or by the mapped VCS image, in a container that lives as long as the
 * mount needs it.
 */
#include <ctype.h>
#include <fcntl.h>
#include <libmount.h>

#include "hostns.h"
#include "mount-spec.h"
#include "options.h"
#include "route-internal.h"
#include "route-statd.h"
#include "secrets.h"
#include "vcs-route.h"

/* How long a routed daemon's container gets to end after its mount is gone. */
#define ROUTE_STOP_TIMEOUT_MS 5000

KM_EXPORT int km_router_new(const struct km_host *h, struct km_router **ret) {
        struct km_router *r = calloc(1, sizeof(*r));

        if (!r || (h && km_host_new(h->mount_ns, &r->host, NULL) < 0) ||
            !(r->kubelet_dir = strdup(KUBELET_DIR_DEFAULT))) {
                km_router_free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

KM_EXPORT void km_router_free(struct km_router *r) {
        if (!r)
                return;
        km_host_free(r->host);
        free(r->kubelet_dir);
        free(r->state_dir);
        km_strv_free(r->command_line);
        vcs_map_free(r->map);
        free(r);
}

KM_EXPORT int km_router_add_vcs_image(struct km_router *r, const char *arg) {
        if (!arg || r->map)
                return -EINVAL; /* the table is built already */
        return strv_append(&r->command_line, &r->n_command_line, arg);
}

KM_EXPORT int km_router_set_kubelet_dir(struct km_router *r, const char *dir, bool named) {
        if (!dir || dir[0] != '/')
                return -EINVAL;
        r->kubelet_dir_named = named;
        return free_and_strdup(&r->kubelet_dir, dir);
}

KM_EXPORT int km_router_set_state_dir(struct km_router *r, const char *dir) {
        return free_and_strdup(&r->state_dir, dir);
}

KM_EXPORT void km_router_set_image_options(struct km_router *r, const struct km_image_options *o) {
        r->image_options = o;
}

int router_map(struct km_router *r, const struct vcs_map **ret, struct km_error *err) {
        struct vcs_map_sources src = { .command_line = r->command_line, .n_command_line = r->n_command_line };
        int q;

        if (!r->map) {
                vcs_map_sources_from_env(&src);
                q = vcs_map_load(&src, &r->map, err);
                if (q < 0)
                        return q;
                for (size_t i = 0; i < r->map->n_warnings; i++)
                        log_msg(KM_LOG_WARNING, "%s", r->map->warnings[i]);
        }
        *ret = r->map;
        return 0;
}

/* ---- the decision --------------------------------------------------------------- */

/* Kernel types that mount(8) still cannot use without their helper (it resolves hosts, keys, versions). */
static const char *const needs_helper[] = { "nfs", "nfs4", "cifs", "smb3", "ceph" };

static bool program_in_path(const char *name) {
        static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                            "/usr/bin",        "/sbin",          "/bin" };
        char path[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (snprintf(path, sizeof(path), "%s/%s", dirs[i], name) < (int)sizeof(path) && access(path, X_OK) == 0)
                        return true;
        return false;
}

/* Whether the kernel mounts type with no helper: it lists it in /proc/filesystems, and mount(8) needs none. */
static bool kernel_mounts_alone(const char *type) {
        _cleanup_fclose_ FILE *f = NULL;
        char line[256];

        for (size_t i = 0; i < ELEMENTSOF(needs_helper); i++)
                if (streq(type, needs_helper[i]))
                        return false;
        f = fopen("/proc/filesystems", "re");
        while (f && fgets(line, sizeof(line), f)) {
                /* "nodev\ttmpfs\n" or "\text4\n" */
                char *name = strchr(line, '\t');

                if (!name)
                        continue;
                name[1 + strcspn(name + 1, "\n")] = '\0';
                if (streq(name + 1, type))
                        return true;
        }
        return false;
}

struct client_check {
        const char *type;
        char why[160];
};

/* In the host: whether it can mount type itself, and how (for messages). */
static int host_client_in_ns(void *userdata, struct km_error *err) {
        struct client_check *c = userdata;
        const char *sub = startswith(c->type, "fuse.")      ? c->type + strlen("fuse.")
                          : startswith(c->type, "fuseblk.") ? c->type + strlen("fuseblk.")
                                                            : NULL;

        if (host_helper_exists("mount", c->type)) {
                snprintf(c->why, sizeof(c->why), "the host has mount.%s", c->type);
                return 1;
        }
        if (sub && *sub && (host_helper_exists("mount", "fuse") || host_helper_exists("mount", "fuse3")) &&
            program_in_path(sub)) {
                snprintf(c->why, sizeof(c->why), "the host has mount.fuse and %s", sub);
                return 1;
        }
        if (!sub && kernel_mounts_alone(c->type)) {
                snprintf(c->why, sizeof(c->why), "the host's kernel mounts %s without a helper", c->type);
                return 1;
        }
        snprintf(c->why, sizeof(c->why), "the host has no mount.%s%s%s", c->type, sub ? " and no " : "",
                 sub ? sub : "");
        return 0;
}

int route_decide(struct km_router *r, const char *type, struct route_decision *d, struct km_error *err) {
        const struct vcs_map *map;
        struct client_check c = { .type = type };
        int q;

        *d = (struct route_decision){ .route = ROUTE_HOST, .policy = VCS_POLICY_AUTO };
        if (!type) {
                snprintf(d->reason, sizeof(d->reason), "no type: the host probes it");
                return 0;
        }
        q = router_map(r, &map, err);
        if (q < 0)
                return q;
        d->entry = vcs_map_find(map, type);
        if (!d->entry) {
                /* The host or nobody: km_mount() says which, as mount(8) would (no namespace switch here). */
                snprintf(d->reason, sizeof(d->reason), "no VCS image is mapped for %s: the host", type);
                return 0;
        }
        d->policy = d->entry->policy;
        if (d->policy == VCS_POLICY_HOST) {
                snprintf(d->reason, sizeof(d->reason), "policy host (%s)", d->entry->source);
                return 0;
        }
        if (d->policy == VCS_POLICY_AUTO) {
                q = km_host_run(r->host, host_client_in_ns, &c, err);
                if (q < 0)
                        return q;
                if (q > 0) {
                        snprintf(d->reason, sizeof(d->reason), "policy auto: %s", c.why);
                        return 0;
                }
        }
        /* (Only policy host may have no image: the table refuses any other entry without one.) */
        d->route = ROUTE_CONTAINER;
        if (d->policy == VCS_POLICY_CONTAINER)
                snprintf(d->reason, sizeof(d->reason), "policy container (%s)", d->entry->source);
        else
                snprintf(d->reason, sizeof(d->reason), "policy auto: %s", c.why);
        return 0;
}

const char *route_kind_to_string(enum route_kind k) {
        return k == ROUTE_CONTAINER ? "container" : "host";
}

KM_EXPORT int km_route_explain(struct km_router *r, const char *fstype, char **json, struct km_error *err) {
        _cleanup_json_ json_t *doc = NULL;
        struct route_decision d;
        int q = jansson_require(err);

        if (q >= 0)
                q = route_decide(r, fstype, &d, err);
        if (q < 0)
                return q;
        doc = json_pack("{s:s?, s:s, s:s, s:s?, s:b, s:s?, s:b, s:s?, s:s}", "type", fstype, "route",
                        route_kind_to_string(d.route), "policy", vcs_policy_to_string(d.policy), "image",
                        d.entry ? d.entry->image : NULL, "daemon", d.entry && d.entry->daemon, "options",
                        d.entry ? d.entry->options : NULL, "privileged", d.entry && d.entry->privileged, "source",
                        d.entry ? d.entry->source : NULL, "reason", d.reason);
        if (!doc || !(*json = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS)))
                return error_set(err, -ENOMEM, "route");
        return 0;
}

/* ---- the container ------------------------------------------------------------- */

void route_container_name(const char *target, char ret[ROUTE_NAME_MAX]) {
        const char *last = strrchr(target, '/');
        uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a: a stable name, not a secret */
        char part[41];
        size_t n = 0;

        for (const char *p = target; *p; p++)
                h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        for (const char *p = last ? last + 1 : target; *p && n < sizeof(part) - 1; p++)
                part[n++] = (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.') ? *p : '_';
        part[n] = '\0';
        snprintf(ret, ROUTE_NAME_MAX, "mount-%s%s%016llx", part, n ? "-" : "", (unsigned long long)h);
}

static const char *const kernel_siblings[][2] = {
        { "nfs", "nfs4" },
        { "nfs4", "nfs" },
        { "cifs", "smb3" },
        { "smb3", "cifs" },
};

int route_mount_types(const char *type, char ***ret) {
        _cleanup_(km_strv_freep) char **types = NULL;
        _cleanup_free_ char *fuse = NULL;
        const char *base = streq(type, "fuse") || startswith(type, "fuse.")         ? "fuse"
                           : streq(type, "fuseblk") || startswith(type, "fuseblk.") ? "fuseblk"
                                                                                    : NULL;
        size_t n = 0;

        if (strv_append(&types, &n, type) < 0)
                return -ENOMEM;
        if (base && !streq(base, type) && strv_append(&types, &n, base) < 0)
                return -ENOMEM;
        if (!base && (asprintf(&fuse, "fuse.%s", type) < 0 || strv_append(&types, &n, fuse) < 0))
                return -ENOMEM;
        /* A client's helper may call mount(2) with its kernel type's other name (mount.nfs4 says "nfs4"). */
        for (size_t i = 0; i < ELEMENTSOF(kernel_siblings); i++)
                if (streq(type, kernel_siblings[i][0]) && strv_append(&types, &n, kernel_siblings[i][1]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(types);
        return 0;
}

/* What the broker may mount for the container of e: its types, unless it mounts by itself. */
static int allow_mounts(struct km_vcs *v, const struct vcs_entry *e) {
        _cleanup_(km_strv_freep) char **types = NULL;
        int q;

        km_vcs_set_privileged(v, e->privileged);
        if (e->privileged)
                return 0;
        q = route_mount_types(e->type, &types);
        for (char **t = types; q >= 0 && *t; t++) {
                q = km_vcs_allow_mount(v, *t);
                /* "fuse." + a type of 60 or more characters is no type name: nothing mounts it. */
                if (q == -EINVAL && t != types)
                        q = 0;
        }
        return q;
}

static int check_target_in_ns(void *userdata, struct km_error *err) {
        struct route_mount *m = userdata;
        struct km_mount_spec confined = *m->spec;

        /* Below the kubelet dir, whatever the caller set: the container's mount walks it again there. */
        if (!confined.confine)
                confined.confine = m->kubelet_dir;
        return mount_spec_check_target(&confined, &m->usage, err);
}

/*
 * A cifs password goes to mount.cifs on its stdin (PASSWD_FD=0), never in
 * an argv, which /proc/PID/cmdline shows to everyone: argv's "-o" loses its
 * password= (or pass=), which *ret_password gets; the command then runs
 * with PASSWD_FD=0 in its environment.  0 with *ret_password NULL when
 * there is none (or the type is not cifs); -ENOMEM.
 */
static int cifs_password_out(const char *fstype, char **argv, char **ret_password) {
        static const char *const keys[] = { "password", "pass", NULL };

        *ret_password = NULL;
        if (!fstype || (!streq(fstype, "cifs") && !streq(fstype, "smb3")))
                return 0;
        for (size_t n = 0; argv[n] && argv[n + 1]; n++)
                if (streq(argv[n], "-o"))
                        return options_take(argv[n + 1], keys, ret_password) < 0 ? -ENOMEM : 0;
        return 0;
}

/* The read end of a pipe holding data and nothing more (the writer closed): a stdin for it. */
static int stdin_of(const char *data) {
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        if (write_all(fds[1], data, strlen(data)) < 0) {
                close(fds[0]);
                close(fds[1]);
                return -EIO;
        }
        close(fds[1]);
        return fds[0];
}

/* Between the container's start and its mount: the name holds the target, and "already mounted" holds until then. */
struct target_gate {
        struct km_router *r;
        struct route_mount *m;
        const char *name, *digest;
        bool reached, failed; /* its container started; the check refused the target */
};

static int target_gate(void *userdata, struct km_error *err) {
        struct target_gate *g = userdata;
        const struct vcs_entry *e = g->m->decision.entry;
        int q = km_host_run(g->r->host, check_target_in_ns, g->m, err);

        g->reached = true;
        if (q < 0) {
                g->failed = true;
                return q;
        }
        log_msg(KM_LOG_INFO, "mount: %s: %s in %scontainer %s of %s@%s (%s)", g->m->spec->target, g->m->spec->fstype,
                e->privileged ? "privileged " : "", g->name, e->image, g->digest, g->m->decision.reason);
        return 0;
}

/*
 * The mapped image's mount(8) as its container's held command: its output
 * ours, its status the mount's; the container stays for a client that keeps
 * running (a FUSE daemon).  config.json and ps show the argv masked.
 */
static int mount_in_container(struct km_router *r, struct route_mount *m, int *excode, struct km_error *err) {
        const struct km_mount_spec *s = m->spec;
        const struct vcs_entry *e = m->decision.entry;
        _cleanup_(km_vcs_freep) struct km_vcs *v = km_vcs_new();
        _cleanup_(km_agent_freep) struct km_agent *a = NULL;
        _cleanup_close_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        char name[ROUTE_NAME_MAX];
        char **argv = NULL, **env = NULL, **shown = NULL;
        _cleanup_free_ char *password = NULL;
        _cleanup_close_ int in = -EBADF, statd_lock = -EBADF;
        struct target_gate gate = { r, m, name, NULL, false, false };
        int status = -1, q;
        bool gone;

        *excode = MNT_EX_FAIL;
        if (!path_is_below(s->target, r->kubelet_dir))
                return error_set_plain(err, -EPERM,
                                       "mount: %s: a VCS container mounts only below the kubelet dir %s, the one "
                                       "place it shares with the host",
                                       s->target, r->kubelet_dir);
        route_container_name(s->target, name);
        if (!v || null < 0)
                return error_set(err, -ENOMEM, "mount: %s", s->target);
        q = vcs_set_image_stored(r->host, v, e->image, r->image_options, err);
        if (q < 0)
                return error_wrap(err, q, "mount: %s: %s (image of %s, %s)", s->target, e->image, e->type, e->source);
        gate.digest = vcs_image_digest(v);
        argv = mount_spec_argv(s, e->options);
        q = argv ? cifs_password_out(s->fstype, argv, &password) : -ENOMEM;
        if (q >= 0 && password && ((in = stdin_of(password)) < 0 || !(env = vcs_exec_env(v, "PASSWD_FD=0"))))
                q = in < 0 ? in : -ENOMEM;
        if (q >= 0 && !(shown = secret_mask_argv(argv)))
                q = -ENOMEM;
        if (q >= 0 && (km_vcs_set_name(v, name) < 0 || km_vcs_set_kubelet_dir(v, r->kubelet_dir) < 0 ||
                       km_vcs_add_mount(v, r->kubelet_dir, r->kubelet_dir, KM_MAKE_SHARED, false) < 0 ||
                       km_vcs_set_command(v, shown) < 0 || vcs_set_serves(v, s->target, s->fstype) < 0 ||
                       km_agent_new(r->host, r->state_dir, &a) < 0))
                q = -ENOMEM;
        km_strv_free(shown);
        if (q < 0) {
                q = error_set(err, q, "mount: %s", s->target);
                goto out;
        }
        q = allow_mounts(v, e);
        if (q < 0) {
                q = error_set(err, q, "mount: %s: the types its container may mount", s->target);
                goto out;
        }
        /* Before mount.nfs, which refuses v3 locks that no statd answers for; held until it is done. */
        if (statd_wanted(s->fstype, s->options)) {
                statd_lock = statd_hold(r, err);
                q = statd_lock == -ENOENT ? 0 : statd_lock;
                if (q >= 0)
                        q = statd_up(r, a, e, err);
                if (q < 0) {
                        q = error_wrap(err, q, "mount: %s: NFS v3 locks need rpc.statd", s->target);
                        goto out;
                }
        }
        /* A client that keeps running stays with its container; any other's ends with it. */
        q = vcs_run_held(a, v, &(struct vcs_held){ argv, env, e->daemon, target_gate, &gate },
                         (int[3]){ in >= 0 ? in : null, STDOUT_FILENO, STDERR_FILENO }, &status, err);
        gone = q >= 0 && !e->daemon; /* answered once it was gone */
        if (q == -EEXIST)
                q = error_set_plain(err, -EBUSY, "mount: %s: container %s is mounting or serving it already", s->target,
                                    name);
        else if (q < 0 && gate.failed)
                *excode = m->usage ? MNT_EX_USAGE : MNT_EX_FAIL;
        else if (q < 0)
                q = error_wrap(err, q, "mount: %s: container %s", s->target, name);
        else if (status != 0) {
                *excode = status > 0 && status < 126 ? status : MNT_EX_FAIL;
                q = error_set_plain(err, -EIO, "mount: %s: the mount of image %s exited with status %d", s->target,
                                    e->image, status);
        }
        if (gone && q >= 0)
                log_msg(KM_LOG_INFO, "mount: %s: the mount(8) of image %s finished; container %s ended with it",
                        s->target, e->image, name);
        if (gate.reached && !gone && q < 0) {
                struct km_error rerr = {};
                if (km_vcs_remove(a, name, true, &rerr) < 0)
                        log_msg(KM_LOG_WARNING, "mount: %s: container %s stays (%s); kubemount gc removes it",
                                s->target, name, rerr.message);
        }
        if (q >= 0) {
                (void)mount_spec_event(s, 0, NULL,
                                       &(struct mount_by){
                                               .container = name, .image = e->image, .digest = gate.digest });
                *excode = MNT_EX_SUCCESS;
        }
out:
        secret_scrub_argv(argv);
        if (password)
                explicit_bzero(password, strlen(password));
        km_strv_free(argv);
        km_strv_free(env);
        return q;
}

KM_EXPORT int km_route_mount(struct km_router *r, const struct km_mount_spec *s, int *excode, struct km_error *err) {
        struct route_mount m = { .spec = s, .kubelet_dir = r->kubelet_dir };
        int ex = MNT_EX_FAIL, q;

        if (!s->target)
                return error_set_plain(err, -EINVAL, "mount: no target");
        /* Binds and remounts are the host kernel's own work, whatever the type. */
        q = mount_spec_is_bind_or_remount(s) ? route_decide(r, NULL, &m.decision, err)
                                             : route_decide(r, s->fstype, &m.decision, err);
        if (q < 0) {
                if (excode)
                        *excode = MNT_EX_SYSERR;
                return q;
        }
        switch (m.decision.route) {
        case ROUTE_HOST:
                q = km_mount(r->host, s, excode, err);
                if (q == -ENODEV && !m.decision.entry && s->fstype && err)
                        /* The kernel knows no such type and there is no helper: say how to map one. */
                        snprintf(err->message + strlen(err->message), sizeof(err->message) - strlen(err->message),
                                 " (no VCS image is mapped for %s: kubemount --vcs-image %s=IMAGE, a ConfigMap, or "
                                 "/etc/kubemount/vcs.d/*.json)",
                                 s->fstype, s->fstype);
                return q;
        case ROUTE_CONTAINER:
                break;
        }
        if (s->flags & KM_MOUNT_FAKE) {
                log_msg(KM_LOG_INFO, "mount: %s: %s would be mounted by image %s (%s)", s->target, s->fstype,
                        m.decision.entry->image, m.decision.reason);
                if (excode)
                        *excode = MNT_EX_SUCCESS;
                return 0;
        }
        q = mount_in_container(r, &m, &ex, err);
        if (excode)
                *excode = ex;
        return q;
}

/* The unmount and what follows it, in one visit to the host's namespace. */
struct route_umount {
        const struct km_router *r;
        const char *target;
        unsigned flags;
        int timeout_ms, excode;
        char name[ROUTE_NAME_MAX];
        bool release; /* a container served target, and target is no longer mounted */
};

static int umount_in_ns(void *userdata, struct km_error *err) {
        struct route_umount *u = userdata;
        int q = km_umount(NULL, u->target, u->r->kubelet_dir, u->flags, u->timeout_ms, &u->excode, err);

        /* Not while the mount is still there (busy): its client serves it. */
        u->release = vcs_container_exists(u->r->state_dir, u->name, NULL) > 0 &&
                     (q >= 0 || km_is_mount_point(NULL, u->target, NULL) == 0);
        return q;
}

KM_EXPORT int km_route_umount(struct km_router *r, const char *target, unsigned flags, int timeout_ms, int *excode,
                              struct km_error *err) {
        /* Relative to the caller's directory, which the switch changes; "-x" stays for km_umount to refuse. */
        _cleanup_free_ char *abs = target && target[0] != '-' ? path_absolute(target) : NULL;
        _cleanup_(km_agent_freep) struct km_agent *a = NULL;
        struct route_umount u = { r, abs ?: target, flags | (r->kubelet_dir_named ? 0 : KM_UMOUNT_CONFINE_REQUIRED),
                                  timeout_ms, MNT_EX_SYSERR };
        struct km_error rerr = {};
        int q, e;

        if (!u.target)
                return error_set(err, target ? -ENOMEM : -EINVAL, "umount");
        route_container_name(u.target, u.name);
        q = km_host_run(r->host, umount_in_ns, &u, err);
        if (excode)
                *excode = q >= 0 ? MNT_EX_SUCCESS : u.excode;
        if (q >= 0)
                statd_down_if_unused(r);
        if (!u.release)
                return q;
        /* Its client is done (or never unmounted itself): the container goes too. */
        e = km_agent_new(r->host, r->state_dir, &a);
        if (e >= 0 && (e = vcs_stop_and_remove(a, u.name, ROUTE_STOP_TIMEOUT_MS, &rerr)) < 0 && e != -ENOENT)
                e = km_vcs_remove(a, u.name, true, &rerr); /* it did not stop in time */
        if (e < 0)
                log_msg(KM_LOG_WARNING, "umount: %s: container %s: %s; kubemount gc removes it", u.target, u.name,
                        e == -ENOMEM || !rerr.message[0] ? strerror(-e) : rerr.message);
        return q;
}
