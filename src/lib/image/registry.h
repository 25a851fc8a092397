/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An OCI distribution-spec client with libcurl: manifests by tag or digest,
 * blobs streamed into the store, anonymous / basic / bearer-token auth (the
 * WWW-Authenticate challenge), docker-style credentials, TLS verified with
 * the system CAs plus per-registry CAs, plain HTTP only for registries named
 * insecure, retries with backoff.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "imageref.h"
#include "store.h"

struct registry_options {
        char *const *insecure;   /* "HOST:PORT" allowed over plain HTTP (NULL-terminated or NULL) */
        const char *certs_dir;   /* extra DIR with HOST:PORT/ca.crt, besides /etc/containers/certs.d and
                                    /etc/docker/certs.d */
        char *const *auth_files; /* docker config.json files, first match wins; NULL: $DOCKER_CONFIG/config.json,
                                    ~/.docker/config.json, /var/lib/kubelet/config.json, ... */
        int progress_fd;         /* >= 0 and a terminal: a progress line there */
        int retries;             /* default 3 */
};

struct registry;
int registry_new(const struct image_ref *ref, const struct registry_options *o, struct registry **ret,
                 struct km_error *err);
void registry_free(struct registry *r);
DEFINE_CLEANUP(struct registry, registry_free)

/*
 * GET /v2/REPO/manifests/REFERENCE (a tag or a digest), with the Accept of
 * every manifest kind; at most MANIFEST_MAX_SIZE.  Returns the bytes, the
 * Content-Type and the digest computed over the bytes; when reference is a
 * digest, the bytes must match it (-EBADMSG otherwise).
 */
int registry_get_manifest(struct registry *r, const char *reference, char **ret_body, size_t *ret_size,
                          char **ret_media_type, char ret_digest[72], struct km_error *err);

/* GET /v2/REPO/blobs/DIGEST into the store (verified; no more than size bytes accepted). */
int registry_get_blob(struct registry *r, struct store *s, const char *digest, uint64_t size, struct km_error *err);
