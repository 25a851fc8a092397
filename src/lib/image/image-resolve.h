/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between the VCS client (vcs.c) and the image calls (image-api.c). */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>

#include "util.h"

/*
 * REF's record (pulled when missing if pull, else -ENOENT), resolved in h's
 * mount namespace; its tree checked against its record unless check_tree is
 * false (image_resolve).
 */
int image_resolve_for_vcs(const struct km_host *h, const struct km_image_options *o, const char *ref, bool pull,
                          bool check_tree, json_t **ret, struct km_error *err);
