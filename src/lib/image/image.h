/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Images for VCS containers: pull from a registry or import from a file,
 * verified into the store and unpacked to a root filesystem the launcher
 * runs from.  A record per reference:
 *   {"ref", "manifest", "config", "rootfs" (path), "size", "created", "source"}
 * Everything runs in the calling thread's mount namespace: callers enter the
 * host's first (the store is the host's).
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>

#include "registry.h"
#include "store.h"

/* What an image may unpack to, all layers together (and what its layers may declare). */
#define IMAGE_MAX_BYTES_DEFAULT (16ULL << 30)

struct image_options {
        const char *store_dir;    /* NULL: $KUBEMOUNT_STORE_DIR, else STORE_DIR_DEFAULT */
        uint64_t max_image_bytes; /* 0: IMAGE_MAX_BYTES_DEFAULT */
        struct registry_options registry;
        const char *os, *arch, *variant; /* NULL: this machine's */
};

/* Fetches REF's manifest (a tag is always asked again), the blobs missing, and unpacks. */
int image_pull(const char *ref, const struct image_options *o, json_t **ret_record, struct km_error *err);

/*
 * SOURCE: oci:DIR[:TAG], oci-archive:FILE[:TAG] or rootfs:TARFILE.  NAME is
 * required for rootfs: and otherwise defaults to the layout's own reference
 * name (org.opencontainers.image.ref.name).
 */
int image_import(const char *source, const char *name, const struct image_options *o, json_t **ret_record,
                 struct km_error *err);

/* The records of every reference (array). */
int image_list(const struct image_options *o, json_t **ret, struct km_error *err);
/* Drops the reference, then what no other reference or live root filesystem uses. */
int image_remove(const char *ref, char *const *keep_rootfs, const struct image_options *o, struct km_error *err);

/*
 * The record of REF when the store has it complete; else pulled when pull
 * is true, -ENOENT otherwise.  Its "rootfs" is the tree, checked against its
 * record (unpacked again when it differs) unless check_tree is false: then
 * its "store" says where the agent checks it (tree-watch.h).
 */
int image_resolve(const char *ref, bool pull, bool check_tree, const struct image_options *o, json_t **ret_record,
                  struct km_error *err);
