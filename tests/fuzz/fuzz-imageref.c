/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image references from outside: image_ref_parse on arbitrary text (up to
 * the first NUL), and digest_is_valid against a plain restatement of its rule.
 *
 * On failure: -EINVAL, a message that starts with "image reference" and
 * holds no control character, nothing returned.  On success: the fields
 * obey the grammar after normalization (lowercase repository of at most
 * 255 bytes, "library/" on docker.io, no index.docker.io, a tag or a valid
 * digest), and the canonical text parses again to the same canonical text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "digest.h"
#include "fuzz-check.h"
#include "imageref.h"

#define MAX_INPUT 2048

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool digest_rule(const char *s) {
        if (strlen(s) != 71 || strncmp(s, "sha256:", 7) != 0)
                return false;
        for (size_t i = 7; i < 71; i++)
                if (!strchr("0123456789abcdef", s[i]))
                        return false;
        return true;
}

static void check_fields(const struct image_ref *r) {
        check(r->registry && r->registry[0]);
        check(r->repository && r->repository[0]);
        check(r->tag || r->digest);
        check(!r->digest || digest_is_valid(r->digest));
        check(!r->tag || (r->tag[0] && strlen(r->tag) <= 128 && r->tag[0] != '.' && r->tag[0] != '-'));
        check(strlen(r->repository) <= 255);
        check(r->repository[0] != '/' && r->repository[strlen(r->repository) - 1] != '/');
        check(!strstr(r->repository, "//"));
        for (const char *p = r->repository; *p; p++)
                check((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("._-/", *p));
        for (const char *p = r->registry; *p; p++)
                check(!(*p >= 'A' && *p <= 'Z') && *p != '/' && *p != '@' && (unsigned char)*p > 0x20);
        check(strcmp(r->registry, "index.docker.io") != 0);
        if (strcmp(r->registry, "docker.io") == 0)
                check(strchr(r->repository, '/'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct image_ref ref = {}, again = {};
        struct km_error err = {};
        char *text, *canonical, *canonical2;
        int r;

        if (size > MAX_INPUT)
                return 0;
        text = malloc(size + 1);
        check(text);
        memcpy(text, data, size);
        text[size] = '\0';

        check(digest_is_valid(text) == digest_rule(text));

        r = image_ref_parse(text, &ref, &err);
        if (r < 0) {
                check(r == -EINVAL || r == -ENOMEM);
                if (r == -EINVAL) {
                        check(err.code == r && strncmp(err.message, "image reference", 15) == 0);
                        for (const char *p = err.message; *p; p++)
                                check((unsigned char)*p >= 0x20);
                }
                check(!ref.registry && !ref.repository && !ref.tag && !ref.digest);
                free(text);
                return 0;
        }
        check(r == 0);
        check_fields(&ref);
        canonical = image_ref_format(&ref);
        check(canonical);

        r = image_ref_parse(canonical, &again, &err);
        if (r != 0)
                fprintf(stderr, "'%s' -> '%s' refused: %s\n", text, canonical, err.message);
        check(r == 0);
        check_fields(&again);
        check(strcmp(ref.registry, again.registry) == 0);
        check(strcmp(ref.repository, again.repository) == 0);
        check((!ref.tag && !again.tag) || (ref.tag && again.tag && strcmp(ref.tag, again.tag) == 0));
        check((!ref.digest && !again.digest) || (ref.digest && again.digest && strcmp(ref.digest, again.digest) == 0));
        canonical2 = image_ref_format(&again);
        check(canonical2 && strcmp(canonical, canonical2) == 0);

        free(canonical);
        free(canonical2);
        image_ref_done(&ref);
        image_ref_done(&again);
        free(text);
        return 0;
}
