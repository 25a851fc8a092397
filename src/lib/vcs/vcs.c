/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* VCS containers, the caller's side: descriptions and requests to the agent (see kubemount.h). */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "agent.h"
#include "agent-spawn.h"
#include "agent-protocol.h"
#include "spec.h"
#include "state-dir.h"
#include "tty-relay.h"
#include "hostns.h"
#include "image-resolve.h"
#include "mount-flags.h"
#include "options.h"
#include "vcs-route.h"

struct km_vcs {
        char *rootfs, *name, *cwd, *runtime, *kubelet_dir;
        char *image_store; /* the store of the image's tree, which the agent checks before it runs it */
        char **args, **env;
        size_t n_env;
        char **image_args, **image_env; /* an image's Entrypoint+Cmd and Env: defaults */
        char **allow_mounts;            /* the fstypes the broker mounts for it */
        size_t n_allow_mounts;
        char **mount_targets; /* where the broker mounts for it (--mount-target), and below */
        size_t n_mount_targets;
        char *image_cwd;
        char *image_ref, *image_digest;    /* of the image set, for the mount it serves */
        char *serves_target, *serves_type; /* the mount it serves (routing), or NULL */
        struct vcs_bind *binds;
        size_t n_binds;
        bool host_network, host_dev, readonly, privileged;
        bool image; /* rootfs is an image's tree in the store: the container writes to a layer of its own */
        int timeout_ms;
};

KM_EXPORT struct km_vcs *km_vcs_new(void) {
        struct km_vcs *v = calloc(1, sizeof(*v));

        if (v)
                v->host_network = true; /* NFS and iSCSI clients need the node's network */
        return v;
}

KM_EXPORT void km_vcs_free(struct km_vcs *v) {
        if (!v)
                return;
        free(v->rootfs);
        free(v->image_store);
        free(v->name);
        free(v->cwd);
        free(v->runtime);
        free(v->kubelet_dir);
        km_strv_free(v->args);
        km_strv_free(v->env);
        km_strv_free(v->image_args);
        km_strv_free(v->image_env);
        km_strv_free(v->allow_mounts);
        km_strv_free(v->mount_targets);
        free(v->image_cwd);
        free(v->image_ref);
        free(v->image_digest);
        free(v->serves_target);
        free(v->serves_type);
        for (size_t i = 0; i < v->n_binds; i++) {
                free((char *)v->binds[i].source);
                free((char *)v->binds[i].destination);
        }
        free(v->binds);
        free(v);
}

KM_EXPORT int km_vcs_set_rootfs(struct km_vcs *v, const char *dir) {
        _cleanup_free_ char *abs = dir ? path_absolute(dir) : NULL;

        if (!abs)
                return -EINVAL;
        v->image = false;
        return free_and_strdup(&v->rootfs, abs);
}

KM_EXPORT int km_vcs_set_kubelet_dir(struct km_vcs *v, const char *dir) {
        return dir && dir[0] != '/' ? -EINVAL : free_and_strdup(&v->kubelet_dir, dir);
}

KM_EXPORT int km_vcs_set_name(struct km_vcs *v, const char *name) {
        return name && !state_name_is_valid(name) ? -EINVAL : free_and_strdup(&v->name, name);
}

KM_EXPORT int km_vcs_set_cwd(struct km_vcs *v, const char *dir) {
        return dir && dir[0] != '/' ? -EINVAL : free_and_strdup(&v->cwd, dir);
}

KM_EXPORT int km_vcs_set_command(struct km_vcs *v, char *const *argv) {
        size_t n = 0;
        char **copy;

        while (argv && argv[n])
                n++;
        if (n == 0)
                return -EINVAL;
        copy = argv_copy((int)n, argv);
        for (size_t i = 0; copy && i < n; i++)
                if (!(copy[i] = strdup(argv[i]))) {
                        km_strv_free(copy);
                        return -ENOMEM;
                }
        if (!copy)
                return -ENOMEM;
        km_strv_free(v->args);
        v->args = copy;
        return 0;
}

