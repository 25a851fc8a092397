/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry client's credentials (registry-auth.c), below its transport
 * (registry.c): the transport asks what to send (registry_auth_header) and
 * hands over each 401 to be answered (registry_auth_answer).  Auth reaches
 * the network only through the registry_get_fn the transport gave it, to
 * ask a token service for a token.  Also the parsers of what a registry or
 * a credentials file says (fuzz-registry-auth).
 *
 * Passwords and tokens are secrets: no message or log line holds one, and
 * every copy is wiped before it is freed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* What the transport got for auth: the final answer's status and body, malloc'ed and NUL-terminated. */
struct registry_reply {
        long status;
        char *body; /* a 200's (a secret: auth wipes it), else the registry's error text (truncated) */
        size_t size;
};

/*
 * The one way back from auth to the transport: GET url as every request
 * goes (TLS, redirects, retries), with the header line auth (NULL: none)
 * and an Accept of accept.  0 with *ret filled, -EFBIG when a 200's body is
 * larger than max (err not set: the caller says what), or < 0 with err set.
 */
typedef int (*registry_get_fn)(void *transport, const char *url, const char *accept, const char *auth, size_t max,
                               struct registry_reply *ret, struct km_error *err);

/* A 401 of the registry's own origin, as the transport got it. */
struct registry_refusal {
        const char *what; /* what was asked for, in messages: "manifest REPO:TAG" */
        long status;
        const char *challenge; /* WWW-Authenticate (several joined with ", "), or NULL */
        const char *body;      /* the registry's error text (truncated) */
        size_t size;
};

/* The credentials and tokens of one registry client; host and repository are borrowed (they outlive it). */
struct registry_auth;
int registry_auth_new(const char *host, const char *repository, char *const *auth_files, bool insecure,
                      registry_get_fn get, void *transport, struct registry_auth **ret, struct km_error *err);
void registry_auth_free(struct registry_auth *a);
DEFINE_CLEANUP(struct registry_auth, registry_auth_free)
/* The Authorization header line to send now, or NULL (anonymous). */
const char *registry_auth_header(const struct registry_auth *a);
/* Answers x: 0 when registry_auth_header() has something new to send, < 0 with err set when not. */
int registry_auth_answer(struct registry_auth *a, const struct registry_refusal *x, struct km_error *err);
/* What to add to a 401 of what registry_auth_header() sent (malloc'ed, or NULL). */
char *registry_auth_refused_hint(const struct registry_auth *a);

int registry_auth_find(char *const *files, const char *host, char **ret_basic, char **ret_file, struct km_error *err);
int registry_challenge_get(const char *header, const char *scheme, const char *name, char **ret);
int registry_token_parse(const char *body, size_t size, char **ret_header, struct km_error *err);
void registry_secret_free(char *s);
