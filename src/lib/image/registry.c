/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI distribution client (registry.h) over libcurl.
 *
 * Every request goes through fetch(): the first try is anonymous (or with
 * what an earlier challenge gave), a 401 is answered once from its
 * WWW-Authenticate challenge by auth (registry-auth.h, which GETs a token
 * through get_for_auth(), its one way back here), and follow() walks the
 * redirects itself (no CURLOPT_FOLLOWLOCATION) so that the Authorization
 * header and the client certificate go to the registry's own origin only and
 * a redirect to plain http is refused by name.  Each hop is retried on
 * connection errors, 5xx and 429 with backoff.  Bodies go to a sink with a
 * hard limit (the manifest cap, a blob's declared size), enforced on
 * Content-Length and on every write: the transfer is aborted at the first
 * byte too many.
 *
 * URLs in messages lose their query (signed storage URLs carry credentials
 * there); passwords and tokens appear in no message and no log line.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include "digest.h"
#include "libcurl-dl.h"
#include "manifest.h"
#include "registry-auth.h"
#include "registry-http.h"
#include "registry-tls.h"
#include "registry.h"

#define REDIRECTS_MAX 5
#define RETRIES_DEFAULT 3
#define RETRIES_MAX 10
#define ERROR_BODY_MAX 4096
#define HEADER_VALUE_MAX 8192
#define SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* Request headers may hold a secret (Authorization): wiped before they are freed. */
static void headers_freep(struct curl_slist **l) {
        for (struct curl_slist *i = *l; i; i = i->next)
                explicit_bzero(i->data, strlen(i->data));
        sym_curl_slist_free_all(*l);
}

struct registry {
        char *host;       /* as in the reference: "docker.io", "127.0.0.1:5000" */
        char *origin;     /* "https://registry-1.docker.io:443": where auth and client certs may go */
        char *base;       /* "https://registry-1.docker.io" */
        char *repository; /* "library/busybox" */
        bool insecure;
        CURL *curl;
        char errbuf[CURL_ERROR_SIZE];
        char *ca; /* system bundle + certs.d CAs, or NULL: libcurl's default */
        size_t ca_size;
        char *client_cert, *client_key;
        struct registry_auth *auth;
        int progress_fd;
        int retries;
};

/* One response (of the last hop) and where its body goes. */
struct xfer {
        long status;
        char *content_type, *docker_digest, *www_authenticate, *retry_after;
        bool at_origin; /* the response came from the origin auth was meant for */
        /* the body of a 200: into fd, or into buf (malloc'ed) */
        int fd;
        char *buf;
        size_t cap;
        uint64_t got, max;
        bool too_big, secret;
        int write_error;
        /* the body of any other answer (the registry's error JSON), truncated */
        char errbody[ERROR_BODY_MAX];
        size_t errbody_len;
        /* progress */
        struct registry *r;
        const char *label;
        int64_t last_ms;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;
static void curl_init(void) {
        curl_init_result = sym_curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- libcurl callbacks --------------------------------------------------- */

static void xfer_reset(struct xfer *x) {
        x->status = 0;
        free(TAKE_PTR(x->content_type));
        free(TAKE_PTR(x->docker_digest));
        free(TAKE_PTR(x->www_authenticate));
        free(TAKE_PTR(x->retry_after));
        x->got = 0;
        x->too_big = false;
        x->write_error = 0;
        x->errbody_len = 0;
        x->errbody[0] = '\0';
        if (x->fd >= 0 && (ftruncate(x->fd, 0) < 0 || lseek(x->fd, 0, SEEK_SET) < 0))
                x->write_error = -errno;
}

static void xfer_done(struct xfer *x) {
        free(TAKE_PTR(x->content_type));
        free(TAKE_PTR(x->docker_digest));
        free(TAKE_PTR(x->www_authenticate));
        free(TAKE_PTR(x->retry_after));
        if (x->buf && x->secret)
                explicit_bzero(x->buf, x->cap);
        free(TAKE_PTR(x->buf));
}

static size_t on_header(char *data, size_t size, size_t n, void *userdata) {
        struct xfer *x = userdata;
        size_t len = size * n, nlen;
        const char *colon, *v, *end;
        char **field = NULL;

        if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
                /* A new response (an interim 1xx, or the final one). */
                const char *sp = memchr(data, ' ', len);
                xfer_reset(x);
                x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
                return len;
        }
        colon = memchr(data, ':', len);
        if (!colon)
                return len;
        nlen = colon - data;
        for (v = colon + 1, end = data + len; v < end && (*v == ' ' || *v == '\t'); v++)
                ;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
#define IS(h) (nlen == strlen(h) && strncasecmp(data, h, nlen) == 0)
        if (IS("content-type"))
                field = &x->content_type;
        else if (IS("docker-content-digest"))
                field = &x->docker_digest;
        else if (IS("retry-after"))
                field = &x->retry_after;
        else if (IS("www-authenticate")) {
                /* Several challenges: joined with ", " as one header value would be. */
                char *joined = NULL;
                size_t old = x->www_authenticate ? strlen(x->www_authenticate) : 0;

                if (old + (end - v) + 2 > HEADER_VALUE_MAX)
                        return len;
                if (asprintf(&joined, "%s%s%.*s", x->www_authenticate ? x->www_authenticate : "", old ? ", " : "",
                             (int)(end - v), v) < 0)
                        return 0;
                free(x->www_authenticate);
                x->www_authenticate = joined;
                return len;
        } else if (IS("content-length") && x->status == 200) {
                uint64_t cl = strtoull(v, NULL, 10);
                if (cl > x->max) {
                        x->too_big = true; /* no byte of it is wanted */
                        return 0;
                }
        }
#undef IS
        if (field && end - v <= HEADER_VALUE_MAX) {
                free(*field);
                *field = strndup(v, end - v);
                if (!*field)
                        return 0;
        }
        return len;
}

static void progress_show(struct xfer *x, bool force) {
        char line[160];
        int64_t t = (int64_t)monotonic_ms();
        int n;

        if (!x->label || x->r->progress_fd < 0 || (!force && t - x->last_ms < 200))
                return;
        x->last_ms = t;
        n = snprintf(line, sizeof(line), "\r\033[Kpull %.60s: %.19s %.1f/%.1f MB", x->r->repository, x->label,
                     x->got / 1e6, x->max / 1e6);
        if (n > 0 && write(x->r->progress_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
                x->r->progress_fd = -1;
}

static void progress_clear(struct xfer *x) {
        if (x->label && x->r->progress_fd >= 0 && write(x->r->progress_fd, "\r\033[K", 4) < 0)
                x->r->progress_fd = -1;
}

static size_t on_body(char *data, size_t size, size_t n, void *userdata) {
        struct xfer *x = userdata;
        size_t len = size * n;

        if (x->status != 200) {
                size_t room = sizeof(x->errbody) - 1 - x->errbody_len;
                size_t k = len < room ? len : room;
                memcpy(x->errbody + x->errbody_len, data, k);
                x->errbody_len += k;
                x->errbody[x->errbody_len] = '\0';
                return len;
        }
        if (len > x->max - x->got) {
                x->too_big = true;
                return 0;
        }
        if (x->fd >= 0) {
                for (size_t done = 0; done < len;) {
                        ssize_t k = write(x->fd, data + done, len - done);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                x->write_error = -errno;
                                return 0;
                        }
                        done += k;
                }
        } else {
                if (x->got + len + 1 > x->cap) {
                        size_t cap = x->cap ? x->cap : 16384;
                        char *b;
                        while (cap < x->got + len + 1)
                                cap *= 2;
                        b = realloc(x->buf, cap);
                        if (!b) {
                                x->write_error = -ENOMEM;
                                return 0;
                        }
                        x->buf = b;
                        x->cap = cap;
                }
                memcpy(x->buf + x->got, data, len);
                x->buf[x->got + len] = '\0';
        }
        x->got += len;
        progress_show(x, false);
        return len;
}

/* ---- one request --------------------------------------------------------- */

/* libcurl's result as a negative errno; *retry: whether another try may help. */
static int curl_errno(int code, bool *retry) {
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

/* Sleeps before retry number attempt+1: 100 ms, 400 ms, 1.6 s, ... or Retry-After seconds; at most 10 s. */
static void retry_wait(const char *retry_after, int attempt) {
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

/* One hop (no redirect followed), retried; 0 with x->status set, or < 0 with err set. */
static int perform(struct registry *r, const char *url, const char *accept, const char *auth, bool client_cert,
                   struct xfer *x, struct km_error *err) {
        _cleanup_(headers_freep) struct curl_slist *headers = NULL;
        struct curl_blob ca = { .data = r->ca, .len = r->ca_size, .flags = CURL_BLOB_NOCOPY };
        char shown[512];
        CURL *c = r->curl;

        if (accept) {
                _cleanup_free_ char *h = NULL;
                if (asprintf(&h, "Accept: %s", accept) < 0 || !(headers = sym_curl_slist_append(headers, h)))
                        return error_set(err, -ENOMEM, "request");
        }
        if (auth) {
                struct curl_slist *l = sym_curl_slist_append(headers, auth);
                if (!l)
                        return error_set(err, -ENOMEM, "request");
                headers = l;
        }
        for (int attempt = 0;; attempt++) {
                CURLcode cc;
                bool retry;
                int e;

                sym_curl_easy_reset(c);
                sym_curl_easy_setopt(c, CURLOPT_URL, url);
                sym_curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, r->insecure ? "http,https" : "https");
                sym_curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
                sym_curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
                sym_curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
                sym_curl_easy_setopt(c, CURLOPT_USERAGENT, "kubemount/" KM_VERSION);
                sym_curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->errbuf);
                sym_curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
                sym_curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
                sym_curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
                sym_curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
                sym_curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
                if (r->ca)
                        sym_curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
                if (client_cert && r->client_cert) {
                        sym_curl_easy_setopt(c, CURLOPT_SSLCERT, r->client_cert);
                        sym_curl_easy_setopt(c, CURLOPT_SSLKEY, r->client_key);
                }
                sym_curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
                sym_curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
                sym_curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
                sym_curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
                sym_curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
                r->errbuf[0] = '\0';
                xfer_reset(x);
                if (x->write_error)
                        return error_set(err, x->write_error, "blob download file");
                cc = sym_curl_easy_perform(c);
                log_msg(KM_LOG_DEBUG, "registry %s: GET %s: %s%.0ld", r->host,
                        registry_url_show(url, shown, sizeof(shown)),
                        cc == CURLE_OK ? "status " : sym_curl_easy_strerror(cc), cc == CURLE_OK ? x->status : 0L);
                if (cc == CURLE_OK) {
                        if ((x->status == 429 || x->status >= 500) && attempt < r->retries) {
                                retry_wait(x->retry_after, attempt);
                                continue;
                        }
                        return 0;
                }
                if (x->too_big)
                        return -EFBIG; /* the caller says what was too big */
                if (x->write_error)
                        return error_set(err, x->write_error, "writing what %s sent",
                                         registry_url_show(url, shown, sizeof(shown)));
                e = curl_errno(cc, &retry);
                if (retry && attempt < r->retries) {
                        log_msg(KM_LOG_INFO, "registry %s: %s, retrying", r->host,
                                r->errbuf[0] ? r->errbuf : sym_curl_easy_strerror(cc));
                        retry_wait(x->retry_after, attempt);
                        continue;
                }
                return error_set_plain(err, e, "GET %s: %s", registry_url_show(url, shown, sizeof(shown)),
                                       r->errbuf[0] ? str_printable(r->errbuf, r->errbuf, sizeof(r->errbuf))
                                                    : sym_curl_easy_strerror(cc));
        }
}

static bool is_redirect(long status) {
        return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/*
 * GET url following up to REDIRECTS_MAX redirects.  auth (a header line)
 * and the client certificate are sent only to url's own origin; a redirect
 * to http is refused unless the registry is insecure.  0 with the final
 * (non-redirect) answer in x, or < 0 with err set.
 */
static int follow(struct registry *r, const char *url, const char *accept, const char *auth, struct xfer *x,
                  struct km_error *err) {
        _cleanup_free_ char *origin = registry_url_origin(url, NULL), *cur = strdup(url);
        char shown[512], shown2[512];

        if (!origin || !cur)
                return error_set_plain(err, -EINVAL, "bad URL %s", registry_url_show(url, shown, sizeof(shown)));
        x->at_origin = true;
        for (int hop = 0;; hop++) {
                _cleanup_free_ char *next_origin = NULL, *scheme = NULL;
                char *location = NULL;
                int e;

                e = perform(r, cur, accept, x->at_origin ? auth : NULL, streq(origin, r->origin) && x->at_origin, x,
                            err);
                if (e < 0 || !is_redirect(x->status))
                        return e;
                if (sym_curl_easy_getinfo(r->curl, CURLINFO_REDIRECT_URL, &location) != CURLE_OK || !location)
                        return error_set_plain(err, -EPROTO, "GET %s: redirect (%ld) without a Location",
                                               registry_url_show(cur, shown, sizeof(shown)), x->status);
                if (hop + 1 > REDIRECTS_MAX)
                        return error_set_plain(err, -ELOOP, "GET %s: more than %d redirects",
                                               registry_url_show(url, shown, sizeof(shown)), REDIRECTS_MAX);
                next_origin = registry_url_origin(location, &scheme);
                if (!next_origin || !scheme)
                        return error_set_plain(err, -EPROTO, "GET %s: redirect to an unparsable URL",
                                               registry_url_show(cur, shown, sizeof(shown)));
                if (!streq(scheme, "https") && !(r->insecure && streq(scheme, "http")))
                        return error_set_plain(err, -EPROTO,
                                               "GET %s: redirect to %s refused: only https is allowed (the "
                                               "registry is not marked insecure)",
                                               registry_url_show(cur, shown, sizeof(shown)),
                                               registry_url_show(location, shown2, sizeof(shown2)));
                log_msg(KM_LOG_DEBUG, "registry %s: redirect to %s%s", r->host,
                        registry_url_show(location, shown, sizeof(shown)),
                        x->at_origin && !streq(next_origin, origin) ? " (another origin: no credentials)" : "");
                x->at_origin = x->at_origin && streq(next_origin, origin);
                free(cur);
                cur = strdup(location);
                if (!cur)
                        return error_set(err, -ENOMEM, "redirect");
        }
}

static int answer_error(struct registry *r, struct xfer *x, const char *what, const char *hint, struct km_error *err) {
        return registry_status_error(r->host, what, x->status, x->errbody, x->errbody_len, hint, err);
}

/* registry_get_fn: auth's token requests go as any other, their answer a secret. */
static int get_for_auth(void *transport, const char *url, const char *accept, const char *auth, size_t max,
                        struct registry_reply *ret, struct km_error *err) {
        struct registry *r = transport;
        _cleanup_(xfer_done) struct xfer x = { .fd = -EBADF, .max = max, .r = r, .secret = true };
        int e = follow(r, url, accept, auth, &x, err);

        if (e < 0)
                return e;
        ret->status = x.status;
        if (x.status == 200) {
                ret->body = x.buf ? TAKE_PTR(x.buf) : strdup("");
                ret->size = x.got;
        } else {
                ret->body = strndup(x.errbody, x.errbody_len);
                ret->size = x.errbody_len;
        }
        return ret->body ? 0 : error_set(err, -ENOMEM, "token");
}

/* GET base + path: 0 with the 200 answer in x, -EFBIG (err not set: the caller says what) or < 0 with err. */
static int fetch(struct registry *r, const char *path, const char *accept, const char *what, struct xfer *x,
                 struct km_error *err) {
        _cleanup_free_ char *url = NULL, *hint = NULL;
        int e;

        if (asprintf(&url, "%s%s", r->base, path) < 0)
                return error_set(err, -ENOMEM, "request");
        for (int authed = 0;; authed++) {
                e = follow(r, url, accept, registry_auth_header(r->auth), x, err);
                if (e == -EFBIG)
                        return e;
                if (e < 0)
                        return error_wrap(err, e, "registry %s: %s", r->host, what);
                if (x->status == 200)
                        return 0;
                if (x->status == 401 && x->at_origin && authed == 0) {
                        struct registry_refusal refusal = { .what = what,
                                                            .status = x->status,
                                                            .challenge = x->www_authenticate,
                                                            .body = x->errbody,
                                                            .size = x->errbody_len };

                        e = registry_auth_answer(r->auth, &refusal, err);
                        if (e < 0)
                                return e;
                        continue;
                }
                if (x->status == 401 && x->at_origin && registry_auth_header(r->auth))
                        hint = registry_auth_refused_hint(r->auth);
                return answer_error(r, x, what, hint, err);
        }
}

/* ---- the API --------------------------------------------------------------- */

/* Checks the parts of a reference that go into URLs and paths. */
static int name_check(const char *host, const char *repository, struct km_error *err) {
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

static bool tag_is_valid(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 128 && s[0] != '.' && s[0] != '-' &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int registry_new(const struct image_ref *ref, const struct registry_options *o, struct registry **ret,
                 struct km_error *err) {
        static const struct registry_options defaults = { .progress_fd = -1 };
        _cleanup_(registry_freep) struct registry *r = NULL;
        char *cainfo = NULL;
        int e;

        if (!o)
                o = &defaults;
        if (!ref || !ref->registry || !ref->repository)
                return error_set_plain(err, -EINVAL, "registry: no registry or repository in the reference");
        e = name_check(ref->registry, ref->repository, err);
        if (e < 0)
                return e;
        if (dlopen_libcurl() < 0)
                return error_set_plain(err, -EOPNOTSUPP, "registry: cannot load libcurl (libcurl.so.4)");
        pthread_once(&curl_once, curl_init);
        if (curl_init_result != CURLE_OK)
                return error_set_plain(err, -EIO, "registry: libcurl: %s", sym_curl_easy_strerror(curl_init_result));
        r = calloc(1, sizeof(*r));
        if (!r)
                return error_set(err, -ENOMEM, "registry");
        r->progress_fd = -1;
        r->host = strdup(ref->registry);
        r->repository = strdup(ref->repository);
        if (!r->host || !r->repository)
                return error_set(err, -ENOMEM, "registry");
        for (size_t i = 0; o->insecure && o->insecure[i]; i++)
                if (streq(o->insecure[i], r->host))
                        r->insecure = true;
        if (asprintf(&r->base, "%s://%s", r->insecure ? "http" : "https",
                     streq(r->host, "docker.io") ? "registry-1.docker.io" : r->host) < 0) {
                r->base = NULL;
                return error_set(err, -ENOMEM, "registry");
        }
        r->origin = registry_url_origin(r->base, NULL);
        r->curl = sym_curl_easy_init();
        if (!r->origin || !r->curl)
                return error_set_plain(err, -EINVAL, "registry %s: cannot make a URL or a libcurl handle", r->host);
#if LIBCURL_VERSION_NUM >= 0x075400
        if (sym_curl_easy_getinfo(r->curl, CURLINFO_CAINFO, &cainfo) != CURLE_OK)
                cainfo = NULL;
#endif
        e = registry_tls_load(r->host, o->certs_dir, cainfo ? cainfo : SYSTEM_BUNDLE, &r->ca, &r->ca_size,
                              &r->client_cert, &r->client_key, err);
        if (e < 0)
                return error_wrap(err, e, "registry %s", r->host);
        e = registry_auth_new(r->host, r->repository, o->auth_files, r->insecure, get_for_auth, r, &r->auth, err);
        if (e < 0)
                return e;
        if (o->progress_fd >= 0 && isatty(o->progress_fd))
                r->progress_fd = o->progress_fd;
        /* 0 is the default; < 0 asks for none. */
        r->retries = o->retries == 0 ? RETRIES_DEFAULT : o->retries < 0 ? 0 : o->retries;
        if (r->retries > RETRIES_MAX)
                r->retries = RETRIES_MAX;
        log_msg(KM_LOG_DEBUG, "registry %s: %s%s%s", r->host, r->base, r->ca ? ", extra CAs from certs.d" : "",
                r->client_cert ? ", a client certificate" : "");
        *ret = TAKE_PTR(r);
        return 0;
}

void registry_free(struct registry *r) {
        if (!r)
                return;
        if (r->curl)
                sym_curl_easy_cleanup(r->curl);
        registry_auth_free(r->auth);
        free(r->ca);
        free(r->client_cert);
        free(r->client_key);
        free(r->origin);
        free(r->base);
        free(r->host);
        free(r->repository);
        free(r);
}

int registry_get_manifest(struct registry *r, const char *reference, char **ret_body, size_t *ret_size,
                          char **ret_media_type, char ret_digest[72], struct km_error *err) {
        _cleanup_(xfer_done) struct xfer x = { .fd = -EBADF, .max = MANIFEST_MAX_SIZE, .r = r };
        _cleanup_free_ char *path = NULL, *media_type = NULL;
        bool by_digest = strchr(reference, ':');
        char what[400], d[DIGEST_STRING_MAX], b[100];
        int e;

        snprintf(what, sizeof(what), "manifest %s%s%s", r->repository, by_digest ? "@" : ":",
                 str_printable(reference, b, sizeof(b)));
        if (by_digest ? !digest_is_valid(reference) : !tag_is_valid(reference))
                return error_set_plain(err, -EINVAL, "registry %s: %s: not a %s", r->host, what,
                                       by_digest ? "sha256 digest" : "valid tag");
        if (asprintf(&path, "/v2/%s/manifests/%s", r->repository, reference) < 0) {
                path = NULL;
                return error_set(err, -ENOMEM, "manifest");
        }
        e = fetch(r, path, manifest_accept, what, &x, err);
        if (e == -EFBIG)
                e = error_set_plain(err, e, "registry %s: %s: larger than %d bytes, refused", r->host, what,
                                    MANIFEST_MAX_SIZE);
        if (e < 0)
                return e;
        if (!x.buf && !(x.buf = calloc(1, 1)))
                return error_set(err, -ENOMEM, "manifest");
        digest_buffer(x.buf, x.got, d);
        if (by_digest && !streq(d, reference))
                return error_set_plain(err, -EBADMSG,
                                       "registry %s: %s: the registry sent content whose digest "
                                       "is %s",
                                       r->host, what, d);
        if (x.docker_digest && startswith(x.docker_digest, DIGEST_SHA256_PREFIX) && !streq(x.docker_digest, d))
                return error_set_plain(err, -EBADMSG,
                                       "registry %s: %s: Docker-Content-Digest %s does not match "
                                       "the content's %s",
                                       r->host, what, str_printable(x.docker_digest, b, sizeof(b)), d);
        if (x.content_type && !(media_type = strndup(x.content_type, strcspn(x.content_type, "; \t"))))
                return error_set(err, -ENOMEM, "manifest");
        log_msg(KM_LOG_DEBUG, "registry %s: %s: %s, %" PRIu64 " bytes, %s", r->host, what, d, x.got,
                media_type ? str_printable(media_type, b, sizeof(b)) : "no Content-Type");
        *ret_body = TAKE_PTR(x.buf);
        if (ret_size)
                *ret_size = x.got;
        if (ret_media_type)
                *ret_media_type = TAKE_PTR(media_type);
        if (ret_digest)
                memcpy(ret_digest, d, DIGEST_STRING_MAX);
        return 0;
}

/*
 * The store has no abort for a blob in progress: a commit of the emptied
 * tmp file fails verification and removes it (only the empty blob itself
 * would verify, and then it is right).
 */
static void blob_discard(struct store *s, const char *tmp, int fd, const char *digest, uint64_t size) {
        struct km_error ignored = { 0 };

        if (ftruncate(fd, 0) < 0)
                log_msg(KM_LOG_DEBUG, "blob %s: cannot empty the download file: %m", digest);
        store_blob_commit(s, tmp, digest, (int64_t)size, &ignored);
}

int registry_get_blob(struct registry *r, struct store *s, const char *digest, uint64_t size, struct km_error *err) {
        _cleanup_(xfer_done) struct xfer x = { .fd = -EBADF, .max = size, .r = r, .label = digest };
        _cleanup_free_ char *path = NULL, *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        char what[400], b[100];
        int e;

        snprintf(what, sizeof(what), "blob %s@%s", r->repository,
                 digest_is_valid(digest) ? digest : str_printable(digest, b, sizeof(b)));
        if (!digest_is_valid(digest))
                return error_set_plain(err, -EINVAL, "registry %s: %s: not a sha256 digest", r->host, what);
        if (size > INT64_MAX)
                return error_set_plain(err, -EINVAL, "registry %s: %s: size %" PRIu64 " out of range", r->host, what,
                                       size);
        if (store_blob_exists(s, digest) > 0)
                return 0;
        if (asprintf(&path, "/v2/%s/blobs/%s", r->repository, digest) < 0) {
                path = NULL;
                return error_set(err, -ENOMEM, "blob");
        }
        fd = store_blob_begin(s, &tmp, err);
        if (fd < 0)
                return error_wrap(err, fd, "registry %s: %s", r->host, what);
        x.fd = fd;
        progress_show(&x, true);
        e = fetch(r, path, NULL, what, &x, err);
        progress_clear(&x);
        if (e == -EFBIG)
                e = error_set_plain(err, e,
                                    "registry %s: %s: the registry sends more than the %" PRIu64
                                    " bytes declared, refused",
                                    r->host, what, size);
        if (e < 0) {
                blob_discard(s, tmp, fd, digest, size);
                return e;
        }
        /* A write error that close() reports shows in the verification. */
        close(TAKE_FD(fd));
        e = store_blob_commit(s, tmp, digest, (int64_t)size, err);
        if (e < 0)
                return error_wrap(err, e, "registry %s: %s", r->host, what);
        log_msg(KM_LOG_DEBUG, "registry %s: %s: stored, %" PRIu64 " bytes", r->host, what, size);
        return 0;
}
