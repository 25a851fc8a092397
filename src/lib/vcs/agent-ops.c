/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's operations: run, exec, ps, stop, rm, logs, gc (see agent.h). */
#include <fcntl.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "agent-gc.h"
#include "agent-broker.h"
#include "agent-idmap.h"
#include "broker-policy.h"
#include "agent-ops.h"
#include "agent-run.h"
#include "agent-workers.h"
#include "launch.h"
#include "mountpoint.h"
#include "agent-protocol.h"
#include "oci-runtime.h"
#include "sd-protocol.h"
#include "state-dir.h"
#include "tty-relay.h"

#define STOP_TIMEOUT_MS 10000

static char **req_strv(json_t *req, const char *key) {
        json_t *a = json_object_get(req, key), *v;
        size_t i, n = json_array_size(a);
        char **strv;

        if (!json_is_array(a) || !(strv = calloc(n + 1, sizeof(char *))))
                return NULL;
        json_array_foreach(a, i, v) {
                if (!json_is_string(v) || !(strv[i] = strdup(json_string_value(v)))) {
                        km_strv_free(strv);
                        return NULL;
                }
        }
        return strv;
}

static struct ctr *find_or_fail(struct agent *a, int conn, const char *name, struct km_error *err) {
        struct ctr *c = name ? agent_find(a, name) : NULL;

        if (!c)
                error_set_plain(err, -ENOENT, "no such container: %s", name ? name : "(none)");
        return c;
}

/* How long a worker may take to open a terminal in a container's /dev/pts. */
#define EXEC_PTY_TIMEOUT_MS 5000

/*
 * The exec itself, with stdio for the command; with a terminal (master >= 0,
 * stdio its slave) the master goes to the client first.  The client stays,
 * answered {"exit"} when the command ends.
 */