KM_EXPORT int km_vcs_add_env(struct km_vcs *v, const char *assignment) {
        if (!assignment || !strchr(assignment, '=') || assignment[0] == '=')
                return -EINVAL;
        return strv_append(&v->env, &v->n_env, assignment);
}

KM_EXPORT int km_vcs_add_mount(struct km_vcs *v, const char *source, const char *destination,
                               enum km_propagation_kind kind, bool readonly) {
        unsigned long ms = mount_propagation_ms(kind);
        struct vcs_bind *b;

        if (!source || source[0] != '/' || !destination || destination[0] != '/' || !ms)
                return -EINVAL;
        b = realloc(v->binds, sizeof(*b) * (v->n_binds + 1));
        if (!b)
                return -ENOMEM;
        v->binds = b;
        b = &v->binds[v->n_binds];
        *b = (struct vcs_bind){ strdup(source), strdup(destination), ms, readonly };
        if (!b->source || !b->destination) {
                free((char *)b->source);
                free((char *)b->destination);
                return -ENOMEM;
        }
        v->n_binds++;
        return 0;
}

KM_EXPORT int km_vcs_set_runtime(struct km_vcs *v, const char *runtime) {
        return free_and_strdup(&v->runtime, runtime && streq(runtime, "embedded") ? NULL : runtime);
}

static char **json_strv(json_t *a) {
        size_t i, n = json_array_size(a);
        char **v;
        json_t *e;

        if (n == 0 || !(v = calloc(n + 1, sizeof(char *))))
                return NULL;
        json_array_foreach(a, i, e) if (!(v[i] = strdup(json_string_value(e) ?: ""))) {
                km_strv_free(v);
                return NULL;
        }
        return v;
}

static int set_image(const struct km_host *h, struct km_vcs *v, const char *ref, const struct km_image_options *o,
                     bool pull, struct km_error *err) {
        _cleanup_json_ json_t *rec = NULL, *args = NULL;
        int r = jansson_require(err);

        if (r >= 0)
                r = image_resolve_for_vcs(h, o, ref, pull, false, &rec, err);
        if (r < 0)
                return r;
        /* The image's Entrypoint and Cmd together, as a runtime runs them without a command given. */
        args = json_copy(json_object_get(rec, "entrypoint"));
        if (args)
                json_array_extend(args, json_object_get(rec, "cmd"));
        km_strv_free(v->image_args);
        km_strv_free(v->image_env);
        v->image_args = json_strv(args);
        v->image_env = json_strv(json_object_get(rec, "env"));
        r = free_and_strdup(&v->image_cwd, json_string_value(json_object_get(rec, "working_dir")));
        if (r >= 0)
                r = free_and_strdup(&v->image_ref, json_string_value(json_object_get(rec, "ref")) ?: ref);
        if (r >= 0)
                r = free_and_strdup(&v->image_digest, json_string_value(json_object_get(rec, "manifest")));
        if (r >= 0)
                r = free_and_strdup(&v->rootfs, json_string_value(json_object_get(rec, "rootfs")));
        if (r >= 0)
                r = free_and_strdup(&v->image_store, json_string_value(json_object_get(rec, "store")));
        v->image = r >= 0;
        return r;
}

KM_EXPORT int km_vcs_set_image(const struct km_host *h, struct km_vcs *v, const char *ref,
                               const struct km_image_options *o, struct km_error *err) {
        return set_image(h, v, ref, o, true, err);
}

int vcs_set_image_stored(const struct km_host *h, struct km_vcs *v, const char *ref, const struct km_image_options *o,
                         struct km_error *err) {
        return set_image(h, v, ref, o, false, err);
}

const char *vcs_image_digest(const struct km_vcs *v) {
        return v->image_digest;
}

int vcs_set_serves(struct km_vcs *v, const char *target, const char *fstype) {
        int r = free_and_strdup(&v->serves_target, target);

        return r < 0 ? r : free_and_strdup(&v->serves_type, fstype);
}

