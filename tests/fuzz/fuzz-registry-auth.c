/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry client's parsers of what a registry or a credentials file
 * says (registry-auth.c).  The first byte picks the parser (modulo 3, so
 * that seeds can start with a letter); the rest is its input:
 *
 *   'c' (0)  a WWW-Authenticate value: registry_challenge_get() for the
 *            Bearer realm/service/scope and the Basic realm;
 *   'a' (1)  a docker config.json (or .dockercfg): there is no parser of
 *            the text in memory, so the bytes go into a memfd and
 *            registry_auth_find() reads it as /proc/self/fd/N, once per host
 *            of a fixed list;
 *   't' (2)  a token service's answer: registry_token_parse().
 *
 * Invariants: a refusal is a negative errno, fills no output and, where
 * there is an error object, a message of the parser's own; a success is a
 * NUL-terminated string of the characters its caller can use (a header of
 * printable ASCII, a "user:pass" without control characters); the challenge parser accepts or refuses a value
 * whatever scheme case or parameter is asked for, finds a value only in a
 * challenge that names the scheme, and reads back a value it found when it
 * is re-quoted; credentials are one of the file's entries; no message ever
 * holds SECRET_MARKER, which the seeds put into passwords and tokens.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "registry-auth.h"

#define MAX_INPUT (64 * 1024)
#define TOKEN_MAX (16 * 1024) /* as in registry-auth.c */
#define SECRET_MARKER "kmFuzzSecret"
#define BEARER_PREFIX "Authorization: Bearer "

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const hosts[] = {
        "docker.io", "registry.example.com", "localhost:5000", "ghcr.io", NULL,
};

static bool is_printable(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
                        return false;
        return true;
}

