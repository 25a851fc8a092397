/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the registry client's transport (registry.c) and its auth
 * (registry-auth.c) both say about HTTP (registry-http.c, below both):
 * URLs through libcurl's parser, and errors that name no secret.
 */
#pragma once

#include <stddef.h>

#include "util.h"

/* "scheme://host:port" of url, lowercased, the default port explicit (malloc'ed), or NULL; *ret_scheme too. */
char *registry_url_origin(const char *url, char **ret_scheme);
/* url for messages in buf: no userinfo, query or fragment. */
const char *registry_url_show(const char *url, char *buf, size_t size);
/* "registry HOST: WHAT: STATUS TEXT[: CODE: MESSAGE][; HINT]" of a non-200 answer. */
int registry_status_error(const char *host, const char *what, long status, const char *body, size_t size,
                          const char *hint, struct km_error *err);
