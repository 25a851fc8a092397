/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which VCS image serves which filesystem type (issue 11, point 3): the
 * effective table built from the design's sources, highest first:
 *
 *   1. the command line: "--vcs-image TYPE=REF" and the design's
 *      "--TYPE_mount_container=REF" (both set the type's policy to container);
 *   2. a ConfigMap directory (the kubelet swaps DIR/..data, so every key is
 *      read through one open of it): the design's single entry, keys
 *      volume-plugin + docker-container, and a key "mappings" holding a
 *      document of the vcs.d schema below;
 *   3. /etc/kubemount/vcs.d/ *.json, in name order, a later file over an
 *      earlier one:
 *        {"mappings": [{"types": ["nfs", "nfs4"], "image": "REF",
 *                       "policy": "auto"|"host"|"container", "daemon": BOOL,
 *                       "options": "OPT,OPT", "privileged": BOOL}]}
 *      (image is required unless policy is host; policy defaults to auto;
 *      daemon to whether the type's client keeps running, which cannot be
 *      turned off; options, added to the kubelet's when the image mounts,
 *      to none; privileged, a container with the VCS capabilities in the
 *      host's user namespace that makes its own mounts, to false: the
 *      default container is unprivileged and the broker makes its mounts);
 *   4. the compiled-in defaults, naming the images of images/; besides the
 *      mount types, ext2, ext3, ext4, xfs and the pseudo-type "block-tools"
 *      (blkid, blockdev, fsck) map the tools of the multi-call form
 *      (vcs-tools.h) to fuse-tools:latest; xfs is privileged (mkfs.xfs and
 *      xfs_growfs need CAP_SYS_ADMIN of the host), every other one is not.
 *
 * The highest source that names a type gives its whole entry (no merging of
 * fields).  A source is taken whole or not at all: a bad file, ConfigMap or
 * entry in one is a warning that drops that source only, so a node keeps
 * mounting every type the others map; a bad command line is an error.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "jansson-dl.h"
#include "util.h"

#define VCS_DIR_DEFAULT "/etc/kubemount/vcs.d"
/* Bounds on outside input: entries per source, files in vcs.d, a ConfigMap key's size. */
#define VCS_SOURCE_ENTRIES_MAX 1024
#define VCS_DIR_FILES_MAX 256
#define VCS_KEY_MAX 4096

enum vcs_policy {
        VCS_POLICY_AUTO,      /* the host's helper when it has one, else the image */
        VCS_POLICY_HOST,      /* always the host's helper or kernel */
        VCS_POLICY_CONTAINER, /* always the image */
};

struct vcs_entry {
        char *type;  /* "nfs", "fuse.sshfs" */
        char *image; /* reference as given; NULL for a host-only entry */
        enum vcs_policy policy;
        bool daemon;     /* the client keeps running while mounted */
        char *options;   /* mount options the image's mount gets besides the kubelet's ("nolock"), or NULL */
        bool privileged; /* its container keeps host capabilities and mounts by itself (no broker) */
        char *source;    /* "command line", "configmap DIR", "FILE", "default" */
};

struct vcs_map {
        struct vcs_entry *entries; /* sorted by type, one per type */
        size_t n;
        char **warnings; /* one line per source that was dropped, NULL-terminated (or NULL) */
        size_t n_warnings;
};

struct vcs_map_sources {
        /* Raw values: "TYPE=REF" of --vcs-image, or a whole "--TYPE_mount_container=REF". */
        char *const *command_line;
        size_t n_command_line;
        const char *configmap_dir; /* NULL: none */
        const char *config_dir;    /* NULL: none */
        bool config_dir_named;     /* not the default: a missing one is a warning */
        bool no_defaults;          /* tests: leave out the compiled-in table */
};

/* Fills configmap_dir from $KUBEMOUNT_VCS_CONFIGMAP and config_dir from $KUBEMOUNT_VCS_DIR or the default. */
void vcs_map_sources_from_env(struct vcs_map_sources *s);

/*
 * Builds the effective table.  -EINVAL with err naming the option for a bad
 * command line, -ENOMEM; problems of the other sources are warnings in the
 * table.
 */
int vcs_map_load(const struct vcs_map_sources *s, struct vcs_map **ret, struct km_error *err);
void vcs_map_free(struct vcs_map *m);
DEFINE_CLEANUP(struct vcs_map, vcs_map_free)

/* An empty table, to add sources to one by one (lowest first). */
struct vcs_map *vcs_map_new(void);
/* One document of the vcs.d schema as the source named source, all or nothing: -EINVAL/-E2BIG with err. */
int vcs_map_add_json(struct vcs_map *m, json_t *doc, const char *source, struct km_error *err);

const struct vcs_entry *vcs_map_find(const struct vcs_map *m, const char *type);
/*
 * The images of the table (of types, if any are named), each once, in the
 * table's order: a NULL-terminated list (km_strv_free() it).  -EINVAL with
 * err for a type the table has no entry for, -ENOMEM.
 */
int vcs_map_images(const struct vcs_map *m, char *const *types, char ***ret, struct km_error *err);
const char *vcs_policy_to_string(enum vcs_policy p);

/* Whether arg is spelled "--TYPE_mount_container=..." (the CLI passes those on whole). */
bool vcs_map_is_container_option(const char *arg);