/* No C0 control and no DEL: UTF-8 passwords are fine, the Basic header is base64. */
static bool has_no_controls(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

static void check_no_secret(const struct km_error *err) {
        check(memchr(err->message, '\0', sizeof(err->message)));
        check(!strstr(err->message, SECRET_MARKER));
}

static void check_refused(int r, const struct km_error *err, const char *prefix) {
        check(r < 0);
        check_no_secret(err);
        if (r != -ENOMEM)
                check(err->code == r && strncmp(err->message, prefix, strlen(prefix)) == 0);
}

/* ---- WWW-Authenticate ------------------------------------------------ */

/* value quoted as a WWW-Authenticate quoted-string (malloc'ed). */
static char *quote(const char *value) {
        size_t n = strlen(value);
        char *q = malloc(2 * n + 3), *o = q;

        check(q);
        *o++ = '"';
        for (const char *c = value; *c; c++) {
                if (*c == '"' || *c == '\\')
                        *o++ = '\\';
                *o++ = *c;
        }
        *o++ = '"';
        *o = '\0';
        return q;
}

static int challenge(const char *header, const char *scheme, const char *name, char **ret) {
        int r;

        *ret = (char *)header; /* must be reset, whatever the result */
        r = registry_challenge_get(header, scheme, name, ret);
        check(r == 0 || r == 1 || r == -EBADMSG || r == -ENOMEM);
        if (r != 1)
                check(!*ret);
        if (r == 1)
                check(strcasestr(header, scheme));
        if (*ret) {
                check(strlen(*ret) <= strlen(header));
                check(strcasestr(header, name));
                if (is_printable(header, strlen(header)))
                        check(is_printable(*ret, strlen(*ret)));
        }
        return r;
}

static void fuzz_challenge(const char *header) {
        static const char *const bearer_params[] = { "realm", "service", "scope", "error" };
        int first = 1;

        for (size_t i = 0; i < sizeof(bearer_params) / sizeof(bearer_params[0]); i++) {
                char *v = NULL, *v_upper = NULL, name_upper[16];
                int r, r_upper;

                r = challenge(header, "Bearer", bearer_params[i], &v);
                /* Whether the header parses never depends on the parameter asked for. */
                if (i == 0)
                        first = r;
                else if (r != -ENOMEM && first != -ENOMEM)
                        check(r == first);

                /* Scheme and parameter names are case-insensitive. */
                for (size_t k = 0; k <= strlen(bearer_params[i]); k++)
                        name_upper[k] = (char)toupper((unsigned char)bearer_params[i][k]);
                r_upper = challenge(header, "bEARER", name_upper, &v_upper);
                if (r != -ENOMEM && r_upper != -ENOMEM) {
                        check(r == r_upper);
                        check(!v == !v_upper && (!v || strcmp(v, v_upper) == 0));
                }

                /* A value found reads back the same when quoted again. */
                if (v) {
                        char *q = quote(v), *again = NULL, *h = NULL;

                        check(asprintf(&h, "Basic realm=\"x\", Bearer %s=%s,other=\"a,b\"", bearer_params[i], q) >= 0);
                        r = challenge(h, "Bearer", bearer_params[i], &again);
                        if (r != -ENOMEM) {
                                check(r == 1 && again);
                                check(strcmp(again, v) == 0);
                        }
                        free(again);
                        free(h);
                        free(q);
                }
                free(v_upper);
                free(v);
        }

        {
                char *v = NULL;
                int r = challenge(header, "Basic", "realm", &v);

                if (r != -ENOMEM && first != -ENOMEM)
                        check((r < 0) == (first < 0));
                free(v);
        }
}

/* ---- config.json ----------------------------------------------------- */

static int b64_value(char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

/*
 * Whether the base64 text s (blanks around it allowed) gives want: exactly,
 * when s is well-formed (a "=" only as up to two bytes of final padding).
 *
 * A "=" before the final padding makes the text malformed: auth_entry_decode()
 * refuses it (EVP_DecodeBlock would read it as zero bits), so such text never
 * decodes to anything.
 */
static bool b64_decodes_to(const char *s, const char *want) {
        size_t len = strlen(s), w = 0, want_len = strlen(want), pad = 0;
        bool malformed = false;
        unsigned acc = 0;
        int bits = 0;

        while (len && strchr(" \t\r\n", s[len - 1]))
                len--;
        while (len && strchr(" \t", *s))
                s++, len--;
        while (len && s[len - 1] == '=')
                len--, pad++;
        malformed = pad > 2 || memchr(s, '=', len);
        for (size_t i = 0; i < len; i++) {
                int v = s[i] == '=' ? 0 : b64_value(s[i]);

                if (v < 0)
                        return false;
                acc = (acc << 6) | (unsigned)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        if (w < want_len && (char)((acc >> bits) & 0xff) != want[w])
                                return false;
                        w++;
                }
        }
        return !malformed && w == want_len;
}

/* Whether basic ("user:pass") is what one of the entries of text says. */
static bool from_an_entry(const char *text, size_t size, const char *basic) {
        json_t *root = json_loadb(text, size, 0, NULL), *auths, *entry;
        const char *key;
        bool found = false;

        check(json_is_object(root));
        auths = json_object_get(root, "auths");
        if (!auths)
                auths = root;
        json_object_foreach(auths, key, entry) {
                const char *a = json_string_value(json_object_get(entry, "auth"));
                const char *u = json_string_value(json_object_get(entry, "username"));
                const char *p = json_string_value(json_object_get(entry, "password"));

                if (a && *a)
                        found = found || b64_decodes_to(a, basic);
                else if (u && p) {
                        size_t ul = strlen(u);

                        found = found ||
                                (strncmp(basic, u, ul) == 0 && basic[ul] == ':' && strcmp(basic + ul + 1, p) == 0);
                }
        }
        json_decref(root);
        return found;
}

static void fuzz_auth_file(const uint8_t *data, size_t size) {
        static int fd = -EBADF;
        static char path[64];
        char *files[2] = { path, NULL };

        if (fd < 0) {
                fd = memfd_create("fuzz-registry-auth", MFD_CLOEXEC);
                check(fd >= 0);
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        }
        check(ftruncate(fd, 0) == 0);
        check(pwrite(fd, data, size, 0) == (ssize_t)size);

        for (size_t i = 0; hosts[i]; i++) {
                struct km_error err = {};
                char *basic = NULL, *file = NULL;
                int r = registry_auth_find(files, hosts[i], &basic, &file, &err);

                if (r < 0) {
                        check_refused(r, &err, "auth file ");
                        check(!basic && !file);
                        continue;
                }
                check(err.code == 0);
                if (r == 0) {
                        check(!basic && !file);
                        continue;
                }
                check(r == 1 && basic && file);
                check(strcmp(file, path) == 0);
                check(has_no_controls(basic));
                check(basic[0] != ':' && strchr(basic, ':'));
                check(from_an_entry((const char *)data, size, basic));
                registry_secret_free(basic);
                free(file);
        }
}

/* ---- token answer ---------------------------------------------------- */

/* Whether t is the root's "token", or its "access_token" when "token" is missing or empty. */
static bool is_the_token(const char *body, size_t size, const char *t) {
        json_t *root = json_loadb(body, size, 0, NULL);
        const char *want;
        bool ok;

        check(json_is_object(root));
        want = json_string_value(json_object_get(root, "token"));
        if (!want || !*want)
                want = json_string_value(json_object_get(root, "access_token"));
        ok = want && strcmp(want, t) == 0;
        json_decref(root);
        return ok;
}

static void fuzz_token(const char *body, size_t size) {
        struct km_error err = {};
        char *header = NULL;
        int r = registry_token_parse(body, size, &header, &err);

        if (r < 0) {
                check(!header);
                if (r == -ENOMEM)
                        check_no_secret(&err);
                else
                        check_refused(r, &err, "the token service's ");
                return;
        }
        check(r == 0 && header);
        check(strncmp(header, BEARER_PREFIX, strlen(BEARER_PREFIX)) == 0);
        {
                const char *t = header + strlen(BEARER_PREFIX);
                size_t n = strlen(t);

                check(n > 0 && n <= TOKEN_MAX);
                check(is_printable(t, n) && !strchr(t, ' '));
                check(is_the_token(body, size, t));
        }
        registry_secret_free(header);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *copy;
        size_t n;

        if (size < 1 || size > MAX_INPUT)
                return 0;
        n = size - 1;

        switch (data[0] % 3) {
        case 0:
                /* A header value is a C string: it ends at the first NUL. */
                copy = malloc(n + 1);
                check(copy);
                memcpy(copy, data + 1, n);
                copy[n] = '\0';
                fuzz_challenge((const char *)copy);
                free(copy);
                break;
        case 1:
                fuzz_auth_file(data + 1, n);
                break;
        default:
                /* An exact-size copy: any read past the end is an ASan finding. */
                copy = malloc(n ? n : 1);
                check(copy);
                memcpy(copy, data + 1, n);
                fuzz_token((const char *)copy, n);
                free(copy);
                break;
        }
        return 0;
}
