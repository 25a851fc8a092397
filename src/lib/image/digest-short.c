/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A short buffer's sha256 from the kernel or libmd (see digest-short.h). */
#include "libmd-dl.h" /* first, and without <openssl/sha.h> (libmd-dl.h says why) */
#include <linux/if_alg.h>
#include <sys/socket.h>

#include "digest-short.h"
#include "syscalls.h"

DEFINE_DLOPEN(libmd, "libmd.so.0", KM_LIBMD_SYMBOLS)

_Static_assert(DIGEST_SHORT_LENGTH == SHA256_DIGEST_LENGTH, "sha256 is 32 bytes");

/* By the kernel (algif_hash): a few system calls; a refusal turns it off for the process. */
static bool kernel_sha256(const void *data, size_t size, unsigned char md[DIGEST_SHORT_LENGTH]) {
        struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash", .salg_name = "sha256" };
        _cleanup_close_ int tfm = -EBADF, op = -EBADF;

        if (!feature_available(FEATURE_AF_ALG))
                return false;
        tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (tfm < 0 || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            (op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC)) < 0) {
                feature_refused(FEATURE_AF_ALG); /* once per process */
                return false;
        }
        /* One send without MSG_MORE is the whole message; none is the empty one. */
        if (size > 0 && send(op, data, size, MSG_NOSIGNAL) != (ssize_t)size)
                return false;
        return read(op, md, DIGEST_SHORT_LENGTH) == DIGEST_SHORT_LENGTH;
}

static bool libmd_sha256(const void *data, size_t size, unsigned char md[DIGEST_SHORT_LENGTH]) {
        SHA2_CTX c;

        if (dlopen_libmd() < 0)
                return false;
        sym_SHA256Init(&c);
        sym_SHA256Update(&c, data, size);
        sym_SHA256Final(md, &c);
        return true;
}

bool digest_short(const void *data, size_t size, unsigned char md[DIGEST_SHORT_LENGTH]) {
        return size <= DIGEST_SHORT_MAX && (kernel_sha256(data, size, md) || libmd_sha256(data, size, md));
}
