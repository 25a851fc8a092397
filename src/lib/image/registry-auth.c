/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry client's credentials (registry-auth.h; registry.c does the
 * HTTP): docker config.json credentials for a host, WWW-Authenticate
 * challenges, token requests and their answers, and what to send next.
 *
 * Passwords and tokens are secrets: no message or log line here contains
 * one, and every copy made here is wiped before it is freed.
 */
#include <ctype.h>
#include <fcntl.h>
#include "jansson-dl.h"
#include "libcrypto-dl.h"
#include "registry-auth.h"
#include "registry-http.h"

#define AUTH_FILE_MAX (1024 * 1024)
#define TOKEN_MAX (16 * 1024)
#define TOKEN_BODY_MAX (64 * 1024)

void registry_secret_free(char *s) {
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}
static inline void secret_freep(char **p) {
        registry_secret_free(*p);
}
#define _cleanup_secret_ _cleanup_(secret_freep)

/* ---- docker config.json ---------------------------------------------- */

static const char *const docker_hub_names[] = {
        "docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com", NULL,
};

/* The files searched when the caller named none (NULL-terminated; free with km_strv_free). */
static char **default_auth_files(void) {
        const char *e;
        char **v = calloc(6, sizeof(char *));
        size_t n = 0;

        if (!v)
                return NULL;
        if ((e = getenv("REGISTRY_AUTH_FILE")) && *e)
                v[n++] = strdup(e);
        if ((e = getenv("DOCKER_CONFIG")) && *e && asprintf(&v[n], "%s/config.json", e) >= 0)
                n++;
        if ((e = getenv("HOME")) && *e && asprintf(&v[n], "%s/.docker/config.json", e) >= 0)
                n++;
        v[n++] = strdup("/var/lib/kubelet/config.json");
        v[n++] = strdup("/root/.docker/config.json");
        for (size_t i = 0; i < n; i++)
                if (!v[i]) {
                        km_strv_free(v);
                        return NULL;
                }
        return v;
}

/* "a, b, c" for messages (malloc'ed, or NULL). */
static char *auth_files_text(char *const *files) {
        char **def = NULL;
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!files) {
                def = default_auth_files();
                if (!def)
                        return NULL;
                files = def;
        }
        f = open_memstream(&text, &len);
        if (f) {
                for (size_t i = 0; files[i]; i++)
                        fprintf(f, "%s%s", i ? ", " : "", files[i]);
                fclose(f);
        }
        km_strv_free(def);
        return text;
}

/* Whether an "auths" key as docker writes it ("https://index.docker.io/v1/", "host:5000") names host. */
static bool auth_key_matches(const char *key, const char *host, bool exact) {
        size_t n;

        if (exact)
                return streq(key, host);
        if (startswith(key, "https://"))
                key += 8;
        else if (startswith(key, "http://"))
                key += 7;
        n = strcspn(key, "/");
        if (streq(host, "docker.io")) {
                for (size_t i = 0; docker_hub_names[i]; i++)
                        if (strlen(docker_hub_names[i]) == n && strncasecmp(key, docker_hub_names[i], n) == 0)
                                return true;
                return false;
        }
        return strlen(host) == n && strncasecmp(key, host, n) == 0;
}

