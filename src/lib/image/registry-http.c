/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the registry client's transport (registry.c) and auth
 * (registry-auth.c) both say about HTTP, below both (registry-http.h):
 * origins of URLs, URLs fit for messages, the error of a status answer.
 */
#include <ctype.h>
#include <curl/curl.h>
#include "jansson-dl.h"

#include "libcurl-dl.h"
#include "registry-http.h"

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
