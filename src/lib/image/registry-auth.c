/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry client's credentials and trust (registry.c does the HTTP):
 * docker config.json credentials for a host, WWW-Authenticate challenges,
 * token-service answers, the per-registry CA certificates and client
 * certificates of certs.d directories; and the small pure helpers of
 * registry.c (URLs for messages, errors of statuses and of libcurl, names).
 *
 * Passwords and tokens are secrets: no message or log line here contains
 * one, and every copy made here is wiped before it is freed.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include "jansson-dl.h"
#include <openssl/evp.h>
#include <sys/stat.h>
#include <time.h>

#include "libcrypto-dl.h"
#include "libcurl-dl.h"
#include "util.h"

#include "registry-auth.h"

#define AUTH_FILE_MAX (1024 * 1024)
#define CERT_FILE_MAX (1024 * 1024)
#define BUNDLE_MAX (8 * 1024 * 1024)
#define TOKEN_MAX (16 * 1024)

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
char *registry_auth_files_text(char *const *files) {
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

/* ---- certs.d --------------------------------------------------------- */

static int append_file(FILE *out, int dirfd, const char *name, size_t max) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, max, &buf, &size);
        if (r < 0)
                return r;
        fwrite(buf, 1, size, out);
        fputc('\n', out);
        return 0;
}

static int select_cert_file(const struct dirent *d) {
        size_t n = strlen(d->d_name);
        return d->d_name[0] != '.' &&
               ((n > 4 && streq(d->d_name + n - 4, ".crt")) || (n > 5 && streq(d->d_name + n - 5, ".cert")));
}

/*
 * The trust for host: every *.crt of /etc/containers/certs.d/HOST,
 * /etc/docker/certs.d/HOST and CERTS_DIR/HOST appended to the system bundle
 * (*ret_ca, NULL when there is none), and the first NAME.cert with its
 * NAME.key as the client certificate (*ret_cert, *ret_key: paths, or NULL).
 */
int registry_tls_load(const char *host, const char *certs_dir, const char *system_bundle, char **ret_ca,
                      size_t *ret_ca_size, char **ret_cert, char **ret_key, struct km_error *err) {
        const char *dirs[] = { "/etc/containers/certs.d", "/etc/docker/certs.d", certs_dir };
        _cleanup_free_ char *ca = NULL, *cert = NULL, *key = NULL;
        _cleanup_fclose_ FILE *out = NULL;
        size_t ca_size = 0;
        bool extra = false;
        int r;

        *ret_ca = *ret_cert = *ret_key = NULL;
        *ret_ca_size = 0;
        if (!*host || strchr(host, '/') || streq(host, ".") || streq(host, ".."))
                return error_set_plain(err, -EINVAL, "registry name \"%s\" cannot name a certs.d directory", host);
        out = open_memstream(&ca, &ca_size);
        if (!out)
                return error_set(err, -ENOMEM, "CA bundle");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *path = NULL;
                _cleanup_close_ int dfd = -EBADF;
                struct dirent **list = NULL;
                int n;

                if (!dirs[i] || asprintf(&path, "%s/%s", dirs[i], host) < 0)
                        continue;
                dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue;
                        return error_set(err, -errno, "certificates directory %s", path);
                }
                n = scandir(path, &list, select_cert_file, alphasort);
                if (n < 0)
                        return error_set(err, -errno, "certificates directory %s", path);
                r = 0;
                for (int j = 0; j < n && r >= 0; j++) {
                        const char *name = list[j]->d_name;
                        size_t len = strlen(name);

                        if (streq(name + len - 4, ".crt")) {
                                r = append_file(out, dfd, name, CERT_FILE_MAX);
                                if (r < 0)
                                        r = error_set(err, r, "CA certificate %s/%s", path, name);
                                extra = true;
                        } else if (!cert) {
                                _cleanup_free_ char *k = NULL;

                                if (asprintf(&k, "%.*s.key", (int)(len - 5), name) < 0 ||
                                    asprintf(&cert, "%s/%s", path, name) < 0 || asprintf(&key, "%s/%s", path, k) < 0)
                                        r = error_set(err, -ENOMEM, "client certificate");
                                else if (faccessat(dfd, k, R_OK, 0) < 0)
                                        r = error_set(err, -errno, "client certificate %s: its key %s", cert, key);
                        }
                }
                for (int j = 0; j < n; j++)
                        free(list[j]);
                free(list);
                if (r < 0)
                        return r;
        }
        if (extra && system_bundle) {
                /* The system bundle first: the extra CAs add to it, never replace it. */
                _cleanup_free_ char *extra_ca = NULL;
                size_t extra_size;

                if (fclose(TAKE_PTR(out)) != 0)
                        return error_set(err, -ENOMEM, "CA bundle");
                extra_ca = TAKE_PTR(ca);
                extra_size = ca_size;
                out = open_memstream(&ca, &ca_size);
                if (!out)
                        return error_set(err, -ENOMEM, "CA bundle");
                r = append_file(out, AT_FDCWD, system_bundle, BUNDLE_MAX);
                if (r < 0 && r != -ENOENT)
                        return error_set(err, r, "system CA bundle %s", system_bundle);
                fwrite(extra_ca, 1, extra_size, out);
        }
        if (fflush(out) != 0)
                return error_set(err, -ENOMEM, "CA bundle");
        fclose(TAKE_PTR(out));
        if (extra) {
                *ret_ca = TAKE_PTR(ca);
                *ret_ca_size = ca_size;
        }
        *ret_cert = TAKE_PTR(cert);
        *ret_key = TAKE_PTR(key);
        return 0;
}

