/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The structures of a container description (spec.h): what spec_parse()
 * reads a config.json into, and what spec_generate_vcs() makes one from.
 * Types alone, below spec.c and spec-unpriv.c, which both use them.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jansson-dl.h"
#include "util.h"

/* One entry of "mounts". */
struct spec_mount {
        char *destination;         /* absolute, simplified, no ".." component */
        char *type;                /* "bind", "proc", "tmpfs", "sysfs", "devpts", "mqueue", ... */
        char *source;              /* may be NULL for pseudo filesystems */
        unsigned long flags;       /* MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC|MS_BIND|MS_REC|MS_*ATIME... */
        unsigned long propagation; /* 0, or one of MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE, maybe | MS_REC */
        char *data;                /* the remaining options, ','-joined, or NULL */
};

struct spec_device {
        char *path; /* absolute, below /dev */
        char type;  /* 'c', 'b', 'u' (= c) or 'p' */
        unsigned major, minor;
        mode_t mode; /* permission bits only */
        uid_t uid;
        gid_t gid;
};

struct spec_rlimit {
        int resource; /* RLIMIT_* */
        uint64_t soft, hard;
};

struct container_spec {
        /* process */
        char **args; /* non-empty, NULL-terminated */
        char **env;  /* NULL-terminated, may be empty; each "K=V" */
        char *cwd;   /* absolute */
        uid_t uid;
        gid_t gid;
        gid_t *additional_gids;
        size_t n_additional_gids;
        bool terminal;
        bool no_new_privileges;
        /* Capability sets as bit masks (1ULL << CAP_*). */
        uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
        struct spec_rlimit *rlimits;
        size_t n_rlimits;

        /* root */
        char *root_path;
        bool root_readonly;
        bool root_overlay; /* SPEC_ANNOTATION_LAYER: a writable layer of its own over root_path (overlay.h) */
        char *hostname;    /* may be NULL */

        struct spec_mount *mounts;
        size_t n_mounts;

        /* linux */
        unsigned long namespaces; /* CLONE_NEW* flags of the namespaces to create */
        char *netns_path;         /* a "network" entry with a "path": join it (then CLONE_NEWNET is not set) */
        struct spec_device *devices;
        size_t n_devices;
        char **masked_paths;              /* NULL-terminated */
        char **readonly_paths;            /* NULL-terminated */
        unsigned long rootfs_propagation; /* MS_* | MS_REC, or 0 for the default (rslave) */
        json_t *seccomp;                  /* "linux.seccomp" (a reference the spec holds), or NULL */

        /* "user" namespace (spec-unpriv.c): the command's ids 0..id_count-1 are host_uid.. and host_gid.. */
        uid_t host_uid;
        gid_t host_gid;
        uint32_t id_count;
        bool broker;         /* SPEC_ANNOTATION_BROKER: its mount(2) and umount2(2) go to the mount broker */
        char **broker_types; /* NULL-terminated: the fstypes the broker mounts for it */
};

/*
 * "annotations": {SPEC_ANNOTATION_LAYER: "overlay"}: root.path (an image's
 * tree in the store) is the read-only lower layer of an overlay whose upper
 * layer is the container's own; the launcher makes it (overlay.h).  A
 * runtime given the bundle sees root.path replaced by that overlay.
 */
#define SPEC_ANNOTATION_LAYER "io.kubemount.rootfs-layer"

/*
 * "annotations": {SPEC_ANNOTATION_BROKER: "fuse.sshfs,tmpfs"}: the container
 * runs unprivileged (a "user" namespace) and its mount(2) and umount2(2)
 * calls are trapped (seccomp user notification) for the mount broker, which
 * makes the listed fstypes for it after a policy check; "" lists none.
 */
#define SPEC_ANNOTATION_BROKER "io.kubemount.mount-broker"

/* A host path bound into the container. */
struct vcs_bind {
        const char *source;        /* absolute host path */
        const char *destination;   /* absolute container path */
        unsigned long propagation; /* MS_SHARED, MS_SLAVE or MS_PRIVATE (always applied with MS_REC) */
        bool readonly;
};

/* What a VCS container is made of; everything else is kubemount's default. */
struct vcs_inputs {
        const char *rootfs; /* absolute host path of the root filesystem */
        bool rootfs_readonly;
        bool rootfs_layer;    /* rootfs is an image's tree: give the container a writable layer of its own */
        char *const *args;    /* the command, NULL-terminated, non-empty */
        char *const *env;     /* extra "K=V" (NULL or NULL-terminated); PATH and HOME have defaults */
        const char *cwd;      /* NULL = "/" */
        const char *hostname; /* NULL: the node's (the UTS namespace starts as a copy) */
        const struct vcs_bind *binds;
        size_t n_binds;
        bool host_network; /* else a new, empty network namespace */
        bool host_dev;     /* bind the host's /dev instead of a fresh tmpfs with the VCS nodes */
        bool terminal;
        bool privileged;           /* the VCS capabilities in the host's user namespace, its own mounts */
        char *const *allow_mounts; /* unprivileged: the fstypes the broker mounts for it (NULL: none) */
        bool seccomp_named;        /* linux.seccomp SECCOMP_DEFAULT_NAME, not the profile (for the agent's wire) */
};