KM_EXPORT void km_vcs_set_host_network(struct km_vcs *v, bool host) {
        v->host_network = host;
}
KM_EXPORT void km_vcs_set_host_dev(struct km_vcs *v, bool host) {
        v->host_dev = host;
}
KM_EXPORT void km_vcs_set_readonly(struct km_vcs *v, bool readonly) {
        v->readonly = readonly;
}
KM_EXPORT void km_vcs_set_timeout_ms(struct km_vcs *v, int timeout_ms) {
        v->timeout_ms = timeout_ms;
}
KM_EXPORT void km_vcs_set_privileged(struct km_vcs *v, bool privileged) {
        v->privileged = privileged;
}
KM_EXPORT int km_vcs_allow_mount(struct km_vcs *v, const char *fstype) {
        const char *why;

        if (!fstype || fstype_validate(fstype, &why) < 0)
                return -EINVAL;
        for (char **t = v->allow_mounts; t && *t; t++)
                if (streq(*t, fstype))
                        return 0;
        return strv_append(&v->allow_mounts, &v->n_allow_mounts, fstype);
}

KM_EXPORT int km_vcs_add_mount_target(struct km_vcs *v, const char *path) {
        if (!path || path[0] != '/')
                return -EINVAL;
        return strv_append(&v->mount_targets, &v->n_mount_targets, path);
}

/* The image's environment, then ours (later entries win). */
static char **merged_env(const struct km_vcs *v) {
        size_t n = 0, k = 0;
        char **env;

        for (char **e = v->image_env; e && *e; e++)
                n++;
        env = calloc(n + v->n_env + 1, sizeof(char *));
        for (char **e = v->image_env; env && e && *e; e++)
                env[k++] = *e;
        for (size_t i = 0; env && i < v->n_env; i++)
                env[k++] = v->env[i];
        return env;
}

char **vcs_exec_env(const struct km_vcs *v, const char *extra) {
        _cleanup_free_ char **env = merged_env(v); /* borrowed strings */
        _cleanup_(json_decrefp) json_t *all = env ? spec_vcs_env(&(struct vcs_inputs){ .env = env }) : NULL;

        if (!all || (extra && json_array_append_new(all, json_string(extra)) < 0))
                return NULL;
        return json_strv(all);
}

/* named: the default seccomp profile by its name (SECCOMP_DEFAULT_NAME), as the agent takes it. */
static json_t *vcs_config(const struct km_vcs *v, bool named, struct km_error *err) {
        _cleanup_free_ char **env = merged_env(v); /* borrowed strings */
        struct vcs_inputs in = {
                .rootfs = v->rootfs,
                .rootfs_readonly = v->readonly,
                .rootfs_layer = v->image,
                .args = v->args ? v->args : v->image_args,
                .env = env,
                .cwd = v->cwd ? v->cwd : v->image_cwd,
                .binds = v->binds,
                .n_binds = v->n_binds,
                .host_network = v->host_network,
                .host_dev = v->host_dev,
                .privileged = v->privileged,
                .allow_mounts = v->allow_mounts,
                .seccomp_named = named,
        };

        if (!env) {
                error_set(err, -ENOMEM, "vcs");
                return NULL;
        }
        if (!v->rootfs || !in.args) {
                error_set_plain(err, -EINVAL, "a VCS container needs a root filesystem (or image) and a command");
                return NULL;
        }
        return spec_generate_vcs(&in, err);
}

KM_EXPORT char *km_vcs_config_json(const struct km_vcs *v, struct km_error *err) {
        _cleanup_json_ json_t *config = NULL;

        if (jansson_require(err) < 0 || !(config = vcs_config(v, false, err)))
                return NULL;
        return json_dumps(config, JSON_INDENT(2));
}

/* ---- talking to the agent ----------------------------------------------------- */

struct km_agent {
        char *state_dir;
        struct km_host *host; /* a copy; NULL: the caller's own mount namespace */
};

