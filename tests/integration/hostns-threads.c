/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A km_host in a multi-threaded caller: worker threads mount and unmount in
 * the host namespace over and over (every other round with one km_host_run
 * around the three steps, else each call entering the host itself) while
 * another thread keeps checking that it never leaves the caller's namespace,
 * and that its working directory stays.  Usage: hostns-threads HOSTNS DIR (DIR in the host namespace).
 * Run by hostns-threads.sh from a mount namespace that is not the host's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubemount.h"

#define ROUNDS 200
#define WORKERS 3

static const char *dir;
static struct km_host *host;
static char own_ns[64];
static atomic_bool done;
static atomic_int failures;

static void fail(const char *what) {
        fprintf(stderr, "hostns-threads: %s\n", what);
        atomic_fetch_add(&failures, 1);
}

struct job {
        char target[4096];
};

/* Mount, check that this thread sees it, unmount: each step in h's namespace (NULL: where the thread is). */
static int mount_check_umount(const struct km_host *h, const char *target, struct km_error *err) {
        struct km_mount_spec *s = km_mount_spec_new();
        int r;

        km_mount_spec_set_source(s, "threads");
        km_mount_spec_set_target(s, target);
        km_mount_spec_set_fstype(s, "tmpfs");
        km_mount_spec_add_options(s, "size=64k");
        r = km_mount(h, s, NULL, err);
        km_mount_spec_free(s);
        if (r < 0)
                return r;
        if (km_is_mount_point(h, target, err) != 1)
                fail("the mount is not visible to the thread that made it");
        return km_umount(h, target, NULL, 0, 0, NULL, err);
}

/* In the host namespace already (km_host_run): the steps take no host. */
static int mount_here(void *userdata, struct km_error *err) {
        struct job *j = userdata;
        return mount_check_umount(NULL, j->target, err);
}

static void *worker(void *arg) {
        struct job j;
        struct km_error err = { 0 };

        snprintf(j.target, sizeof(j.target), "%s/w%ld", dir, (long)arg);
        for (int i = 0; i < ROUNDS; i++)
                if ((i % 2 ? mount_check_umount(host, j.target, &err) : km_host_run(host, mount_here, &j, &err)) < 0) {
                        fail(err.message);
                        break;
                }
        return NULL;
}

/* Another thread of the same process must stay where it is all along. */
static void *watcher(void *arg) {
        char ns[64], cwd[4096];
        (void)arg;

        while (!atomic_load(&done)) {
                ssize_t n = readlink("/proc/thread-self/ns/mnt", ns, sizeof(ns) - 1);
                if (n < 0)
                        fail("readlink /proc/thread-self/ns/mnt");
                else {
                        ns[n] = '\0';
                        if (strcmp(ns, own_ns) != 0)
                                fail("another thread was moved to the host namespace");
                }
                if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/tmp") != 0)
                        fail("another thread's working directory changed");
        }
        return NULL;
}

int main(int argc, char **argv) {
        pthread_t workers[WORKERS], watch;
        ssize_t n;

        if (argc != 3) {
                fprintf(stderr, "usage: hostns-threads HOSTNS DIR\n");
                return 2;
        }
        dir = argv[2];
        if (km_host_new(argv[1], &host, NULL) < 0)
                return 2;
        if (chdir("/tmp") < 0 || (n = readlink("/proc/self/ns/mnt", own_ns, sizeof(own_ns) - 1)) < 0)
                return 2;
        own_ns[n] = '\0';
        if (km_host_is_current(host, NULL) != 0) {
                fprintf(stderr, "hostns-threads: must run outside the host namespace\n");
                return 2;
        }
        pthread_create(&watch, NULL, watcher, NULL);
        for (long i = 0; i < WORKERS; i++)
                pthread_create(&workers[i], NULL, worker, (void *)i);
        for (int i = 0; i < WORKERS; i++)
                pthread_join(workers[i], NULL);
        atomic_store(&done, true);
        pthread_join(watch, NULL);
        printf("hostns-threads: %d workers x %d host mounts, %d failures\n", WORKERS, ROUNDS, atomic_load(&failures));
        km_host_free(host);
        return atomic_load(&failures) ? 1 : 0;
}