/* ---- small helpers of registry.c ------------------------------------------ */

DEFINE_CLEANUP(CURLU, sym_curl_url_cleanup)

/* "scheme://host:port" of url, lowercased, the default port explicit (malloc'ed), or NULL; *ret_scheme too. */
char *registry_url_origin(const char *url, char **ret_scheme) {
        if (dlopen_libcurl() < 0)
                return NULL;
        _cleanup_(sym_curl_url_cleanupp) CURLU *u = sym_curl_url();
        char *scheme = NULL, *host = NULL, *port = NULL, *o = NULL;

        if (u && sym_curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
            asprintf(&o, "%s://%s:%s", scheme, host, port) >= 0) {
                for (char *c = o; *c; c++)
                        *c = (char)tolower((unsigned char)*c);
                if (ret_scheme && !(*ret_scheme = strdup(scheme)))
                        free(TAKE_PTR(o));
        } else
                o = NULL;
        sym_curl_free(scheme);
        sym_curl_free(host);
        sym_curl_free(port);
        return o;
}

/* url for messages: no userinfo, query or fragment (signed storage URLs carry credentials there). */
const char *registry_url_show(const char *url, char *buf, size_t size) {
        if (dlopen_libcurl() < 0) {
                snprintf(buf, size, "(a URL)");
                return buf;
        }
        _cleanup_(sym_curl_url_cleanupp) CURLU *u = sym_curl_url();
        char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

        if (u && sym_curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
            sym_curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK) {
                if (sym_curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
                        port = NULL;
                snprintf(buf, size, "%s://%s%s%s%.200s", scheme, host, port ? ":" : "", port ? port : "", path);
        } else
                snprintf(buf, size, "(an unparsable URL)");
        sym_curl_free(scheme);
        sym_curl_free(host);
        sym_curl_free(port);
        sym_curl_free(path);
        return str_printable(buf, buf, size);
}

/* realm?service=S&scope=A&scope=B (several scopes are separated by spaces in challenges), percent-encoded. */
char *registry_token_url(const char *realm, const char *service, const char *scope) {
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
char *registry_basic_header(const char *userpass) {
        static const char prefix[] = "Authorization: Basic ";
        size_t n = strlen(userpass);
        char *h = dlopen_libcrypto() < 0 ? NULL : calloc(1, sizeof(prefix) + (n + 2) / 3 * 4);

        if (!h)
                return NULL;
        memcpy(h, prefix, sizeof(prefix) - 1);
        sym_EVP_EncodeBlock((unsigned char *)h + sizeof(prefix) - 1, (const unsigned char *)userpass, (int)n);
        return h;
}

/* libcurl's result as a negative errno; *retry: whether another try may help. */
int registry_curl_errno(int code, bool *retry) {
        int e;

        switch ((CURLcode)code) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                e = -EHOSTUNREACH;
                break;
        case CURLE_COULDNT_CONNECT:
                e = -ECONNREFUSED;
                break;
        case CURLE_OPERATION_TIMEDOUT:
                e = -ETIMEDOUT;
                break;
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_PARTIAL_FILE:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
                e = -ECONNRESET;
                break;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
                e = -EPERM;
                break;
        case CURLE_SSL_CONNECT_ERROR:
                e = -EPROTO;
                break;
        case CURLE_UNSUPPORTED_PROTOCOL:
                e = -EPROTONOSUPPORT;
                break;
        case CURLE_OUT_OF_MEMORY:
                e = -ENOMEM;
                break;
        default:
                e = -EIO;
        }
        *retry = e == -EHOSTUNREACH || e == -ECONNREFUSED || e == -ETIMEDOUT || e == -ECONNRESET;
        return e;
}

static const char *status_text(long s) {
        switch (s) {
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 429:
                return "Too Many Requests";
        case 500:
                return "Internal Server Error";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        case 504:
                return "Gateway Timeout";
        default:
                return "unexpected status";
        }
}

/*
 * The error of a non-200 answer: "registry HOST: WHAT: STATUS TEXT[: CODE:
 * MESSAGE][; HINT]", CODE and MESSAGE from a distribution-spec error body
 * (nothing else of the body: it is outside input).
 */
int registry_status_error(const char *host, const char *what, long status, const char *body, size_t size,
                          const char *hint, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *root = json_loadb(body, size, 0, NULL);
        json_t *e0 = json_array_get(json_object_get(root, "errors"), 0);
        const char *code = json_string_value(json_object_get(e0, "code"));
        const char *msg = json_string_value(json_object_get(e0, "message"));
        char b1[96], b2[160];
        int e;

        switch (status) {
        case 401:
        case 403:
                e = -EACCES;
                break;
        case 404:
                e = -ENOENT;
                break;
        case 429:
                e = -EAGAIN;
                break;
        default:
                e = status >= 500 ? -EREMOTEIO : -EPROTO;
        }
        return error_set_plain(err, e, "registry %s: %s: %ld %s%s%s%s%s%s%s", host, what, status, status_text(status),
                               code ? ": " : "", code ? str_printable(code, b1, sizeof(b1)) : "", msg ? ": " : "",
                               msg ? str_printable(msg, b2, sizeof(b2)) : "", hint ? "; " : "", hint ? hint : "");
}

/* Checks the parts of a reference that go into URLs and paths. */
int registry_name_check(const char *host, const char *repository, struct km_error *err) {
        size_t n = strlen(host), m = strlen(repository);
        char b[300];

        if (n == 0 || n > 255 || host[0] == '.' || host[0] == '-' ||
            strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != n)
                return error_set_plain(err, -EINVAL, "registry \"%s\": not a registry name",
                                       str_printable(host, b, sizeof(b)));
        if (m == 0 || m > 255 || repository[0] == '/' || repository[m - 1] == '/' || strstr(repository, "//") ||
            strstr(repository, "..") || strspn(repository, "abcdefghijklmnopqrstuvwxyz0123456789._-/") != m)
                return error_set_plain(err, -EINVAL, "registry %s: \"%s\" is not a repository name", host,
                                       str_printable(repository, b, sizeof(b)));
        return 0;
}

bool registry_tag_is_valid(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 128 && s[0] != '.' && s[0] != '-' &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* Sleeps before retry number attempt+1: 100 ms, 400 ms, 1.6 s, ... or Retry-After seconds; at most 10 s. */
void registry_retry_wait(const char *retry_after, int attempt) {
        int64_t ms = 100;
        struct timespec ts;

        for (int i = 0; i < attempt && ms < 10000; i++)
                ms *= 4;
        if (retry_after && retry_after[0] >= '0' && retry_after[0] <= '9') {
                long s = strtol(retry_after, NULL, 10);
                ms = s >= 10 ? 10000 : s * 1000;
        }
        if (ms > 10000)
                ms = 10000;
        ts = (struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Prefixes err's message with "FMT: ". */
int registry_err_wrap(struct km_error *err, int e, const char *fmt, ...) {
        char inner[KM_ERROR_MAX], prefix[KM_ERROR_MAX];
        va_list ap;

        if (!err)
                return e;
        snprintf(inner, sizeof(inner), "%s", err->message);
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        return error_set_plain(err, e, "%s: %s", prefix, inner);
}

/* What to add to a 401: the credentials from refused_file were refused, or there were none (malloc'ed). */
char *registry_creds_hint(const char *host, char *const *files, const char *refused_file) {
        _cleanup_free_ char *list = refused_file ? NULL : registry_auth_files_text(files);
        char *h = NULL;

        int k = refused_file ? asprintf(&h, "the credentials for %s from %s were refused", host, refused_file)
                             : asprintf(&h, "no credentials for %s in %s", host, list ? list : "the auth files");
        if (k < 0)
                return NULL;
        return h;
}