KM_EXPORT int km_agent_new(const struct km_host *h, const char *state_dir, struct km_agent **ret) {
        struct km_agent *a;

        if (dlopen_jansson() < 0) /* the protocol is JSON */
                return -EOPNOTSUPP;
        a = calloc(1, sizeof(*a));
        if (!a || !(a->state_dir = state_dir_resolve(state_dir)) ||
            (h && km_host_new(h->mount_ns, &a->host, NULL) < 0)) {
                km_agent_free(a);
                return -ENOMEM;
        }
        *ret = a;
        return 0;
}

KM_EXPORT void km_agent_free(struct km_agent *a) {
        if (!a)
                return;
        free(a->state_dir);
        km_host_free(a->host);
        free(a);
}

KM_EXPORT int km_agent_serve(const char *state_dir, int idle_exit_s, int ready_fd, struct km_error *err) {
        _cleanup_free_ char *dir = state_dir_resolve(state_dir);
        struct agent_options o = { dir, idle_exit_s, ready_fd };
        int r = jansson_require(err);

        if (r < 0)
                return r;
        return dir ? agent_run(&o, err) : -ENOMEM;
}

struct connect_args {
        const char *state_dir;
        int fd;
        bool host_pidns; /* the caller shares the host's pid namespace: it may start the agent */
};

/* In the host mount namespace: connect, and tell whether we are in the host's pid namespace. */
static int connect_in_host(void *userdata, struct km_error *err) {
        struct connect_args *c = userdata;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat self, host;

        c->host_pidns = stat("/proc/self/ns/pid", &self) == 0 && stat("/proc/1/ns/pid", &host) == 0 &&
                        self.st_ino == host.st_ino && self.st_dev == host.st_dev;
        if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", c->state_dir, AGENT_SOCKET) >= (int)sizeof(sa.sun_path))
                return error_set_plain(err, -ENAMETOOLONG, "state dir %s: path too long", c->state_dir);
        c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return error_set(err, -errno, "socket");
        if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;
                closep(&c->fd);
                return r;
        }
        return 0;
}

int vcs_agent_alive(struct km_agent *a) {
        struct connect_args c = { a->state_dir, -EBADF, false };
        int r = km_host_run(a->host, connect_in_host, &c, NULL);

        closep(&c.fd);
        return r >= 0;
}

static int agent_connect(struct km_agent *a, struct km_error *err) {
        struct connect_args c = { a->state_dir, -EBADF, false };
        int r = km_host_run(a->host, connect_in_host, &c, err);

        if ((r == -ENOENT || r == -ECONNREFUSED) && c.host_pidns) {
                /* Without a host: where this thread is (opened before the fork, so the caller's thread's). */
                r = agent_spawn(a->state_dir, a->host ? a->host->mount_ns : "/proc/thread-self/ns/mnt", err);
                if (r < 0)
                        return r; /* err says why: a missing binary is not a missing socket */
                r = km_host_run(a->host, connect_in_host, &c, err);
        }
        if (r == -ENOENT || r == -ECONNREFUSED)
                return error_set_plain(err, r,
                                       "no kubemount agent at %s/%s in the host (start `kubemount agent` there, "
                                       "or kubemount-agent.service)",
                                       a->state_dir, AGENT_SOCKET);
        if (r < 0 && err && err->code == 0)
                error_set(err, r, "connect to the agent at %s/%s", a->state_dir, AGENT_SOCKET);
        return r < 0 ? r : c.fd;
}

/*
 * Sends req with fds, and reads the answers until one holds KEY (returned),
 * or an error.  "started" comes before "exit" for runs.
 */
