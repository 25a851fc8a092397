/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * km_hostns_run in a multi-threaded caller: worker threads mount and unmount
 * in the host namespace over and over while another thread keeps checking
 * that it never leaves the caller's namespace, and that its working directory
 * stays.  Usage: hostns-threads HOSTNS DIR (DIR in the host namespace).
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

static const char *hostns, *dir;
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

/* In the host namespace: mount, check that this thread sees it, unmount. */
static int mount_here(void *userdata, struct km_error *err) {
        struct job *j = userdata;
        struct km_mount_spec *s = km_mount_spec_new();
        int r;

        km_mount_spec_set_source(s, "threads");
        km_mount_spec_set_target(s, j->target);
        km_mount_spec_set_fstype(s, "tmpfs");
        km_mount_spec_add_options(s, "size=64k");
        r = km_mount(s, NULL, err);
        km_mount_spec_free(s);
        if (r < 0)
                return r;
        if (km_is_mount_point(j->target, err) != 1)
                fail("the mount is not visible to the thread that made it");
        return km_umount(j->target, NULL, 0, 0, NULL, err);
}

static void *worker(void *arg) {
        struct job j;
        struct km_error err = { 0 };

        snprintf(j.target, sizeof(j.target), "%s/w%ld", dir, (long)arg);
        for (int i = 0; i < ROUNDS; i++)
                if (km_hostns_run(hostns, mount_here, &j, &err) < 0) {
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
        hostns = argv[1];
        dir = argv[2];
        if (chdir("/tmp") < 0 || (n = readlink("/proc/self/ns/mnt", own_ns, sizeof(own_ns) - 1)) < 0)
                return 2;
        own_ns[n] = '\0';
        if (km_hostns_is_current(hostns, NULL) != 0) {
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
        return atomic_load(&failures) ? 1 : 0;
}
