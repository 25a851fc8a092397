/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registry bytes: manifest_parse without a Content-Type and with each kind
 * (and a generic one), manifest_select_platform on what parses as an index,
 * and image_config_parse on the same bytes.
 *
 * Invariants: a refusal is a negative errno with a message naming the
 * parser and nothing returned; a manifest has a known media type that agrees
 * with its kind and with the Content-Type, digests of the one valid form,
 * sizes up to 2^53, counts within limits, supported layer types; the same
 * bytes never parse as an image under one Content-Type and as an index under
 * another (THREATS 24); a selected platform is an image manifest entry of
 * the index; a config has valid diff_ids and NAME=VALUE variables.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "digest.h"
#include "fuzz-check.h"
#include "manifest.h"

#define MAX_INPUT (MANIFEST_MAX_SIZE + 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const content_types[] = {
        NULL, MT_OCI_MANIFEST, MT_OCI_INDEX, MT_DOCKER_MANIFEST, MT_DOCKER_LIST, "application/json",
};

static const char *const layer_types[] = {
        MT_OCI_LAYER_TAR,
        MT_OCI_LAYER_GZIP,
        MT_OCI_LAYER_ZSTD,
        MT_DOCKER_LAYER_GZIP,
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
};

static bool streq_(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

static bool is_image_type(const char *t) {
        return streq_(t, MT_OCI_MANIFEST) || streq_(t, MT_DOCKER_MANIFEST);
}

static bool is_index_type(const char *t) {
        return streq_(t, MT_OCI_INDEX) || streq_(t, MT_DOCKER_LIST);
}

static void check_descriptor(const struct descriptor *d) {
        check(d->media_type && d->media_type[0]);
        check(digest_is_valid(d->digest));
        check(d->size <= (UINT64_C(1) << 53));
}

static void check_manifest(const struct manifest *m, const char *ct) {
        check(is_image_type(m->media_type) || is_index_type(m->media_type));
        if (ct && strcmp(ct, "application/json") != 0)
                check(strcmp(m->media_type, ct) == 0);
        if (m->kind == MANIFEST_IMAGE) {
                bool known;

                check(is_image_type(m->media_type));
                check(m->n_entries == 0 && !m->entries);
                check_descriptor(&m->config);
                check(streq_(m->config.media_type, MT_OCI_CONFIG) || streq_(m->config.media_type, MT_DOCKER_CONFIG));
                check(m->n_layers <= MANIFEST_MAX_LAYERS && (m->layers || m->n_layers == 0));
                for (size_t i = 0; i < m->n_layers; i++) {
                        check_descriptor(&m->layers[i]);
                        known = false;
                        for (size_t j = 0; j < sizeof(layer_types) / sizeof(layer_types[0]); j++)
                                known = known || strcmp(m->layers[i].media_type, layer_types[j]) == 0;
                        check(known);
                }
        } else {
                check(m->kind == MANIFEST_INDEX && is_index_type(m->media_type));
                check(m->n_layers == 0 && !m->layers && !m->config.media_type);
                check(m->n_entries <= MANIFEST_MAX_INDEX_ENTRIES);
                for (size_t i = 0; i < m->n_entries; i++) {
                        check_descriptor(&m->entries[i]);
                        check(!is_image_type(m->entries[i].media_type) ||
                              (m->entries[i].os && m->entries[i].architecture));
                }
        }
}

static void check_select(const struct manifest *m, const char *os, const char *arch, const char *variant,
                         bool must_match) {
        const struct descriptor *d = NULL;
        struct km_error err = {};
        int r = manifest_select_platform(m, os, arch, variant, &d, &err);

        if (r < 0) {
                check(r == -ENOENT && strncmp(err.message, "manifest: no image for ", 23) == 0);
                check(!must_match);
                return;
        }
        check(r == 0 && d >= m->entries && d < m->entries + m->n_entries);
        check(is_image_type(d->media_type) && d->os && d->architecture);
}

static void check_refused(int r, const struct km_error *err, const char *prefix) {
        check(r < 0);
        if (r != -ENOMEM)
                check(err->code == r && strncmp(err->message, prefix, strlen(prefix)) == 0);
}

static void check_config(const uint8_t *data, size_t size) {
        struct image_config c = {};
        struct km_error err = {};
        size_t n = 0;
        int r;

        r = image_config_parse((const char *)data, size, &c, &err);
        if (r < 0) {
                check_refused(r, &err, "image config: ");
                check(!c.diff_ids && !c.env && !c.cmd && !c.entrypoint && !c.working_dir);
                return;
        }
        check(c.diff_ids);
        for (; c.diff_ids[n]; n++)
                check(digest_is_valid(c.diff_ids[n]));
        check(n <= MANIFEST_MAX_LAYERS);
        for (size_t i = 0; c.env && c.env[i]; i++)
                check(c.env[i][0] != '=' && strchr(c.env[i], '='));
        check(!c.working_dir || c.working_dir[0]);
        image_config_done(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int kind_seen = -1;
        uint8_t *copy;

        if (size > MAX_INPUT)
                return 0;
        /* An exact-size copy: any read past the end is an ASan finding. */
        copy = malloc(size ? size : 1);
        check(copy);
        memcpy(copy, data, size);

        for (size_t i = 0; i < sizeof(content_types) / sizeof(content_types[0]); i++) {
                struct manifest m = {};
                struct km_error err = {};
                int r = manifest_parse((const char *)copy, size, content_types[i], &m, &err);

                if (r < 0) {
                        check_refused(r, &err, "manifest: ");
                        check(!m.media_type && !m.layers && !m.entries);
                        continue;
                }
                check(r == 0);
                check_manifest(&m, content_types[i]);
                /* One digest, one meaning: the kind never depends on the Content-Type. */
                check(kind_seen < 0 || kind_seen == (int)m.kind);
                kind_seen = (int)m.kind;
                if (m.kind == MANIFEST_INDEX) {
                        check_select(&m, NULL, NULL, NULL, false);
                        check_select(&m, "linux", "arm", NULL, false);
                        check_select(&m, "linux", "arm64", "v8", false);
                        check_select(&m, "linux", "amd64", "v3", false);
                        /* An image entry's own platform always finds an image. */
                        for (size_t e = 0; e < m.n_entries && e < 4; e++)
                                if (is_image_type(m.entries[e].media_type))
                                        check_select(&m, m.entries[e].os, m.entries[e].architecture,
                                                     m.entries[e].variant, true);
                }
                manifest_done(&m);
        }

        check_config(copy, size);
        free(copy);
        return 0;
}
