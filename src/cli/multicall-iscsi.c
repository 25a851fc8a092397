/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount called as iscsiadm (the kubelet's iscsi plugin: discovery,
 * login, logout, delete), from the image the iscsi entry maps, with no
 * open-iscsi on the host.  iscsiadm asks iscsid for sessions over an abstract
 * socket of the network namespace, so both run in the host's, and iscsid in
 * a kept container of its own, "iscsid", for as long as any session exists.
 * Both are privileged: iscsid drives the kernel's iSCSI transport over
 * NETLINK_ISCSI, which the kernel opens only to CAP_SYS_ADMIN of the host's
 * user namespace, and serves only a root peer; so the entry must be
 * privileged, which takes an image pinned by digest (vcs-map.c).  They share
 * the node's iSCSI database, a host directory bound at /etc/iscsi's records
 * (sessions and records outlive an iscsid restart, as on a host), and its
 * lock directory, and a writable /sys/devices.  kubemount loads iscsi_tcp
 * with the host's modprobe.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "multicall-iscsi.h"
#include "vcs-map.h"

#define ISCSI_DIR_DEFAULT "/var/lib/kubemount/iscsi"
#define ISCSID_NAME "iscsid"
#define ISCSID_SOCKET "@ISCSIADM_ABSTRACT_NAMESPACE"
#define ISCSID_READY_MS 15000
#define ISCSID_STOP_MS 5000

/* The records of /etc/iscsi that iscsiadm and iscsid keep (idbm.h); iscsid.conf stays the image's. */
static const char *const db_dirs[] = { "nodes", "send_targets", "ifaces", "isns", "static", "fw", "slp" };
#define INITIATOR_FILE "initiatorname.iscsi"

/* The initiator name is the node's, made once (iscsi-iname in the image), then kept in the database. */
static const char iscsid_script[] =
        "grep -q '^InitiatorName=' /etc/iscsi/" INITIATOR_FILE
        " ||"
        " echo \"InitiatorName=$(iscsi-iname)\" >/etc/iscsi/" INITIATOR_FILE "; exec iscsid -f";

struct iscsi_host {
        char db[PATH_MAX], lock[PATH_MAX];
        int lock_fd;      /* out: the database's flock, held for the whole call */
        pid_t iscsid_pid; /* in: for ready_in_host */
        bool sessions;    /* out of sessions_in_host */
};

/* The host's modprobe (kmod, on every systemd node) for the transport, unless it is there. */
static int load_iscsi_tcp(struct km_error *err) {
        static const char *const modprobes[] = { "/usr/sbin/modprobe", "/sbin/modprobe" };
        int status;
        pid_t pid;

        if (access("/sys/module/iscsi_tcp", F_OK) == 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(modprobes); i++) {
                if (access(modprobes[i], X_OK) < 0)
                        continue;
                pid = fork();
                if (pid < 0)
                        return error_set(err, -errno, "fork");
                if (pid == 0) {
                        execl(modprobes[i], "modprobe", "-q", "iscsi_tcp", (char *)NULL);
                        _exit(127);
                }
                while (waitpid(pid, &status, 0) < 0)
                        if (errno != EINTR)
                                return error_set(err, -errno, "waitpid %s", modprobes[i]);
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                        return 0;
                break;
        }
        return access("/sys/module/iscsi_tcp", F_OK) == 0
                       ? 0
                       : error_set_plain(err, -ENOENT,
                                         "the kernel has no iscsi_tcp and the host's modprobe cannot "
                                         "load it");
}

