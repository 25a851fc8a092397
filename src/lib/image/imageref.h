/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image references as the ecosystem writes them:
 * [REGISTRY[:PORT]/]REPOSITORY[:TAG][@sha256:HEX], normalized as docker
 * does (no registry: docker.io; a one-component docker.io repository gets
 * "library/"; no tag and no digest: "latest").
 */
#pragma once

#include <stdbool.h>

#include "util.h"

struct image_ref {
        char *registry;   /* "docker.io", "localhost:5000", "[::1]:5000" */
        char *repository; /* "library/busybox", "kubemount/fuse-tools" */
        char *tag;        /* NULL when only a digest was given */
        char *digest;     /* "sha256:...", or NULL */
};

/* Parses and normalizes; -EINVAL with err naming what is wrong (the text is outside input). */
int image_ref_parse(const char *text, struct image_ref *ret, struct km_error *err);
void image_ref_done(struct image_ref *r);
/* The canonical text: REGISTRY/REPOSITORY[:TAG][@DIGEST] (malloc'ed). */
char *image_ref_format(const struct image_ref *r);
/*
 * An import under a NAME that pins a digest: 0 when it names what was
 * imported (the manifest, or the index it was chosen from: pull records
 * the same pair), else -EINVAL with err naming both (what: the source). index may be NULL.
 */
int image_ref_check_pin(const struct image_ref *r, const char *what, const char *manifest, const char *index,
                        struct km_error *err);