/* "user:pass" from an entry: "auth" (base64 of user:pass) or "username" + "password". */
static int auth_entry_decode(json_t *entry, char **ret) {
        if (dlopen_libcrypto() < 0)
                return -EOPNOTSUPP;
        const char *a = json_string_value(json_object_get(entry, "auth"));
        const char *u = json_string_value(json_object_get(entry, "username"));
        const char *p = json_string_value(json_object_get(entry, "password"));
        _cleanup_secret_ char *s = NULL;

        if (a && *a) {
                size_t len = strlen(a);
                int n, pad;

                if (len % 4 != 0 || len > 64 * 1024)
                        return -EBADMSG;
                /* '=' only as one or two final padding characters: EVP_DecodeBlock reads it anywhere as zero bits. */
                pad = (a[len - 1] == '=') + (a[len - 2] == '=');
                if (memchr(a, '=', len - pad) || (pad == 1 && a[len - 2] == '='))
                        return -EBADMSG;
                s = calloc(1, len / 4 * 3 + 1);
                if (!s)
                        return -ENOMEM;
                n = sym_EVP_DecodeBlock((unsigned char *)s, (const unsigned char *)a, (int)len);
                if (n < 0)
                        return -EBADMSG;
                /* EVP_DecodeBlock counts the padding as zero bytes. */
                if (n < pad)
                        return -EBADMSG;
                s[n - pad] = '\0';
                if ((size_t)(n - pad) != strlen(s))
                        return -EBADMSG; /* a NUL inside */
        } else if (u && p && *u) {
                if (asprintf(&s, "%s:%s", u, p) < 0) {
                        s = NULL;
                        return -ENOMEM;
                }
        } else
                return -ENOENT; /* e.g. only an "identitytoken": not supported */
        if (!strchr(s, ':') || s[0] == ':')
                return -EBADMSG;
        for (const char *c = s; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        return -EBADMSG;
        *ret = TAKE_PTR(s);
        return 0;
}

/* 1 with *ret set if file has credentials for host, 0 if not, < 0 if it cannot be used. */
static int auth_file_lookup(const char *file, const char *host, char **ret) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_secret_ char *text = NULL;
        json_t *auths, *entry;
        const char *key;
        size_t size;
        int r;

        fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, AUTH_FILE_MAX, &text, &size);
        if (r < 0)
                return r;
        root = json_loadb(text, size, 0, NULL);
        if (!json_is_object(root))
                return -EBADMSG;
        /* config.json has "auths"; the older .dockercfg is the map itself. */
        auths = json_object_get(root, "auths");
        if (!auths)
                auths = root;
        if (!json_is_object(auths))
                return -EBADMSG;
        for (int exact = 1; exact >= 0; exact--)
                json_object_foreach(auths, key, entry) {
                        if (!json_is_object(entry) || !auth_key_matches(key, host, exact))
                                continue;
                        r = auth_entry_decode(entry, ret);
                        if (r == -ENOENT)
                                continue;
                        return r < 0 ? r : 1;
                }
        return 0;
}

/*
 * Credentials for host from the first of files (NULL: the default list) that
 * has an entry: *ret_basic is "user:pass" (free with registry_secret_free),
 * *ret_file names the file.  Returns 1, or 0 when no file has one.  Files
 * the caller named must be readable and valid; default files that are
 * missing are skipped, broken ones are skipped with a warning.
 */
int registry_auth_find(char *const *files, const char *host, char **ret_basic, char **ret_file, struct km_error *err) {
        char **def = NULL;
        bool named = files;
        int r = 0;

        if (!files) {
                def = default_auth_files();
                if (!def)
                        return error_set(err, -ENOMEM, "auth files");
                files = def;
        }
        for (size_t i = 0; files[i]; i++) {
                r = auth_file_lookup(files[i], host, ret_basic);
                if (r > 0) {
                        *ret_file = strdup(files[i]);
                        if (!*ret_file) {
                                registry_secret_free(TAKE_PTR(*ret_basic));
                                r = error_set(err, -ENOMEM, "auth file");
                        }
                        break;
                }
                if (r == 0 || (r == -ENOENT && !named)) {
                        r = 0;
                        continue;
                }
                if (!named) {
                        log_msg(KM_LOG_WARNING, "auth file %s skipped: %s", files[i],
                                r == -EBADMSG ? "not a docker config.json with valid entries" : strerror(-r));
                        r = 0;
                        continue;
                }
                if (r == -EBADMSG)
                        r = error_set_plain(err, r,
                                            "auth file %s: not a docker config.json, or its entry for %s is "
                                            "malformed",
                                            files[i], host);
                else
                        r = error_set(err, r, "auth file %s", files[i]);
                break;
        }
        km_strv_free(def);
        return r < 0 ? r : r > 0;
}

/* ---- WWW-Authenticate ------------------------------------------------ */

static bool is_tchar(char c) {
        return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}