/* In the host: the database and lock directories, the initiator file, the flock; and the transport. */
static int prepare_in_host(void *userdata, struct km_error *err) {
        struct iscsi_host *h = userdata;
        char path[PATH_MAX + 32];
        int r, fd;

        if ((r = mkdir_p(h->db, 0700)) < 0)
                return error_set(err, r, "%s", h->db);
        if ((r = mkdir_p(h->lock, 0700)) < 0)
                return error_set(err, r, "%s", h->lock);
        for (size_t i = 0; i < ELEMENTSOF(db_dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s", h->db, db_dirs[i]);
                if (mkdir(path, 0700) < 0 && errno != EEXIST)
                        return error_set(err, -errno, "%s", path);
        }
        snprintf(path, sizeof(path), "%s/" INITIATOR_FILE, h->db);
        fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return error_set(err, -errno, "%s", path);
        close(fd);
        /* One iscsiadm at a time: a logout that ends iscsid must not meet a login that needs it. */
        snprintf(path, sizeof(path), "%s/.kubemount.lock", h->db);
        h->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (h->lock_fd < 0 || flock(h->lock_fd, LOCK_EX) < 0)
                return error_set(err, -errno, "%s", path);
        return load_iscsi_tcp(err);
}

/* 1 once iscsid's abstract socket listens in the host's network namespace (its /proc/PID/net/unix). */
static int ready_in_host(void *userdata, struct km_error *err) {
        struct iscsi_host *h = userdata;
        char path[64], line[512];
        _cleanup_fclose_ FILE *f = NULL;

        (void)err;
        snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)h->iscsid_pid);
        if (!(f = fopen(path, "re")))
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, " " ISCSID_SOCKET "\n"))
                        return 1;
        return 0;
}

static int sessions_in_host(void *userdata, struct km_error *err) {
        struct iscsi_host *h = userdata;
        _cleanup_(closedirp) DIR *d = opendir("/sys/class/iscsi_session");
        struct dirent *de;

        (void)err;
        h->sessions = false;
        while (d && (de = readdir(d)) && !h->sessions)
                h->sessions = de->d_name[0] != '.';
        return 0;
}

/* A privileged container of the image in the host's network with the database: iscsid's or iscsiadm's. */
static int iscsi_container(struct km_host *host, const struct vcs_entry *e, const struct iscsi_host *h,
                           char *const *argv, struct km_vcs **ret, struct km_error *err) {
        _cleanup_(km_vcs_freep) struct km_vcs *v = km_vcs_new();
        struct km_image_options *io = km_image_options_new();
        char source[PATH_MAX + 32], dest[64];
        int r = v && io ? km_vcs_set_command(v, argv) : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(db_dirs); i++) {
                snprintf(source, sizeof(source), "%s/%s", h->db, db_dirs[i]);
                snprintf(dest, sizeof(dest), "/etc/iscsi/%s", db_dirs[i]);
                r = km_vcs_add_mount(v, source, dest, KM_MAKE_PRIVATE, false);
        }
        snprintf(source, sizeof(source), "%s/" INITIATOR_FILE, h->db);
        if (r >= 0)
                r = km_vcs_add_mount(v, source, "/etc/iscsi/" INITIATOR_FILE, KM_MAKE_PRIVATE, false);
        if (r >= 0)
                r = km_vcs_add_mount(v, h->lock, "/run/lock/iscsi", KM_MAKE_PRIVATE, false);
        /* Writable, over the container's read-only sysfs: iscsid asks the kernel to scan a new
         * session's LUNs (/sys/class/scsi_host/hostN/scan) and sets its disks' timeouts. */
        if (r >= 0)
                r = km_vcs_add_mount(v, "/sys/devices", "/sys/devices", KM_MAKE_SLAVE, false);
        if (r < 0) {
                km_image_options_free(io);
                return error_set(err, r, "container");
        }
        km_vcs_set_host_network(v, true);
        km_vcs_set_privileged(v, true);
        km_image_options_set_pull(io, false);
        r = km_vcs_set_image(host, v, e->image, io, err);
        km_image_options_free(io);
        if (r == -ENOENT)
                return error_set_plain(err, r, "image %s (for iscsi) is not in the store: run 'kubemount pull %s'",
                                       e->image, e->image);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

static pid_t container_pid(struct km_agent *a, const char *name) {
        _cleanup_free_ char *text = NULL;
        struct km_error err = {};
        json_t *root, *list, *c;
        pid_t pid = 0;
        size_t i;

        if (km_vcs_list(a, &text, &err) < 0 || !(root = json_loads(text, 0, NULL)))
                return 0;
        list = json_object_get(root, "containers");
        for (i = 0; i < json_array_size(list); i++) {
                c = json_array_get(list, i);
                if (streq(json_string_value(json_object_get(c, "name")) ?: "", name) &&
                    json_is_true(json_object_get(c, "running")))
                        pid = (pid_t)json_integer_value(json_object_get(c, "pid"));
        }
        json_decref(root);
        return pid;
}