static int agent_call(int sock, json_t *req, const int *fds, size_t n_fds, const char *key, json_t **ret, int *ret_fds,
                      size_t *ret_n, struct km_error *err) {
        int r = req ? proto_send(sock, req, fds, n_fds) : 0; /* no request: only read the answers */

        if (r < 0)
                return error_set(err, r, "send to the agent");
        for (;;) {
                int got[PROTO_MAX_FDS];
                size_t n = 0;
                json_t *m = NULL;

                r = proto_recv(sock, &m, got, &n);
                if (r < 0)
                        return error_set(err, r == -ECONNRESET ? -EPIPE : r, "the agent did not answer");
                json_t *w;
                size_t k;
                json_array_foreach(json_object_get(m, "warnings"), k, w)
                        log_msg(KM_LOG_WARNING, "%s", json_string_value(w));
                if (json_object_get(m, "error")) {
                        r = (int)json_integer_value(json_object_get(m, "code"));
                        error_set_plain(err, r < 0 ? r : -EIO, "%s", json_string_value(json_object_get(m, "error")));
                        json_decref(m);
                        while (n > 0)
                                close(got[--n]);
                        return r < 0 ? r : -EIO;
                }
                if (json_object_get(m, key)) {
                        *ret = m;
                        for (size_t i = 0; i < n; i++) {
                                if (ret_fds && i < *ret_n)
                                        ret_fds[i] = got[i];
                                else
                                        close(got[i]);
                        }
                        if (ret_n)
                                *ret_n = ret_fds ? (n < *ret_n ? n : *ret_n) : 0;
                        return 0;
                }
                json_decref(m);
                while (n > 0)
                        close(got[--n]);
        }
}

static int exit_status_of(json_t *m) {
        json_t *e = json_object_get(m, "exit");
        return json_is_integer(e) ? (int)json_integer_value(e) : -1;
}

/* The image's tree unpacked again from the store's blobs, as the agent found it differ from its record. */
static int rebuild_tree(struct km_agent *a, const struct km_vcs *v, struct km_error *err) {
        _cleanup_(km_image_options_freep) struct km_image_options *o = km_image_options_new();
        _cleanup_json_ json_t *rec = NULL;

        if (!o || km_image_options_set_store_dir(o, v->image_store) < 0)
                return error_set(err, -ENOMEM, "image %s", v->image_ref);
        return image_resolve_for_vcs(a->host, o, v->image_ref, false, true, &rec, err);
}

/* A held run's go, once its gate passed: answered with the command's exit (*m, replacing the start's). */
static int held_go(int sock, const struct vcs_held *held, json_t **m, struct km_error *err) {
        _cleanup_json_ json_t *go = NULL;
        int r = held->gate(held->userdata, err);

        if (r < 0)
                return r; /* our hang-up ends the container; the caller removes it */
        go = json_pack("{s:s, s:s?}", "op", "go", "name", json_string_value(json_object_get(*m, "name")));
        if (!go)
                return -ENOMEM;
        json_decref(TAKE_PTR(*m));
        return agent_call(sock, go, NULL, 0, "exit", m, NULL, NULL, err);
}

static json_t *held_json(const struct vcs_held *held) {
        json_t *j = json_pack("{s:o, s:b}", "args", json_from_strv(held->argv), "stays", held->stays);

        if (j && held->env && json_object_set_new(j, "env", json_from_strv(held->env)) < 0)
                return json_decref(j), NULL;
        return j;
}