static const char *skip_ws(const char *p) {
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/*
 * Finds the first challenge of scheme in a WWW-Authenticate value (several
 * headers joined with ", " are fine) and the value of its parameter name
 * (quoted strings may hold commas and \-escapes).  Returns 1 when the scheme
 * is there (*ret: the value, or NULL if the parameter is absent), 0 when not,
 * -EBADMSG when the value cannot be parsed.
 */
int registry_challenge_get(const char *header, const char *scheme, const char *name, char **ret) {
        const char *p = header;
        bool found = false;

        *ret = NULL;
        for (;;) {
                const char *s;
                bool mine;

                while (*p == ' ' || *p == '\t' || *p == ',')
                        p++;
                if (!*p)
                        break;
                for (s = p; is_tchar(*p); p++)
                        ;
                if (p == s)
                        goto bad;
                mine = !found && (size_t)(p - s) == strlen(scheme) && strncasecmp(s, scheme, p - s) == 0;
                found = found || mine;
                /* auth-params, up to the next challenge: a token not followed by "=" */
                for (;;) {
                        _cleanup_free_ char *value = NULL;
                        const char *n, *t;

                        p = skip_ws(p);
                        while (*p == ',')
                                p = skip_ws(p + 1);
                        for (n = p; is_tchar(*p); p++)
                                ;
                        if (p == n) {
                                if (*p)
                                        goto bad;
                                break;
                        }
                        t = skip_ws(p);
                        if (*t != '=') {
                                p = n;
                                break;
                        }
                        p = skip_ws(t + 1);
                        if (*p == '=') { /* token68 padding, "abc==" */
                                while (*p == '=')
                                        p++;
                        } else if (*p == '"') {
                                size_t len = 0;
                                FILE *f = open_memstream(&value, &len);

                                if (!f)
                                        return -ENOMEM;
                                for (p++; *p && *p != '"'; p++) {
                                        if (*p == '\\' && p[1])
                                                p++;
                                        fputc(*p, f);
                                }
                                fclose(f);
                                if (*p != '"')
                                        goto bad;
                                p++;
                        } else {
                                const char *v = p;

                                while (*p && *p != ',' && *p != ' ' && *p != '\t')
                                        p++;
                                value = strndup(v, p - v);
                                if (!value)
                                        return -ENOMEM;
                        }
                        if (mine && value && !*ret && (size_t)(t - n) >= strlen(name) &&
                            strncasecmp(n, name, strlen(name)) == 0 && !is_tchar(n[strlen(name)]))
                                *ret = TAKE_PTR(value);
                        p = skip_ws(p);
                        if (*p && *p != ',')
                                goto bad;
                }
        }
        return found;
bad:
        free(TAKE_PTR(*ret));
        return -EBADMSG;
}

/* ---- token service --------------------------------------------------- */

/* {"token": T} or {"access_token": T} -> "Authorization: Bearer T" (free with registry_secret_free). */
int registry_token_parse(const char *body, size_t size, char **ret_header, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *root = json_loadb(body, size, 0, NULL);
        const char *t = NULL;

        if (json_is_object(root)) {
                t = json_string_value(json_object_get(root, "token"));
                if (!t || !*t)
                        t = json_string_value(json_object_get(root, "access_token"));
        }
        if (!t || !*t)
                return error_set_plain(err, -EBADMSG, "the token service's answer has no \"token\"");
        if (strlen(t) > TOKEN_MAX)
                return error_set_plain(err, -EBADMSG, "the token service's token is longer than %d bytes", TOKEN_MAX);
        for (const char *c = t; *c; c++)
                if (*c <= 0x20 || *c >= 0x7f)
                        return error_set_plain(err, -EBADMSG,
                                               "the token service's token has characters "
                                               "that cannot go into a header");
        if (asprintf(ret_header, "Authorization: Bearer %s", t) < 0)
                return error_set(err, -ENOMEM, "token");
        return 0;
}

/* ---- token requests, Basic headers, hints ------------------------------ */

/* realm?service=S&scope=A&scope=B (several scopes are separated by spaces in challenges), percent-encoded. */
static char *token_url(const char *realm, const char *service, const char *scope) {
        char *url = NULL;
        size_t len = 0;
        char sep = strchr(realm, '?') ? '&' : '?';
        FILE *f = open_memstream(&url, &len);

        if (!f)
                return NULL;
        fputs(realm, f);
        for (int i = 0; i < 2; i++)
                for (const char *p = i == 0 ? service : scope; p && *p;) {
                        size_t n = i == 0 ? strlen(p) : strcspn(p, " ");
                        if (n > 0) {
                                fprintf(f, "%c%s=", sep, i == 0 ? "service" : "scope");
                                sep = '&';
                                for (size_t j = 0; j < n; j++)
                                        if (isalnum((unsigned char)p[j]) || strchr("-._~", p[j]))
                                                fputc(p[j], f);
                                        else
                                                fprintf(f, "%%%02X", (unsigned char)p[j]);
                        }
                        p += n;
                        p += strspn(p, " ");
                }
        if (fclose(f) != 0) {
                free(url);
                return NULL;
        }
        return url;
}

/* "Authorization: Basic " + base64(user:pass) through libcrypto (free with registry_secret_free), or NULL. */
static char *basic_header(const char *userpass) {
        static const char prefix[] = "Authorization: Basic ";
        size_t n = strlen(userpass);
        char *h = dlopen_libcrypto() < 0 ? NULL : calloc(1, sizeof(prefix) + (n + 2) / 3 * 4);

        if (!h)
                return NULL;
        memcpy(h, prefix, sizeof(prefix) - 1);
        sym_EVP_EncodeBlock((unsigned char *)h + sizeof(prefix) - 1, (const unsigned char *)userpass, (int)n);
        return h;
}

/* What to add to a 401: the credentials from refused_file were refused, or there were none (malloc'ed). */
static char *creds_hint(const char *host, char *const *files, const char *refused_file) {
        _cleanup_free_ char *list = refused_file ? NULL : auth_files_text(files);
        char *h = NULL;

        int k = refused_file ? asprintf(&h, "the credentials for %s from %s were refused", host, refused_file)
                             : asprintf(&h, "no credentials for %s in %s", host, list ? list : "the auth files");
        if (k < 0)
                return NULL;
        return h;
}

/* ---- the 401s of one registry ------------------------------------------ */

struct token {
        char *scope;
        char *header; /* "Authorization: Bearer ..." (secret) */
};

struct registry_auth {
        const char *host, *repository; /* the transport's */
        bool insecure;
        registry_get_fn get; /* the way to the token service */
        void *transport;
        char **auth_files; /* NULL: the default list */
        bool creds_loaded;
        char *basic;      /* "Authorization: Basic ..." (secret), or NULL */
        char *creds_file; /* where basic came from */
        char *auth;       /* the header sent to the registry now (points to basic or a token), or NULL */
        struct token *tokens;
        size_t n_tokens;
};

static void reply_done(struct registry_reply *x) {
        if (x->body) {
                explicit_bzero(x->body, x->size);
                free(TAKE_PTR(x->body));
        }
}

static int answer_error(struct registry_auth *r, const struct registry_refusal *x, const char *hint,
                        struct km_error *err) {
        return registry_status_error(r->host, x->what, x->status, x->body, x->size, hint, err);
}

static int creds_load(struct registry_auth *r, struct km_error *err) {
        _cleanup_free_ char *file = NULL;
        char *userpass = NULL;
        int k;

        if (r->creds_loaded)
                return 0;
        k = registry_auth_find(r->auth_files, r->host, &userpass, &file, err);
        if (k < 0)
                return k;
        r->creds_loaded = true;
        if (k > 0) {
                char *h = basic_header(userpass);

                registry_secret_free(userpass);
                if (!h)
                        return error_set(err, -ENOMEM, "credentials");
                r->basic = h;
                r->creds_file = TAKE_PTR(file);
                log_msg(KM_LOG_DEBUG, "registry %s: credentials from %s", r->host, r->creds_file);
        }
        return 0;
}

/* A token for scope from the token service at realm (with the basic credentials, if any). */
static int token_fetch(struct registry_auth *r, const char *realm, const char *service, const char *scope, char **ret,
                       struct km_error *err) {
        _cleanup_free_ char *url = NULL, *hint = NULL;
        _cleanup_(reply_done) struct registry_reply x = {};
        _cleanup_free_ char *scheme = NULL, *o = registry_url_origin(realm, &scheme);
        char shown[512], what[600];
        int e;

        if (!o || !scheme || (!streq(scheme, "https") && !(r->insecure && streq(scheme, "http"))))
                return error_set_plain(err, -EPROTO,
                                       "registry %s: token service %s refused: only https is "
                                       "allowed (the registry is not marked insecure)",
                                       r->host, registry_url_show(realm, shown, sizeof(shown)));
        url = token_url(realm, service, scope);
        if (!url)
                return error_set(err, -ENOMEM, "token request");
        e = creds_load(r, err);
        if (e < 0)
                return e;
        snprintf(what, sizeof(what), "token for %s from %s", scope, registry_url_show(realm, shown, sizeof(shown)));
        e = r->get(r->transport, url, "application/json", r->basic, TOKEN_BODY_MAX, &x, err);
        if (e == -EFBIG)
                e = error_set_plain(err, e, "registry %s: %s: the answer is larger than %d bytes", r->host, what,
                                    TOKEN_BODY_MAX);
        else if (e >= 0 && x.status != 200) {
                if (x.status == 401 || x.status == 403)
                        hint = creds_hint(r->host, r->auth_files, r->basic ? r->creds_file : NULL);
                e = registry_status_error(r->host, what, x.status, x.body, x.size, hint, err);
        } else if (e >= 0) {
                e = registry_token_parse(x.body ? x.body : "", x.size, ret, err);
                if (e < 0)
                        error_wrap(err, e, "registry %s: %s", r->host, what);
                else
                        log_msg(KM_LOG_DEBUG, "registry %s: got a %s", r->host, what);
        } else
                error_wrap(err, e, "registry %s: %s", r->host, what);
        return e;
}

static struct token *token_find(struct registry_auth *r, const char *scope) {
        for (size_t i = 0; i < r->n_tokens; i++)
                if (streq(r->tokens[i].scope, scope))
                        return &r->tokens[i];
        return NULL;
}

/*
 * From its challenge: Bearer (a token per scope from the realm, cached; a
 * cached one that was just refused is fetched anew) or Basic (the
 * credentials of the auth files).
 */
int registry_auth_answer(struct registry_auth *r, const struct registry_refusal *x, struct km_error *err) {
        _cleanup_free_ char *realm = NULL, *service = NULL, *scope = NULL, *hint = NULL;
        struct token *t;
        int k, e;

        if (!x->challenge)
                return answer_error(r, x, "no WWW-Authenticate challenge with it", err);
        k = registry_challenge_get(x->challenge, "Bearer", "realm", &realm);
        if (k > 0) {
                char *header = NULL;

                if (!realm || !*realm)
                        return answer_error(r, x, "a Bearer challenge without a realm", err);
                if (registry_challenge_get(x->challenge, "Bearer", "service", &service) < 0 ||
                    registry_challenge_get(x->challenge, "Bearer", "scope", &scope) < 0)
                        return error_set(err, -ENOMEM, "challenge");
                if (!scope && asprintf(&scope, "repository:%s:pull", r->repository) < 0) {
                        scope = NULL;
                        return error_set(err, -ENOMEM, "challenge");
                }
                t = token_find(r, scope);
                if (t && r->auth == t->header) {
                        /* Sent and refused (expired): forget it. */
                        log_msg(KM_LOG_DEBUG, "registry %s: the token for %s was refused, asking again", r->host,
                                scope);
                        registry_secret_free(t->header);
                        free(t->scope);
                        *t = r->tokens[--r->n_tokens];
                        r->auth = NULL;
                        t = NULL;
                }
                if (!t) {
                        struct token *n;

                        e = token_fetch(r, realm, service, scope, &header, err);
                        if (e < 0)
                                return e;
                        n = reallocarray(r->tokens, r->n_tokens + 1, sizeof(struct token));
                        if (!n) {
                                registry_secret_free(header);
                                return error_set(err, -ENOMEM, "token");
                        }
                        r->tokens = n;
                        t = &r->tokens[r->n_tokens];
                        t->header = header;
                        t->scope = TAKE_PTR(scope);
                        r->n_tokens++;
                }
                r->auth = t->header;
                return 0;
        }
        if (k == 0)
                k = registry_challenge_get(x->challenge, "Basic", "realm", &realm);
        if (k < 0)
                return answer_error(r, x, "an unparsable WWW-Authenticate challenge", err);
        if (k == 0)
                return answer_error(r, x, "no Basic or Bearer challenge", err);
        e = creds_load(r, err);
        if (e < 0)
                return e;
        if (!r->basic) {
                hint = creds_hint(r->host, r->auth_files, NULL);
                return answer_error(r, x, hint, err);
        }
        if (r->auth == r->basic) {
                hint = creds_hint(r->host, r->auth_files, r->creds_file);
                return answer_error(r, x, hint, err);
        }
        r->auth = r->basic;
        return 0;
}

int registry_auth_new(const char *host, const char *repository, char *const *auth_files, bool insecure,
                      registry_get_fn get, void *transport, struct registry_auth **ret, struct km_error *err) {
        _cleanup_(registry_auth_freep) struct registry_auth *r = calloc(1, sizeof(*r));
        size_t n = 0;

        if (!r)
                return error_set(err, -ENOMEM, "registry");
        *r = (struct registry_auth){
                .host = host, .repository = repository, .insecure = insecure, .get = get, .transport = transport
        };
        if (auth_files) {
                while (auth_files[n])
                        n++;
                r->auth_files = calloc(n + 1, sizeof(char *));
                if (!r->auth_files)
                        return error_set(err, -ENOMEM, "registry");
                for (size_t i = 0; i < n; i++)
                        if (!(r->auth_files[i] = strdup(auth_files[i])))
                                return error_set(err, -ENOMEM, "registry");
        }
        *ret = TAKE_PTR(r);
        return 0;
}

void registry_auth_free(struct registry_auth *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n_tokens; i++) {
                registry_secret_free(r->tokens[i].header);
                free(r->tokens[i].scope);
        }
        free(r->tokens);
        registry_secret_free(r->basic);
        free(r->creds_file);
        km_strv_free(r->auth_files);
        free(r);
}

const char *registry_auth_header(const struct registry_auth *r) {
        return r->auth;
}

char *registry_auth_refused_hint(const struct registry_auth *r) {
        return r->auth == r->basic ? creds_hint(r->host, r->auth_files, r->creds_file)
                                   : strdup("the token was refused");
}