static int exec_start(struct agent *a, int conn, struct ctr *c, json_t *req, const int stdio[3], int master,
                      struct km_error *err) {
        char **args = req_strv(req, "args"), **env = req_strv(req, "env");
        bool tty = master >= 0;
        pid_t pid;
        int r;

        if (!args || !args[0])
                r = error_set_plain(err, -EINVAL, "exec: a command is needed");
        else {
                struct exec_request rq = {
                        .spec = c->spec,
                        .seccomp = c->has_seccomp ? &c->seccomp : NULL,
                        .pid1 = c->pid,
                        .args = args,
                        .env = json_object_get(req, "env") ? env : NULL,
                        .cwd = proto_string(req, "cwd"),
                        .terminal = tty,
                        .cgroup_root_fd = a->cgroup_root,
                        .cgroup_name = c->cgroup,
                        .stdio = { stdio[0], stdio[1], stdio[2] },
                        .userns_fd = -EBADF,
                };
                int listener = -EBADF;
                if (c->runtime) {
                        _cleanup_free_ char *root = agent_runtime_root(a);
                        struct runtime_exec_request xrq = {
                                .runtime = c->runtime,
                                .root = root,
                                .id = c->name,
                                .args = args,
                                .env = rq.env,
                                .cwd = rq.cwd,
                                .tty = tty,
                                .stdio = { rq.stdio[0], rq.stdio[1], rq.stdio[2] },
                        };
                        r = root ? runtime_exec(&xrq, &pid, err) : -ENOMEM;
                } else if ((r = agent_broker_prepare(a, c, json_string_value(json_object_get(c->state, "kubelet_dir")),
                                                     &rq.userns_fd, &rq.broker, err)) >= 0) {
                        r = launch_exec(&rq, &pid, rq.broker ? &listener : NULL, err);
                        if (r >= 0 && listener >= 0)
                                (void)agent_broker_listen(a, c, listener);
                }
                if (r >= 0 && tty) {
                        json_t *m = json_pack("{s:b}", "tty", 1);
                        (void)proto_send(conn, m, &master, 1);
                        json_decref(m);
                }
                if (r >= 0 && (r = agent_job_add(a, pid, conn, c->name)) < 0) {
                        /* Nobody would reap it or answer for it: it must not run on. */
                        (void)kill(pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        error_set(err, r, "exec in %s", c->name);
                }
                if (r >= 0) {
                        c->execs++;
                        c->mount_pending = false;
                }
        }
        km_strv_free(args);
        km_strv_free(env);
        return r < 0 ? r : 1;
}

/* In a worker: a terminal of the container's devpts, or why not. */
static int exec_pty_work(struct agent *a, json_t *ctx, int sock) {
        struct km_error err = {};
        int fds[2], r;

        r = tty_open_in(a->proc_fd, (pid_t)json_integer_value(json_object_get(ctx, "pid")),
                        (int)json_integer_value(json_object_get(ctx, "pidfd")), &fds[0], &fds[1], &err);
        if (r < 0)
                return proto_send_error(sock, r, err.message);
        json_t *m = json_pack("{s:b}", "pty", 1);
        r = m ? proto_send(sock, m, fds, 2) : -ENOMEM;
        json_decref(m);
        return r;
}

/* In the loop: the worker's terminal for the exec, if the container still runs. */
static int exec_pty_done(struct agent *a, int conn, json_t *ctx, json_t *answer, int *fds, size_t n_fds) {
        json_t *req = json_object_get(ctx, "req");
        const char *name = proto_string(req, "name");
        struct ctr *c = agent_find(a, name);
        struct km_error err = {};
        int r;

        if (!answer)
                r = error_set_plain(&err, -ETIMEDOUT,
                                    "exec -t in %s: no terminal from its /dev/pts/ptmx in %d ms (a hung file "
                                    "system in the container?)",
                                    name, EXEC_PTY_TIMEOUT_MS);
        else if (json_object_get(answer, "error"))
                r = error_set_plain(&err, (int)json_integer_value(json_object_get(answer, "code")) ?: -EIO,
                                    "exec -t in %s: %s", name, json_string_value(json_object_get(answer, "error")));
        else if (n_fds != 2)
                r = error_set_plain(&err, -EPROTO, "exec -t in %s: no terminal from the worker", name);
        else if (!c || c->pidfd < 0 || !c->spec || c->pid != (pid_t)json_integer_value(json_object_get(ctx, "pid")))
                r = error_set_plain(&err, -ESRCH, "container %s is not running", name);
        else {
                int slave[3] = { fds[1], fds[1], fds[1] };
                r = exec_start(a, conn, c, req, slave, fds[0], &err);
        }
        if (r < 0)
                proto_send_error(conn, err.code, err.message);
        return r;
}

static int op_exec(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds, struct km_error *err) {
        struct ctr *c = find_or_fail(a, conn, proto_string(req, "name"), err);
        bool tty = json_is_true(json_object_get(req, "tty"));
        _cleanup_close_ int master = -EBADF, slave = -EBADF;
        int r;

        if (!c)
                return err->code;
        if (c->pidfd < 0 || !c->spec)
                return error_set_plain(err, -ESRCH, "container %s is not running", c->name);
        if (c->start.report_fd >= 0)
                return error_set_plain(err, -EAGAIN, "container %s is starting; exec once its run is answered",
                                       c->name);
        if (!tty && n_fds != 3)
                return error_set_plain(err, -EINVAL, "exec: a command and three fds are needed");
        if (!tty) {
                r = proto_refuse_terminals("exec", fds, n_fds, err);
                return r < 0 ? r : exec_start(a, conn, c, req, fds, -EBADF, err);
        }
        if (c->runtime) {
                /* The runtime makes the command's terminal from one of the host's. */
                r = tty_open_host(&master, &slave);
                if (r < 0)
                        return error_set(err, r, "exec -t in %s: /dev/ptmx", c->name);
                return exec_start(a, conn, c, req, (int[3]){ slave, slave, slave }, master, err);
        }
        /* Its /dev/pts is the container's to change, or to hang: a worker opens it (THREATS 30). */
        int keep[] = { a->proc_fd, c->pidfd };
        json_t *ctx = json_pack("{s:O, s:i, s:i}", "req", req, "pid", (int)c->pid, "pidfd", c->pidfd);
        if (!ctx)
                return error_set(err, -ENOMEM, "exec in %s", c->name);
        r = agent_worker_start(a, conn, ctx, EXEC_PTY_TIMEOUT_MS, exec_pty_work, exec_pty_done, keep, ELEMENTSOF(keep));
        return r < 0 ? error_set(err, r, "exec -t in %s: start a worker", c->name) : 1;
}

static int op_ps(struct agent *a, int conn, json_t *req, struct km_error *err) {
        json_t *list = json_array();
        char **names = NULL;
        int r = state_container_list(a->state_fd, &names, err);

        if (r < 0 || !list) {
                json_decref(list);
                return r < 0 ? r : -ENOMEM;
        }
        for (char **n = names; *n; n++) {
                struct ctr *c = agent_find(a, *n);
                json_t *e;

                if (c && c->spare)
                        continue; /* no container of anybody's yet (agent-spare.h) */

                if (c && c->state)
                        e = json_deep_copy(c->state);
                else
                        e = json_pack("{s:s, s:s}", "name", *n, "status", "unknown");
                /* Masked already, unless adopted from a state.json of an older agent. */
                if (!e || agent_state_mask(e) < 0) {
                        json_decref(e);
                        continue;
                }
                json_object_set_new(e, "running", json_boolean(c && c->pidfd >= 0));
                json_array_append_new(list, e);
        }
        km_strv_free(names);
        return proto_reply(conn, json_pack("{s:o}", "containers", list));
}

static int op_stop(struct agent *a, int conn, json_t *req, struct km_error *err) {
        struct ctr *c = find_or_fail(a, conn, proto_string(req, "name"), err);
        json_t *t = json_object_get(req, "timeout_ms");
        bool remove = json_is_true(json_object_get(req, "remove"));
        int r;

        if (!c)
                return err->code;
        if (c->pidfd < 0) {
                r = proto_reply(conn,
                                json_pack("{s:O}", "exit", json_object_get(c->state, "exit_code") ?: json_null()));
                if (remove && state_container_remove(a->state_fd, c->name, NULL) >= 0)
                        agent_ctr_forget(a, c);
                return r;
        }
        /* With remove: gone once it exits, before its stopper is answered (one call for a routed umount). */
        c->remove_on_exit |= remove;
        c->stopping = true;
        agent_ctr_signal(c, SIGTERM);
        (void)agent_ctr_timer(a, c, t ? (int)json_integer_value(t) : STOP_TIMEOUT_MS);
        if (agent_add_waiter(c, conn) < 0)
                return error_set_plain(err, -EBUSY, "container %s: too many waiting", c->name);
        return 1;
}

static int op_rm(struct agent *a, int conn, json_t *req, struct km_error *err) {
        const char *name = proto_string(req, "name");
        struct ctr *c = name ? agent_find(a, name) : NULL;
        int r;

        if (!name || !state_name_is_valid(name))
                return error_set_plain(err, -EINVAL, "invalid container name");
        if (c && c->pidfd >= 0) {
                if (!json_is_true(json_object_get(req, "force")))
                        return error_set_plain(err, -EBUSY, "container %s is running (stop it, or rm -f)", name);
                if (agent_add_waiter(c, conn) < 0)
                        return error_set_plain(err, -EBUSY, "container %s: too many waiting", c->name);
                c->stopping = true; /* asked for: its end is logged as a stop, not as a failure */
                c->remove_on_exit = true;
                agent_ctr_kill(a, c);
                return 1; /* answered {"removed"} once it is gone (the loop sees its pidfd), nothing waiting */
        }
        if (!c) {
                _cleanup_close_ int dir = state_container_dir(a->state_fd, name, false, NULL);
                if (dir < 0)
                        return error_set_plain(err, -ENOENT, "no such container: %s", name);
        }
        r = state_container_remove(a->state_fd, name, err);
        if (r < 0)
                return r;
        if (c)
                agent_ctr_forget(a, c);
        return proto_reply(conn, json_pack("{s:b}", "removed", 1));
}

static int op_logs(struct agent *a, int conn, json_t *req, struct km_error *err) {
        const char *name = proto_string(req, "name");
        _cleanup_close_ int dir = name && state_name_is_valid(name) ? state_container_dir(a->state_fd, name, false, err)
                                                                    : error_set_plain(err, -EINVAL, "invalid name");
        int fds[2], n = 0, r;

        if (dir < 0)
                return dir;
        for (const char *f = "log.1"; f; f = streq(f, "log.1") ? "log" : NULL) {
                int fd = openat(dir, f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                if (fd >= 0)
                        fds[n++] = fd;
        }
        r = proto_send(conn, json_pack("{s:i}", "logs", n), fds, n);
        while (n > 0)
                close(fds[--n]);
        return r < 0 ? r : 0;
}

int agent_dispatch(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds) {
        struct km_error err = {};
        const char *op = proto_string(req, "op");
        int r;

        if (!op)
                r = error_set_plain(&err, -EINVAL, "agent: a request needs \"op\"");
        else if (streq(op, "run"))
                r = agent_op_run(a, conn, req, fds, n_fds, &err);
        else if (streq(op, "exec"))
                r = op_exec(a, conn, req, fds, n_fds, &err);
        else if (streq(op, "ps"))
                r = op_ps(a, conn, req, &err);
        else if (streq(op, "stop"))
                r = op_stop(a, conn, req, &err);
        else if (streq(op, "go"))
                r = agent_op_go(a, conn, req, &err);
        else if (streq(op, "rm"))
                r = op_rm(a, conn, req, &err);
        else if (streq(op, "logs"))
                r = op_logs(a, conn, req, &err);
        else if (streq(op, "gc"))
                r = agent_gc(a, conn, req, &err);
        else
                r = error_set_plain(&err, -EOPNOTSUPP, "agent: unknown operation '%s'", op);
        if (r < 0 && err.code < 0) {
                proto_send_error(conn, err.code, err.message);
                return err.code;
        }
        return r;
}
