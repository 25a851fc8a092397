/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trust of a registry, from certs.d directories (registry-tls.c); the transport (registry.c) uses it. */
#pragma once

#include <stddef.h>

#include "util.h"

int registry_tls_load(const char *host, const char *certs_dir, const char *system_bundle, char **ret_ca,
                      size_t *ret_ca_size, char **ret_cert, char **ret_key, struct km_error *err);