static int run_request(struct km_agent *a, const struct km_vcs *v, bool detach, const struct vcs_held *held,
                       const int fds[3], int *exit_status, char **ret_name, struct km_error *err) {
        _cleanup_json_ json_t *config = vcs_config(v, true, err), *req = NULL, *m = NULL;
        int r;

        if (!config)
                return err && err->code ? err->code : -ENOMEM;
        req = json_pack("{s:s, s:O, s:b, s:i, s:s?, s:s?, s:s?}", "op", "run", "config", config, "detach", detach,
                        "timeout_ms", v->timeout_ms, "name", v->name, "runtime", v->runtime, "kubelet_dir",
                        v->kubelet_dir);
        if (!req)
                return -ENOMEM;
        if (v->image_digest &&
            json_object_set_new(req, "image", json_pack("{s:s?, s:s}", "ref", v->image_ref, "digest", v->image_digest)))
                return -ENOMEM;
        if (v->image_store &&
            json_object_set_new(req, "rootfs_check",
                                json_pack("{s:s, s:s}", "store", v->image_store, "manifest", v->image_digest)) < 0)
                return -ENOMEM;
        if (v->mount_targets && json_object_set_new(req, "mount_targets", json_from_strv(v->mount_targets)) < 0)
                return -ENOMEM;
        if (v->serves_target &&
            json_object_set_new(req, "mount",
                                json_pack("{s:s, s:s?}", "target", v->serves_target, "type", v->serves_type)))
                return -ENOMEM;
        if (held && json_object_set_new(req, "hold", held_json(held)) < 0)
                return -ENOMEM;
        for (int round = 0;; round++) {
                _cleanup_close_ int sock = agent_connect(a, err);

                if (sock < 0)
                        return sock;
                r = agent_call(sock, req, fds, detach && !held ? 0 : 3, detach ? "started" : "exit", &m, NULL, NULL,
                               err);
                if (r >= 0 && held) {
                        r = held_go(sock, held, &m, err);
                        break;
                }
                /* The agent runs an image's tree only as it was checked (tree-watch.h): once more, rebuilt. */
                if (r != -ESTALE || !v->image_store || round > 0)
                        break;
                r = rebuild_tree(a, v, err);
                if (r < 0)
                        return r;
        }
        if (r >= 0 && exit_status)
                *exit_status = exit_status_of(m);
        if (r >= 0 && ret_name && !(*ret_name = strdup(json_string_value(json_object_get(m, "name")) ?: "")))
                r = -ENOMEM;
        return r;
}

KM_EXPORT int km_vcs_run_fds(struct km_agent *a, const struct km_vcs *v, const int fds[3], int *exit_status,
                             struct km_error *err) {
        _cleanup_(stdio_relay_stop) struct stdio_relay relay = STDIO_RELAY_INIT;
        /* A terminal of ours goes through a pipe (THREATS 28); the relay starts before we connect,
         * so that it never holds the agent's socket. */
        int r = stdio_relay_start(&relay, fds);

        if (r < 0)
                return error_set(err, r, "run: a pipe for the terminal");
        return run_request(a, v, false, NULL, relay.fds, exit_status, NULL, err);
}

KM_EXPORT int km_vcs_start(struct km_agent *a, const struct km_vcs *v, char **ret_name, struct km_error *err) {
        return run_request(a, v, true, NULL, NULL, NULL, ret_name, err);
}

int vcs_run_held(struct km_agent *a, const struct km_vcs *v, const struct vcs_held *held, const int fds[3],
                 int *exit_status, struct km_error *err) {
        _cleanup_(stdio_relay_stop) struct stdio_relay relay = STDIO_RELAY_INIT;
        int r = stdio_relay_start(&relay, fds); /* as an exec's: a terminal goes through a pipe */

        if (r < 0)
                return error_set(err, r, "run: a pipe for the terminal");
        return run_request(a, v, true, held, relay.fds, exit_status, NULL, err);
}

