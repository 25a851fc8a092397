/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image references after docker/distribution's reference grammar:
 *
 *   reference := name [":" tag] ["@" digest]
 *   name      := [registry "/"] path-component ("/" path-component)*
 *   registry  := (domain | "[" IPv6 "]") [":" port]
 *   path-component := [a-z0-9]+ (("." | "_" | "__" | "-"+) [a-z0-9]+)*
 *   tag       := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 *
 * The text comes from pod specs and CLI arguments: every part is checked
 * before anything is built from it, and messages show it masked.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>

#include "digest.h"
#include "imageref.h"

#define DEFAULT_REGISTRY "docker.io"
#define LEGACY_REGISTRY "index.docker.io"
#define DEFAULT_TAG "latest"
#define OFFICIAL_PREFIX "library/"
#define NAME_MAX_LEN 255
#define TAG_MAX_LEN 128
/* Longer than any valid reference (registry + repository + tag + digest); refused before scanning. */
#define TEXT_MAX_LEN 1024

static bool is_lower_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c) {
        return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool is_word(char c) {
        return is_alnum(c) || c == '_';
}

/* One domain component: alphanumerics with inner '-'. */
static bool domain_component_valid(const char *s, size_t n) {
        if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

static bool domain_valid(const char *s, size_t n) {
        size_t start = 0;

        for (size_t i = 0; i <= n; i++)
                if (i == n || s[i] == '.') {
                        if (!domain_component_valid(s + start, i - start))
                                return false;
                        start = i + 1;
                }
        return true;
}

/* 1..65535 in decimal, no sign, no leading zero (one spelling per port for credential lookups). */
static bool port_valid(const char *s, size_t n) {
        unsigned long v = 0;

        if (n == 0 || n > 5 || s[0] == '0')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned long)(s[i] - '0');
        }
        return v >= 1 && v <= 65535;
}

static const char *registry_why(const char *s, size_t n) {
        const char *colon;
        size_t hostlen;

        if (n > NAME_MAX_LEN)
                return "registry name is too long";
        if (s[0] == '[') {
                const char *close = memchr(s, ']', n);
                char addr[INET6_ADDRSTRLEN + 1];
                struct in6_addr a;

                if (!close)
                        return "registry IPv6 address lacks ']'";
                hostlen = close - s - 1;
                if (hostlen == 0 || hostlen >= sizeof(addr))
                        return "registry IPv6 address is invalid";
                memcpy(addr, s + 1, hostlen);
                addr[hostlen] = '\0';
                /* The grammar's hex digits and colons only (no zone, no embedded IPv4), then a real address. */
                if (addr[strspn(addr, "0123456789abcdefABCDEF:")] != '\0' || inet_pton(AF_INET6, addr, &a) != 1)
                        return "registry IPv6 address is invalid";
                hostlen += 2;
                if (hostlen < n && s[hostlen] != ':')
                        return "registry has text after its IPv6 address";
        } else {
                colon = memchr(s, ':', n);
                hostlen = colon ? (size_t)(colon - s) : n;
                if (!domain_valid(s, hostlen))
                        return "registry host name is invalid";
        }
        if (hostlen < n && !port_valid(s + hostlen + 1, n - hostlen - 1))
                return "registry port must be 1-65535";
        return NULL;
}

/* Whether an alphanumeric run follows a separator validly ("." "_" "__" or dashes). */
static bool separator_valid(const char *s, size_t n) {
        if (n == 1)
                return s[0] == '.' || s[0] == '_' || s[0] == '-';
        if (n == 2 && s[0] == '_' && s[1] == '_')
                return true;
        for (size_t i = 0; i < n; i++)
                if (s[i] != '-')
                        return false;
        return true;
}

static bool path_component_valid(const char *s, size_t n) {
        size_t i = 0;

        if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
                return false;
        while (i < n) {
                size_t sep;

                while (i < n && is_lower_alnum(s[i]))
                        i++;
                if (i == n)
                        break;
                sep = i;
                while (i < n && !is_lower_alnum(s[i]))
                        i++;
                if (!separator_valid(s + sep, i - sep))
                        return false;
        }
        return true;
}

static const char *repository_why(const char *s, size_t n) {
        size_t start = 0;
        bool upper = false;

        for (size_t i = 0; i < n; i++)
                upper = upper || (s[i] >= 'A' && s[i] <= 'Z');
        for (size_t i = 0; i <= n; i++)
                if (i == n || s[i] == '/') {
                        if (i == start)
                                return "repository has an empty path component";
                        if (upper)
                                return "repository name must be lowercase";
                        if (!path_component_valid(s + start, i - start))
                                return "repository path component is invalid "
                                       "(lowercase letters and digits, separated by '.', '_', '__' or '-')";
                        start = i + 1;
                }
        return NULL;
}

static const char *tag_why(const char *s) {
        size_t n = strlen(s);

        if (n == 0)
                return "tag is empty";
        if (n > TAG_MAX_LEN)
                return "tag is longer than 128 characters";
        if (!is_word(s[0]))
                return "tag must start with a letter, digit or '_'";
        for (size_t i = 1; i < n; i++)
                if (!is_word(s[i]) && s[i] != '.' && s[i] != '-')
                        return "tag may contain only letters, digits, '_', '.' and '-'";
        return NULL;
}

