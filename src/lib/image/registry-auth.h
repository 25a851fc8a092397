/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between the registry client (registry.c) and its helpers (registry-auth.c):
 * credentials, WWW-Authenticate challenges, token answers, TLS material,
 * URLs shown without their query, errors that name no secret.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

int registry_auth_find(char *const *files, const char *host, char **ret_basic, char **ret_file, struct km_error *err);
char *registry_auth_files_text(char *const *files);
int registry_challenge_get(const char *header, const char *scheme, const char *name, char **ret);
int registry_token_parse(const char *body, size_t size, char **ret_header, struct km_error *err);
int registry_tls_load(const char *host, const char *certs_dir, const char *system_bundle, char **ret_ca,
                      size_t *ret_ca_size, char **ret_cert, char **ret_key, struct km_error *err);
void registry_secret_free(char *s);
char *registry_url_origin(const char *url, char **ret_scheme);
const char *registry_url_show(const char *url, char *buf, size_t size);
char *registry_token_url(const char *realm, const char *service, const char *scope);
char *registry_basic_header(const char *userpass);
int registry_curl_errno(int code, bool *retry);
int registry_status_error(const char *host, const char *what, long status, const char *body, size_t size,
                          const char *hint, struct km_error *err);
int registry_name_check(const char *host, const char *repository, struct km_error *err);
bool registry_tag_is_valid(const char *s);
void registry_retry_wait(const char *retry_after, int attempt);
int registry_err_wrap(struct km_error *err, int e, const char *fmt, ...) _printf_(3, 4);
char *registry_creds_hint(const char *host, char *const *files, const char *refused_file);
