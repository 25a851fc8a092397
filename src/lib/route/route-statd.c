/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NFS v3 locking on a host with no rpc.statd (no nfs-common): the kernel's
 * lockd asks a statd of its network namespace to watch each server (NSM),
 * and mount.nfs refuses a v3 mount with locks when none answers.  For a
 * routed v3 mount with locks on such a host, a kept container of the nfs
 * entry's image, "nfs-statd", runs rpc.statd in the host's network (and
 * rpcbind when none answers there), as privileged as the entry and no more;
 * the routed umount that leaves no such mount in the host ends it.  Its
 * records (/var/lib/nfs/sm) are the container's and go with it: a node that
 * crashes with v3 locks held does not tell their servers when it is back.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "mounttable.h"
#include "options.h"
#include "route-internal.h"
#include "route-statd.h"
#include "vcs-route.h"

#define STATD_NAME "nfs-statd"
#define STATD_LOCK "nfs-statd" /* STATE_DIR/nfs-statd.lock */
#define STATD_READY_MS 15000
#define STATD_STOP_MS 5000

/* rpcbind only when the host's does not answer; statd in the foreground, no sm-notify (no records survive). */
static const char statd_script[] =
        "rpcinfo -T udp 127.0.0.1 100000 2 >/dev/null 2>&1 || rpcbind -w || exit 1;"
        " exec rpc.statd -F --no-notify";
static char *const statd_ready[] = { (char *)"rpcinfo", (char *)"-T", (char *)"udp", (char *)"127.0.0.1",
                                     (char *)"100024",  (char *)"1",  NULL };

bool statd_wanted(const char *fstype, const char *options) {
        const char *p = options, *name, *value;
        size_t namesz, valuesz;
        bool v3 = false, locks = true;

        if (!fstype || !streq(fstype, "nfs"))
                return false;
        while (options_next(&p, &name, &namesz, &value, &valuesz) == 0) {
                bool is_vers =
                        (namesz == 4 && !strncmp(name, "vers", 4)) || (namesz == 7 && !strncmp(name, "nfsvers", 7));

                if (is_vers && value)
                        v3 = valuesz >= 1 && value[0] == '3' && (valuesz == 1 || value[1] == '.');
                else if (namesz == 2 && !strncmp(name, "v3", 2) && !value)
                        v3 = true;
                else if (namesz == 6 && !strncmp(name, "nolock", 6) && !value)
                        locks = false;
                else if (namesz == 4 && !strncmp(name, "lock", 4) && !value)
                        locks = true;
                else if (namesz == 10 && !strncmp(name, "local_lock", 10) && value)
                        locks = !((valuesz == 3 && !strncmp(value, "all", 3)) ||
                                  (valuesz == 5 && !strncmp(value, "posix", 5)));
        }
        return v3 && locks;
}

/* Whether a statd of the host's network namespace runs that is not ours (in the host's namespaces). */
static int host_statd_in_ns(void *userdata, struct km_error *err) {
        bool *found = userdata;
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        struct stat host_net, net;
        struct dirent *de;

        (void)err;
        *found = false;
        if (!d || stat("/proc/1/ns/net", &host_net) < 0)
                return 0;
        while (!*found && (de = readdir(d))) {
                char path[NAME_MAX + 16], comm[32] = "";
                FILE *f;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
                if (!(f = fopen(path, "re")))
                        continue;
                if (!fgets(comm, sizeof(comm), f))
                        comm[0] = '\0';
                fclose(f);
                if (!streq(comm, "rpc.statd\n"))
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
                *found = stat(path, &net) == 0 && net.st_ino == host_net.st_ino && net.st_dev == host_net.st_dev;
        }
        return 0;
}

/* One question to statd in its container: 1 it answers, 0 not yet, -ENOENT/-ESRCH no such container running. */
static int statd_answers(struct km_agent *a) {
        _cleanup_free_ char *out = NULL;
        struct km_error rerr = {};
        int status = -1;
        size_t n;

        if (km_vcs_exec(a, STATD_NAME, statd_ready, &out, &n, &status, &rerr) >= 0)
                return status == 0;
        return rerr.code == -ENOENT || rerr.code == -ESRCH ? rerr.code : 0;
}