/* A registry that appears in the text is spelled in lowercase (host names are case-insensitive). */
static char *registry_normalize(const char *s, size_t n) {
        char *r = strndup(s, n);

        if (!r)
                return NULL;
        for (char *p = r; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        if (streq(r, LEGACY_REGISTRY)) {
                free(r);
                return strdup(DEFAULT_REGISTRY);
        }
        return r;
}

static bool is_hex64(const char *s) {
        size_t i = 0;

        for (; s[i]; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return i == 64;
}

/* -EINVAL with *ret_why set, -ENOMEM, or 0. */
static int parse(const char *text, struct image_ref *ret, const char **ret_why) {
        _cleanup_free_ char *copy = NULL, *registry = NULL, *repository = NULL, *tag = NULL, *digest = NULL;
        const char *name, *why, *slash;
        char *at, *colon, *lastslash;
        size_t reglen;

        if (strlen(text) > TEXT_MAX_LEN)
                return *ret_why = "too long", -EINVAL;
        /* A bare image ID is ambiguous with a repository name; docker refuses it too. */
        if (is_hex64(text))
                return *ret_why = "a 64-character hex string is an image ID, not a repository", -EINVAL;
        copy = strdup(text);
        if (!copy)
                return -ENOMEM;

        at = strchr(copy, '@');
        if (at) {
                *at = '\0';
                if (!digest_is_valid(at + 1))
                        return *ret_why = "digest must be sha256: and 64 lowercase hex digits", -EINVAL;
                digest = strdup(at + 1);
                if (!digest)
                        return -ENOMEM;
        }
        /* A ':' after the last '/' starts the tag; one before it belongs to a registry port. */
        lastslash = strrchr(copy, '/');
        colon = strrchr(lastslash ? lastslash : copy, ':');
        if (colon) {
                *colon = '\0';
                if ((why = tag_why(colon + 1)))
                        return *ret_why = why, -EINVAL;
                tag = strdup(colon + 1);
                if (!tag)
                        return -ENOMEM;
        }

        name = copy;
        if (!*name)
                return *ret_why = "repository name is empty", -EINVAL;
        slash = strchr(name, '/');
        reglen = slash ? (size_t)(slash - name) : 0;
        if (slash && (memchr(name, '.', reglen) || memchr(name, ':', reglen) ||
                      (reglen == strlen("localhost") && memcmp(name, "localhost", reglen) == 0))) {
                if ((why = registry_why(name, reglen)))
                        return *ret_why = why, -EINVAL;
                registry = registry_normalize(name, reglen);
                name = slash + 1;
        } else
                registry = strdup(DEFAULT_REGISTRY);
        if (!registry)
                return -ENOMEM;

        if ((why = repository_why(name, strlen(name))))
                return *ret_why = why, -EINVAL;
        if (streq(registry, DEFAULT_REGISTRY) && !strchr(name, '/')) {
                if (asprintf(&repository, OFFICIAL_PREFIX "%s", name) < 0) {
                        repository = NULL;
                        return -ENOMEM;
                }
        } else if (!(repository = strdup(name)))
                return -ENOMEM;
        /* Checked after normalization so that the canonical form parses again. */
        if (strlen(repository) > NAME_MAX_LEN)
                return *ret_why = "repository name is longer than 255 characters", -EINVAL;

        if (!tag && !digest && !(tag = strdup(DEFAULT_TAG)))
                return -ENOMEM;

        *ret = (struct image_ref){
                .registry = TAKE_PTR(registry),
                .repository = TAKE_PTR(repository),
                .tag = TAKE_PTR(tag),
                .digest = TAKE_PTR(digest),
        };
        return 0;
}

int image_ref_parse(const char *text, struct image_ref *ret, struct km_error *err) {
        const char *why = NULL;
        char shown[160];
        int r;

        if (!text || !*text)
                return error_set_plain(err, -EINVAL, "image reference is empty");
        r = parse(text, ret, &why);
        if (why)
                return error_set_plain(err, r, "image reference \"%s\": %s", str_printable(text, shown, sizeof(shown)),
                                       why);
        return r < 0 ? error_set(err, r, "image reference") : r;
}

void image_ref_done(struct image_ref *r) {
        if (!r)
                return;
        free(r->registry);
        free(r->repository);
        free(r->tag);
        free(r->digest);
        *r = (struct image_ref){};
}

char *image_ref_format(const struct image_ref *r) {
        char *s;

        if (!r || !r->registry || !r->repository)
                return NULL;
        if (asprintf(&s, "%s/%s%s%s%s%s", r->registry, r->repository, r->tag ? ":" : "", r->tag ?: "",
                     r->digest ? "@" : "", r->digest ?: "") < 0)
                return NULL;
        return s;
}

int image_ref_check_pin(const struct image_ref *r, const char *what, const char *manifest, const char *index,
                        struct km_error *err) {
        if (!r->digest || streq(r->digest, manifest) || (index && streq(r->digest, index)))
                return 0;
        if (index && !streq(index, manifest))
                return error_set_plain(err, -EINVAL, "%s: the name pins %s but the image is index %s (manifest %s)",
                                       what, r->digest, index, manifest);
        return error_set_plain(err, -EINVAL, "%s: the name pins %s but the image's manifest is %s", what, r->digest,
                               manifest);
}
