/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sha256 content digests through libcrypto's SHA256_Init/Update/Final:
 * deprecated since OpenSSL 3.0 in favour of EVP, but the same code, and
 * without EVP's provider set-up.  A short buffer's digest comes from the
 * kernel or libmd instead (digest-short.h): loading libcrypto costs 1-2 ms
 * of a process that takes a single digest.
 */
#include "libcrypto-dl.h" /* first: it includes <openssl/sha.h> with the deprecation warnings off */

#include "digest-short.h"
#include "digest.h"

DEFINE_DLOPEN(libcrypto, "libcrypto.so.3", KM_LIBCRYPTO_SYMBOLS)

#define HEX_LEN 64
#define READ_CHUNK (64 * 1024)

struct digest_ctx {
        SHA256_CTX sha;
        /* A failure poisons the result instead of yielding a wrong but valid-looking digest. */
        bool failed;
};

bool digest_is_valid(const char *digest) {
        const char *hex;

        if (!digest || !startswith(digest, DIGEST_SHA256_PREFIX))
                return false;
        hex = digest + strlen(DIGEST_SHA256_PREFIX);
        for (size_t i = 0; i < HEX_LEN; i++)
                /* Lowercase only: digests name files in the store, one spelling per blob. */
                if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
                        return false;
        return hex[HEX_LEN] == '\0';
}

struct digest_ctx *digest_new(void) {
        struct digest_ctx *c = dlopen_libcrypto() < 0 ? NULL : calloc(1, sizeof(*c));

        if (c && sym_SHA256_Init(&c->sha) != 1) {
                digest_free(c);
                return NULL;
        }
        return c;
}

void digest_update(struct digest_ctx *c, const void *data, size_t size) {
        if (size > 0 && sym_SHA256_Update(&c->sha, data, size) != 1)
                c->failed = true;
}

static void digest_format(const unsigned char md[SHA256_DIGEST_LENGTH], char out[DIGEST_STRING_MAX]) {
        static const char hexdigits[] = "0123456789abcdef";
        char *p = stpcpy(out, DIGEST_SHA256_PREFIX);

        for (size_t i = 0; i < SHA256_DIGEST_LENGTH; i++) {
                *p++ = hexdigits[md[i] >> 4];
                *p++ = hexdigits[md[i] & 0xf];
        }
        *p = '\0';
}

void digest_final(struct digest_ctx *c, char out[DIGEST_STRING_MAX]) {
        unsigned char md[SHA256_DIGEST_LENGTH];

        /* An empty string never passes digest_is_valid() nor equals a real digest. */
        out[0] = '\0';
        if (c->failed || sym_SHA256_Final(md, &c->sha) != 1) {
                c->failed = true;
                return;
        }
        digest_format(md, out);
}

void digest_free(struct digest_ctx *c) {
        free(c);
}

void digest_buffer(const void *data, size_t size, char out[DIGEST_STRING_MAX]) {
        unsigned char md[SHA256_DIGEST_LENGTH];

        out[0] = '\0';
        if (digest_short(data, size, md)) {
                digest_format(md, out);
                return;
        }
        _cleanup_(digest_freep) struct digest_ctx *c = digest_new();
        if (!c)
                return;
        digest_update(c, data, size);
        digest_final(c, out);
}

int digest_fd(int fd, char out[DIGEST_STRING_MAX], uint64_t *ret_size) {
        _cleanup_(digest_freep) struct digest_ctx *c = NULL;
        _cleanup_free_ char *buf = NULL;
        uint64_t total = 0;

        out[0] = '\0';
        c = digest_new();
        buf = malloc(READ_CHUNK);
        if (!c || !buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = read(fd, buf, READ_CHUNK);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                digest_update(c, buf, (size_t)n);
                total += (uint64_t)n;
        }
        digest_final(c, out);
        if (c->failed)
                return -EIO;
        if (ret_size)
                *ret_size = total;
        return 0;
}