/* Until statd answers in its container (a mount that found it starting waits too): 0 or -ETIMEDOUT. */
static int statd_wait(struct km_agent *a, struct km_error *err) {
        for (int waited = 0; waited < STATD_READY_MS; waited += 100) {
                int q = statd_answers(a);

                if (q > 0)
                        return 0;
                if (q < 0)
                        break;
                nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
        }
        return error_set_plain(err, -ETIMEDOUT, "container %s: rpc.statd does not answer (kubemount logs %s)",
                               STATD_NAME, STATD_NAME);
}

int statd_up(const struct km_router *r, struct km_agent *a, const struct vcs_entry *e, struct km_error *err) {
        char *const script[] = { (char *)"sh", (char *)"-c", (char *)statd_script, NULL };
        _cleanup_(km_vcs_freep) struct km_vcs *v = NULL;
        bool host_has = false;
        int q;

        /* Running and answering: nothing to build (the image's record check is not for every mount). */
        if (vcs_container_exists(r->state_dir, STATD_NAME, NULL) > 0) {
                if (statd_answers(a) > 0)
                        return 0;
        } else {
                if ((q = km_host_run(r->host, host_statd_in_ns, &host_has, err)) < 0)
                        return q;
                if (host_has)
                        return 0;
        }
        if (!(v = km_vcs_new()))
                return error_set(err, -ENOMEM, "%s", STATD_NAME);
        q = vcs_set_image_stored(r->host, v, e->image, r->image_options, err);
        if (q < 0)
                return q;
        km_vcs_set_privileged(v, e->privileged);
        if (km_vcs_set_name(v, STATD_NAME) < 0 || km_vcs_set_command(v, script) < 0)
                return error_set(err, -ENOMEM, "%s", STATD_NAME);
        q = km_vcs_start(a, v, NULL, err);
        if (q == -EEXIST) /* another mount started it: it may still be coming up */
                *err = (struct km_error){};
        else if (q < 0)
                return q;
        else
                log_msg(KM_LOG_NOTICE, "container %s: rpc.statd for NFS v3 locks (the host runs none), from %s",
                        STATD_NAME, e->image);
        return statd_wait(a, err);
}

int statd_hold(const struct km_router *r, struct km_error *err) {
        int fd = vcs_state_lock(r->state_dir, STATD_LOCK, LOCK_SH);

        if (fd == -ENOENT)
                return -ENOENT;
        return fd < 0 ? error_set(err, fd, "the lock of container %s", STATD_NAME) : fd;
}

static int statd_in_use_in_ns(void *userdata, struct km_error *err) {
        bool *used = userdata;
        struct km_mount_table *t = NULL;
        int q = mount_table_load(NULL, &t, err);

        *used = q < 0; /* unknown: it stays */
        for (size_t i = 0; q >= 0 && !*used && i < km_mount_table_size(t); i++) {
                const struct km_mount *m = km_mount_table_at(t, i);
                *used = statd_wanted(km_mount_fstype(m), km_mount_fs_options(m));
        }
        km_mount_table_free(t);
        return 0;
}

void statd_down_if_unused(const struct km_router *r) {
        _cleanup_(km_agent_freep) struct km_agent *a = NULL;
        struct km_error err = {};
        _cleanup_close_ int lock = -EBADF;
        bool used = true;

        if (vcs_container_exists(r->state_dir, STATD_NAME, NULL) <= 0)
                return;
        /* Held: a mount is between its statd_up() and its mount(2), and needs this statd. */
        lock = vcs_state_lock(r->state_dir, STATD_LOCK, LOCK_EX | LOCK_NB);
        if (lock < 0)
                return;
        if (km_host_run(r->host, statd_in_use_in_ns, &used, &err) < 0 || used)
                return;
        if (km_agent_new(r->host, r->state_dir, &a) < 0)
                return;
        (void)km_vcs_stop(a, STATD_NAME, STATD_STOP_MS, NULL, &err);
        if (km_vcs_remove(a, STATD_NAME, true, &err) < 0)
                log_msg(KM_LOG_WARNING, "container %s stays: %s; kubemount gc removes it", STATD_NAME, err.message);
        else
                log_msg(KM_LOG_NOTICE, "container %s: no NFS v3 mount with locks is left; it ended", STATD_NAME);
}