/* Runs fn with a pipe as stdout and stderr (stdin /dev/null), collecting what comes out. */
static int with_output(int (*fn)(void *u, const int fds[3], struct km_error *err), void *u, char **output, size_t *size,
                       struct km_error *err) {
        _cleanup_close_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC), rd = -EBADF, wr = -EBADF;
        int p[2], r;

        if (null < 0 || pipe2(p, O_CLOEXEC) < 0)
                return error_set(err, -errno, "output pipe");
        rd = p[0], wr = p[1];
        {
                int fds[3] = { null, wr, wr };
                pid_t reader;
                /* The agent answers after the container exits; read concurrently so a full pipe cannot block it. */
                int q[2];
                if (pipe2(q, O_CLOEXEC) < 0)
                        return error_set(err, -errno, "output pipe");
                reader = fork();
                if (reader == 0) {
                        char buf[65536];
                        ssize_t n;
                        close(wr);
                        while ((n = read(rd, buf, sizeof(buf))) > 0)
                                if (write(q[1], buf, n) != n)
                                        break;
                        _exit(0);
                }
                close(q[1]);
                if (reader < 0) {
                        close(q[0]);
                        return error_set(err, -errno, "fork");
                }
                r = fn(u, fds, err);
                closep(&wr);
                closep(&rd);
                r = read_full_fd(q[0], 64 << 20, output, size) < 0 && r >= 0 ? -EIO : r;
                close(q[0]);
                while (waitpid(reader, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        return r;
}

struct run_args {
        struct km_agent *a;
        const struct km_vcs *v;
        const char *name;
        char *const *argv;
        int *exit_status;
};

static int run_fn(void *u, const int fds[3], struct km_error *err) {
        struct run_args *ra = u;
        return km_vcs_run_fds(ra->a, ra->v, fds, ra->exit_status, err);
}

KM_EXPORT int km_vcs_run(struct km_agent *a, const struct km_vcs *v, char **output, size_t *size, int *exit_status,
                         struct km_error *err) {
        struct run_args ra = { a, v, NULL, NULL, exit_status };
        return with_output(run_fn, &ra, output, size, err);
}

static int exec_request(struct km_agent *a, const char *name, char *const *argv, char *const *env, const char *cwd,
                        bool tty, const int fds[3], int *exit_status, struct km_error *err) {
        _cleanup_close_ int sock = agent_connect(a, err);
        _cleanup_json_ json_t *req =
                json_pack("{s:s, s:s, s:[], s:s?, s:b}", "op", "exec", "name", name, "args", "cwd", cwd, "tty", tty);
        _cleanup_json_ json_t *m = NULL;
        int r;

        if (sock < 0)
                return sock;
        if (!req)
                return -ENOMEM;
        for (size_t i = 0; argv && argv[i]; i++)
                json_array_append_new(json_object_get(req, "args"), json_string(argv[i]));
        if (req && env) {
                json_t *e = json_array();
                for (size_t i = 0; env[i]; i++)
                        json_array_append_new(e, json_string(env[i]));
                json_object_set_new(req, "env", e);
        }
        if (!tty) {
                r = agent_call(sock, req, fds, 3, "exit", &m, NULL, NULL, err);
        } else {
                struct tty_relay t;
                _cleanup_json_ json_t *ready = NULL;
                int master = -EBADF;
                size_t n = 1;

                /* The agent answers {"tty"} with the master of the command's terminal, then {"exit"}. */
                r = agent_call(sock, req, NULL, 0, "tty", &ready, &master, &n, err);
                if (r >= 0 && n != 1)
                        r = error_set_plain(err, -EPROTO, "exec: the agent sent no terminal");
                if (r >= 0 && (r = tty_relay_start(&t, master, fds[0], fds[1])) < 0)
                        error_set(err, r, "exec: relay the terminal");
                if (r >= 0) {
                        r = agent_call(sock, NULL, NULL, 0, "exit", &m, NULL, NULL, err);
                        tty_relay_stop(&t);
                }
        }
        if (r >= 0 && exit_status)
                *exit_status = exit_status_of(m);
        return r;
}

KM_EXPORT int km_vcs_exec_fds(struct km_agent *a, const char *name, char *const *argv, char *const *env,
                              const char *cwd, bool tty, const int fds[3], int *exit_status, struct km_error *err) {
        _cleanup_(stdio_relay_stop) struct stdio_relay relay = STDIO_RELAY_INIT;
        /* Without -t a terminal of ours goes through a pipe (THREATS 28), relayed by a child
         * started before we connect; with -t the command gets a terminal of its own. */
        int r = tty ? 0 : stdio_relay_start(&relay, fds);

        if (r < 0)
                return error_set(err, r, "exec: a pipe for the terminal");
        return exec_request(a, name, argv, env, cwd, tty, tty ? fds : relay.fds, exit_status, err);
}

static int exec_fn(void *u, const int fds[3], struct km_error *err) {
        struct run_args *ra = u;
        return km_vcs_exec_fds(ra->a, ra->name, ra->argv, NULL, NULL, false, fds, ra->exit_status, err);
}

KM_EXPORT int km_vcs_exec(struct km_agent *a, const char *name, char *const *argv, char **output, size_t *size,
                          int *exit_status, struct km_error *err) {
        struct run_args ra = { a, NULL, name, argv, exit_status };
        return with_output(exec_fn, &ra, output, size, err);
}

/* How long a client waits for the agent's answer beyond the work it asked for (the agent may be busy). */
#define AGENT_ANSWER_MS (60 * 1000)

/*
 * A request answered by one message holding KEY within timeout_ms; its text
 * (or nothing) returned.  A stalled agent must not hold its client for ever.
 */
static int simple_call(struct km_agent *a, json_t *req, const char *key, char **json, int *fds, size_t *n_fds,
                       int timeout_ms, struct km_error *err) {
        _cleanup_close_ int sock = agent_connect(a, err);
        _cleanup_json_ json_t *owned = req, *m = NULL;
        struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
        int r;

        if (sock < 0)
                return sock;
        if (!owned)
                return -ENOMEM;
        if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                return error_set(err, -errno, "the agent's socket");
        r = agent_call(sock, owned, NULL, 0, key, &m, fds, n_fds, err);
        if (r == -EAGAIN || r == -EWOULDBLOCK)
                return error_set_plain(err, -ETIMEDOUT,
                                       "the agent did not answer '%s' in %d s: stalled? (its log may say why)",
                                       json_string_value(json_object_get(owned, "op")), timeout_ms / 1000);
        if (r >= 0 && json && !(*json = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS)))
                r = -ENOMEM;
        return r;
}

static int stop_request(struct km_agent *a, const char *name, int timeout_ms, bool remove, int *exit_status,
                        struct km_error *err) {
        _cleanup_free_ char *text = NULL;
        int r = simple_call(a,
                            json_pack("{s:s, s:s, s:i, s:b}", "op", "stop", "name", name, "timeout_ms", timeout_ms,
                                      "remove", remove),
                            "exit", &text, NULL, NULL, (timeout_ms > 0 ? timeout_ms : 10000) + AGENT_ANSWER_MS, err);
        _cleanup_json_ json_t *m = r >= 0 ? json_loads(text, 0, NULL) : NULL;

        if (r >= 0 && exit_status)
                *exit_status = exit_status_of(m);
        return r;
}

KM_EXPORT int km_vcs_stop(struct km_agent *a, const char *name, int timeout_ms, int *exit_status,
                          struct km_error *err) {
        return stop_request(a, name, timeout_ms, false, exit_status, err);
}

int vcs_stop_and_remove(struct km_agent *a, const char *name, int timeout_ms, struct km_error *err) {
        return stop_request(a, name, timeout_ms, true, NULL, err);
}

KM_EXPORT int km_vcs_remove(struct km_agent *a, const char *name, bool force, struct km_error *err) {
        return simple_call(a, json_pack("{s:s, s:s, s:b}", "op", "rm", "name", name, "force", force), "removed", NULL,
                           NULL, NULL, AGENT_ANSWER_MS, err);
}

KM_EXPORT int km_vcs_list(struct km_agent *a, char **json, struct km_error *err) {
        return simple_call(a, json_pack("{s:s}", "op", "ps"), "containers", json, NULL, NULL, AGENT_ANSWER_MS, err);
}

KM_EXPORT int km_vcs_logs(struct km_agent *a, const char *name, int fds[2], struct km_error *err) {
        size_t n = 2;
        int r = simple_call(a, json_pack("{s:s, s:s}", "op", "logs", "name", name), "logs", NULL, fds, &n,
                            AGENT_ANSWER_MS, err);

        return r < 0 ? r : (int)n;
}

KM_EXPORT int km_vcs_gc(struct km_agent *a, const char *kubelet_dir, char **json, struct km_error *err) {
        return simple_call(a, json_pack("{s:s, s:s?}", "op", "gc", "kubelet_dir", kubelet_dir), "actions", json, NULL,
                           NULL, 5 * AGENT_ANSWER_MS, err);
}