/* iscsid, started unless it runs, and answering. */
static int iscsid_up(struct km_host *host, struct km_agent *a, const struct vcs_entry *e, struct iscsi_host *h,
                     struct km_error *err) {
        char *const script[] = { (char *)"sh", (char *)"-c", (char *)iscsid_script, NULL };
        _cleanup_(km_vcs_freep) struct km_vcs *v = NULL;
        int r = iscsi_container(host, e, h, script, &v, err);

        if (r < 0)
                return r;
        if ((r = km_vcs_set_name(v, ISCSID_NAME)) < 0)
                return error_set(err, r, "container");
        r = km_vcs_start(a, v, NULL, err);
        if (r == -EEXIST) { /* it runs: it answered its first caller */
                *err = (struct km_error){};
                return 0;
        }
        if (r < 0)
                return r;
        h->iscsid_pid = container_pid(a, ISCSID_NAME);
        for (int waited = 0; waited < ISCSID_READY_MS; waited += 10) {
                if (h->iscsid_pid <= 0)
                        break;
                if (km_host_run(host, ready_in_host, h, err) > 0)
                        return 0;
                nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
                if (waited % 1000 == 990)
                        h->iscsid_pid = container_pid(a, ISCSID_NAME);
        }
        return error_set_plain(err, -ETIMEDOUT, "iscsid (container %s) does not answer: see 'kubemount logs %s'",
                               ISCSID_NAME, ISCSID_NAME);
}

/* No session left: iscsid has nothing to keep, and goes. */
static void iscsid_down_if_idle(struct km_host *host, struct km_agent *a, struct iscsi_host *h) {
        struct km_error err = {};
        int status;

        if (km_host_run(host, sessions_in_host, h, &err) < 0 || h->sessions)
                return;
        (void)km_vcs_stop(a, ISCSID_NAME, ISCSID_STOP_MS, &status, &err);
        if (km_vcs_remove(a, ISCSID_NAME, true, &err) < 0 && err.code != -ENOENT)
                cli_error("iscsiadm: container %s stays (%s)", ISCSID_NAME, err.message);
}

int multicall_iscsiadm(struct km_host *host, const struct vcs_entry *e, char **argv) {
        const char *db = getenv("KUBEMOUNT_ISCSI_DIR"), *state = getenv("KUBEMOUNT_STATE_DIR");
        struct iscsi_host h = { .lock_fd = -EBADF };
        _cleanup_(km_vcs_freep) struct km_vcs *v = NULL;
        _cleanup_(km_agent_freep) struct km_agent *agent = NULL;
        struct km_error err = {};
        int fds[3] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO };
        int r, status = -1;
        char *arg0 = argv[0];

        if (!e->privileged) {
                cli_error(
                        "iscsiadm: iscsid needs CAP_SYS_ADMIN of the host (NETLINK_ISCSI): the iscsi entry (%s) "
                        "must be privileged, with its image pinned by digest, in /etc/kubemount/vcs.d",
                        e->source);
                return EXIT_TOOL_FAILED;
        }
        snprintf(h.db, sizeof(h.db), "%s", db && db[0] == '/' ? db : ISCSI_DIR_DEFAULT);
        snprintf(h.lock, sizeof(h.lock), "%s/iscsi-lock", state && state[0] == '/' ? state : STATE_DIR_DEFAULT);
        argv[0] = (char *)"iscsiadm";
        r = km_host_run(host, prepare_in_host, &h, &err);
        if (r >= 0)
                r = km_agent_new(host, NULL, &agent);
        bool iscsid_asked = r >= 0;
        if (iscsid_asked)
                r = iscsid_up(host, agent, e, &h, &err);
        if (r >= 0)
                r = iscsi_container(host, e, &h, argv, &v, &err);
        if (r >= 0)
                r = km_vcs_run_fds(agent, v, fds, &status, &err);
        argv[0] = arg0;
        if (r < 0)
                cli_error("iscsiadm: %s", err.message[0] ? err.message : strerror(-r));
        if (iscsid_asked)
                iscsid_down_if_idle(host, agent, &h);
        if (h.lock_fd >= 0)
                close(h.lock_fd);
        return r < 0 || status < 0 ? EXIT_TOOL_FAILED : status;
}
