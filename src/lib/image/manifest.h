/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image manifests and indexes: OCI (application/vnd.oci.image.*) and Docker
 * v2 schema 2 (application/vnd.docker.distribution.manifest.*), parsed from
 * registry or layout bytes with jansson.  Hostile input: limits, digests
 * checked for form, foreign "urls" refused.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define MANIFEST_MAX_SIZE (4 * 1024 * 1024)
#define MANIFEST_MAX_LAYERS 256
#define MANIFEST_MAX_INDEX_ENTRIES 1024

#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_OCI_LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define MT_OCI_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define MT_OCI_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define MT_DOCKER_LAYER_GZIP "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* The Accept header a registry client sends for manifests (all four kinds). */
extern const char manifest_accept[];

struct descriptor {
        char *media_type;
        char digest[72]; /* "sha256:..." (digest_is_valid) */
        uint64_t size;
        /* for index entries */
        char *os, *architecture, *variant;
};

enum manifest_kind { MANIFEST_IMAGE, MANIFEST_INDEX };

struct manifest {
        enum manifest_kind kind;
        char *media_type;          /* as declared (or as given by the caller when the body has none) */
        struct descriptor config;  /* MANIFEST_IMAGE */
        struct descriptor *layers; /* MANIFEST_IMAGE */
        size_t n_layers;
        struct descriptor *entries; /* MANIFEST_INDEX */
        size_t n_entries;
};

/*
 * Parses BODY; media_type is the Content-Type the registry sent (may be NULL:
 * then the body's "mediaType", else its shape, decides).  A body that claims
 * to be both a manifest and an index, a layer with "urls", a digest of any
 * other form, a size over limits, an unknown layer media type: -EBADMSG with
 * err naming the field.
 */
int manifest_parse(const char *body, size_t size, const char *media_type, struct manifest *ret, struct km_error *err);
void manifest_done(struct manifest *m);

/* The index entry for os/arch/variant (NULLs: this machine's, e.g. linux/amd64); -ENOENT naming what exists. */
int manifest_select_platform(const struct manifest *index, const char *os, const char *arch, const char *variant,
                             const struct descriptor **ret, struct km_error *err);

/* The config blob's parts kubemount uses: Cmd/Entrypoint/Env/WorkingDir/Labels. */
struct image_config {
        char **entrypoint, **cmd, **env; /* NULL-terminated or NULL */
        char *working_dir;
        char **diff_ids; /* rootfs.diff_ids, NULL-terminated */
};
int image_config_parse(const char *body, size_t size, struct image_config *ret, struct km_error *err);
void image_config_done(struct image_config *c);
