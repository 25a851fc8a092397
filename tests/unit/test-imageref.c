/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image references (image_ref_parse/format: the docker/distribution grammar
 * and docker's normalization) and sha256 digests (digest_is_valid, the
 * incremental and one-shot helpers, digest_fd on pipes with short reads
 * and EINTR).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "digest.h"
#include "syscalls.h"
#include "imageref.h"
#include "test-helpers.h"

#define H8(c) c c c c c c c c
#define HEX64(c) H8(H8(c))
#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST "sha256:" HEX

/* ---- image references ---- */

struct ref_case {
        const char *text;
        const char *canonical; /* NULL: refused */
        const char *error;     /* substring of the message when refused */
};

static const struct ref_case ref_cases[] = {
        /* Docker Hub normalization. */
        { "busybox", "docker.io/library/busybox:latest", NULL },
        { "busybox:1.36", "docker.io/library/busybox:1.36", NULL },
        { "library/busybox", "docker.io/library/busybox:latest", NULL },
        { "docker.io/busybox", "docker.io/library/busybox:latest", NULL },
        { "docker.io/library/busybox:latest", "docker.io/library/busybox:latest", NULL },
        { "index.docker.io/busybox", "docker.io/library/busybox:latest", NULL },
        { "index.docker.io/kubemount/fuse-tools:v1", "docker.io/kubemount/fuse-tools:v1", NULL },
        { "kubemount/fuse-tools", "docker.io/kubemount/fuse-tools:latest", NULL },
        { "registry-1.docker.io/library/nginx", "registry-1.docker.io/library/nginx:latest", NULL },
        { "Docker.IO/busybox", "docker.io/library/busybox:latest", NULL },
        /* Other registries: no "library/". */
        { "quay.io/coreos/etcd:v3.5.0", "quay.io/coreos/etcd:v3.5.0", NULL },
        { "registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9", NULL },
        { "ghcr.io/org/team/app:1.0", "ghcr.io/org/team/app:1.0", NULL },
        { "gcr.io/distroless/static:nonroot", "gcr.io/distroless/static:nonroot", NULL },
        { "example.com/a/b/c/d/e", "example.com/a/b/c/d/e:latest", NULL },
        { "Registry.Example.COM/foo", "registry.example.com/foo:latest", NULL },
        { "my-registry.example.com:443/a/b", "my-registry.example.com:443/a/b:latest", NULL },
        { "localhost/foo", "localhost/foo:latest", NULL },
        { "localhost:5000/foo/bar:tag", "localhost:5000/foo/bar:tag", NULL },
        { "foo:5000/bar", "foo:5000/bar:latest", NULL },
        { "127.0.0.1:5000/foo", "127.0.0.1:5000/foo:latest", NULL },
        { "[::1]:5000/foo", "[::1]:5000/foo:latest", NULL },
        { "[2001:db8::1]/foo:v1", "[2001:db8::1]/foo:v1", NULL },
        { "[2001:DB8::1]:443/foo", "[2001:db8::1]:443/foo:latest", NULL },
        { "registry:65535/x", "registry:65535/x:latest", NULL },
        /* Without '/', the first component is a repository: "localhost:5000" is a tag. */
        { "localhost", "docker.io/library/localhost:latest", NULL },
        { "localhost:5000", "docker.io/library/localhost:5000", NULL },
        /* Separators and tags. */
        { "foo/bar_baz__qux.x-y--z:TAG_1.0-rc", "docker.io/foo/bar_baz__qux.x-y--z:TAG_1.0-rc", NULL },
        { "a0/9z:_", "docker.io/a0/9z:_", NULL },
        { "busybox:" H8("abcdefghijklmnop"), "docker.io/library/busybox:" H8("abcdefghijklmnop"), NULL },
        /* Digests: both tag and digest are kept. */
        { "busybox@" DIGEST, "docker.io/library/busybox@" DIGEST, NULL },
        { "busybox:1.36@" DIGEST, "docker.io/library/busybox:1.36@" DIGEST, NULL },
        { "localhost:5000/x@" DIGEST, "localhost:5000/x@" DIGEST, NULL },

        /* Refused. */
        { "", NULL, "empty" },
        { "Busybox", NULL, "must be lowercase" },
        { "docker.io/Library/busybox", NULL, "must be lowercase" },
        { "LOCALHOST/foo", NULL, "must be lowercase" },
        { "busybox:", NULL, "tag is empty" },
        { "busybox:-tag", NULL, "tag must start" },
        { "busybox:.tag", NULL, "tag must start" },
        { "busybox:tag!", NULL, "tag may contain only" },
        { "busybox:" H8("abcdefghijklmnop") "x", NULL, "longer than 128" },
        { "busybox@sha256:../../x", NULL, "digest must be" },
        { "busybox@sha256:" HEX64("A"), NULL, "digest must be" },
        { "busybox@sha512:" HEX HEX, NULL, "digest must be" },
        { "busybox@sha256:" HEX "0", NULL, "digest must be" },
        { "busybox@sha256:" HEX "\n", NULL, "digest must be" },
        { "busybox@" HEX, NULL, "digest must be" },
        { "busybox@", NULL, "digest must be" },
        { "a@b@" DIGEST, NULL, "digest must be" },
        { "foo//bar", NULL, "empty path component" },
        { "/foo", NULL, "empty path component" },
        { "foo/", NULL, "empty path component" },
        { "docker.io/", NULL, "empty path component" },
        { "foo..bar", NULL, "path component is invalid" },
        { "foo._bar", NULL, "path component is invalid" },
        { "foo___bar", NULL, "path component is invalid" },
        { "-foo", NULL, "path component is invalid" },
        { "foo-", NULL, "path component is invalid" },
        { "_foo", NULL, "path component is invalid" },
        { "foo bar", NULL, "path component is invalid" },
        { "foo\nbar", NULL, "path component is invalid" },
        { "busybox:1.0:2.0", NULL, "path component is invalid" },
        { "localhost:0/foo", NULL, "port must be" },
        { "localhost:65536/foo", NULL, "port must be" },
        { "localhost:05000/foo", NULL, "port must be" },
        { "localhost:/foo", NULL, "port must be" },
        { "localhost:5000:1/foo", NULL, "port must be" },
        { "-example.com/foo", NULL, "host name is invalid" },
        { "example-.com/foo", NULL, "host name is invalid" },
        { "exa_mple.com/foo", NULL, "host name is invalid" },
        { "example..com/foo", NULL, "host name is invalid" },
        { ".example.com/foo", NULL, "host name is invalid" },
        { "[::1/foo", NULL, "lacks ']'" },
        { "[not-ip]:5000/foo", NULL, "IPv6 address is invalid" },
        { "[fe80::1%eth0]/foo", NULL, "IPv6 address is invalid" },
        { "[::ffff:1.2.3.4]/foo", NULL, "IPv6 address is invalid" },
        { "[1:2:3:4:5:6:7:8:9]/foo", NULL, "IPv6 address is invalid" },
        { "[]:5000/foo", NULL, "IPv6 address is invalid" },
        { "[]/foo", NULL, "path component is invalid" },
        { "[::1]x/foo", NULL, "text after its IPv6" },
        { "[::1]:5000", NULL, "path component is invalid" },
        { HEX, NULL, "image ID" },
        { ":tag", NULL, "repository name is empty" },
        { "@" DIGEST, NULL, "repository name is empty" },
};

static void expect_ref(const struct ref_case *c) {
        struct image_ref ref = {}, again = {};
        struct km_error err = {};
        _cleanup_free_ char *s = NULL, *s2 = NULL;
        int r;

        test_note("reference '%s'", c->text);
        r = image_ref_parse(c->text, &ref, &err);
        if (!c->canonical) {
                if (r != -EINVAL)
                        fail_msg("'%s' was accepted (%d)", c->text, r);
                assert_int_equal(err.code, -EINVAL);
                if (!strstr(err.message, c->error))
                        fail_msg("'%s': message '%s' lacks '%s'", c->text, err.message, c->error);
                /* The outside text is shown masked, never raw. */
                for (const char *p = err.message; *p; p++)
                        assert_false((unsigned char)*p < 0x20);
                assert_null(ref.registry);
                return;
        }
        if (r < 0)
                fail_msg("'%s' refused: %s", c->text, err.message);
        s = image_ref_format(&ref);
        assert_non_null(s);
        assert_string_equal(s, c->canonical);
        /* The canonical form is a fixed point. */
        assert_int_equal(image_ref_parse(s, &again, NULL), 0);
        s2 = image_ref_format(&again);
        assert_string_equal(s2, s);
        image_ref_done(&ref);
        image_ref_done(&again);
}

static void test_ref_table(void **state) {
        assert_true(ELEMENTSOF(ref_cases) >= 40);
        for (size_t i = 0; i < ELEMENTSOF(ref_cases); i++)
                expect_ref(&ref_cases[i]);
}

static void test_ref_fields(void **state) {
        struct image_ref ref = {};

        assert_int_equal(image_ref_parse("busybox", &ref, NULL), 0);
        assert_string_equal(ref.registry, "docker.io");
        assert_string_equal(ref.repository, "library/busybox");
        assert_string_equal(ref.tag, "latest");
        assert_null(ref.digest);
        image_ref_done(&ref);
        assert_null(ref.registry);

        assert_int_equal(image_ref_parse("[::1]:5000/team/app@" DIGEST, &ref, NULL), 0);
        assert_string_equal(ref.registry, "[::1]:5000");
        assert_string_equal(ref.repository, "team/app");
        assert_null(ref.tag);
        assert_string_equal(ref.digest, DIGEST);
        image_ref_done(&ref);

        assert_int_equal(image_ref_parse("quay.io/a/b:v2@" DIGEST, &ref, NULL), 0);
        assert_string_equal(ref.tag, "v2");
        assert_string_equal(ref.digest, DIGEST);
        image_ref_done(&ref);
        image_ref_done(NULL);
}

static void test_ref_length_limits(void **state) {
        char name[300], text[1100];
        struct image_ref ref = {};
        struct km_error err = {};

        /* 247 + "library/" = 255: the normalized repository still fits. */
        memset(name, 'a', 247);
        name[247] = '\0';
        assert_int_equal(image_ref_parse(name, &ref, NULL), 0);
        assert_int_equal(strlen(ref.repository), 255);
        image_ref_done(&ref);
        name[247] = 'a';
        name[248] = '\0';
        assert_int_equal(image_ref_parse(name, &ref, &err), -EINVAL);
        assert_non_null(strstr(err.message, "longer than 255"));

        snprintf(text, sizeof(text), "example.com/%s", name);
        assert_int_equal(image_ref_parse(text, &ref, NULL), 0);
        image_ref_done(&ref);
        /* Any text over 1024 bytes is refused before it is scanned. */
        memset(text, 'a', 1025);
        text[1025] = '\0';
        assert_int_equal(image_ref_parse(text, &ref, &err), -EINVAL);
        assert_non_null(strstr(err.message, "too long"));
        assert_int_equal(image_ref_parse(NULL, &ref, &err), -EINVAL);
}

static void test_ref_format_null(void **state) {
        struct image_ref ref = {};

        assert_null(image_ref_format(NULL));
        assert_null(image_ref_format(&ref));
}

/* ---- digests ---- */

static void test_digest_is_valid(void **state) {
        static const char *const bad[] = {
                "",
                "sha256:",
                "sha256:../../x",
                "sha256:" HEX64("A"),
                "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
                "SHA256:" HEX,
                "sha512:" HEX HEX,
                "sha384:" HEX,
                "md5:0123456789abcdef0123456789abcdef",
                "sha256:" HEX "0",
                "sha256:" HEX "\n",
                "sha256:" HEX " ",
                " sha256:" HEX,
                "sha256: " HEX,
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
                "sha256-" HEX,
                "sha256::" HEX,
                HEX,
        };

        assert_true(digest_is_valid(DIGEST));
        assert_true(digest_is_valid("sha256:" HEX64("f")));
        assert_false(digest_is_valid(NULL));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                test_note("digest '%s'", bad[i]);
                assert_false(digest_is_valid(bad[i]));
        }
}

#define SHA256_EMPTY "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA256_ABC "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static void test_digest_known_values(void **state) {
        char out[DIGEST_STRING_MAX];

        digest_buffer("", 0, out);
        assert_string_equal(out, SHA256_EMPTY);
        digest_buffer("abc", 3, out);
        assert_string_equal(out, SHA256_ABC);
        assert_true(digest_is_valid(out));
}

static void test_digest_incremental(void **state) {
        char one[DIGEST_STRING_MAX], parts[DIGEST_STRING_MAX];
        uint8_t data[10000];

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 7 + i / 251);
        digest_buffer(data, sizeof(data), one);
        for (size_t step = 1; step < sizeof(data); step = step * 3 + 1) {
                _cleanup_(digest_freep) struct digest_ctx *c = digest_new();

                assert_non_null(c);
                for (size_t off = 0; off < sizeof(data); off += step)
                        digest_update(c, data + off, off + step > sizeof(data) ? sizeof(data) - off : step);
                digest_update(c, NULL, 0);
                digest_final(c, parts);
                assert_string_equal(parts, one);
        }
}

/* Whether this kernel offers sha256 through AF_ALG (6.18 here has none; Debian's has algif_hash). */
static bool kernel_has_af_alg_sha256(void) {
        struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash", .salg_name = "sha256" };
        int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;

        if (fd >= 0)
                close(fd);
        return ok;
}

/*
 * digest_buffer() asks the kernel (AF_ALG) up to 64 KiB, libmd when the kernel refuses, libcrypto past 64 KiB:
 * the same sums as libcrypto's incremental digest, and the kernel's path is the one taken exactly where the
 * kernel has it (a refusal turns it off).  On a kernel without AF_ALG (this machine's) both passes are libmd's;
 * the node tier's c-containers checks the kernel's sums on Debian 12's kernel against sha256sum.
 */
static void test_digest_short_and_libcrypto_agree(void **state) {
        static const size_t sizes[] = { 0, 1, 55, 56, 63, 64, 4096, 65536, 65537, 100000 };
        static uint8_t data[100000];
        char kernel[DIGEST_STRING_MAX], lib[DIGEST_STRING_MAX];
        bool has = kernel_has_af_alg_sha256();

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 13 + i / 257);
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1)
                        feature_refused(FEATURE_AF_ALG); /* what KUBEMOUNT_COMPAT=af-alg or a refusal does */
                for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                        _cleanup_(digest_freep) struct digest_ctx *c = digest_new();

                        assert_non_null(c);
                        digest_update(c, data, sizes[i]);
                        digest_final(c, lib);
                        digest_buffer(data, sizes[i], kernel);
                        assert_true(digest_is_valid(kernel));
                        assert_string_equal(kernel, lib);
                }
                digest_buffer("abc", 3, kernel);
                assert_string_equal(kernel, SHA256_ABC);
                assert_int_equal(feature_available(FEATURE_AF_ALG), pass == 0 && has);
        }
}

static void test_digest_fd_file(void **state) {
        char *path = test_write_temp_string("abc");
        char out[DIGEST_STRING_MAX];
        uint64_t size = 0;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(digest_fd(fd, out, &size), 0);
        assert_string_equal(out, SHA256_ABC);
        assert_int_equal(size, 3);
        /* At the end already: the empty digest. */
        assert_int_equal(digest_fd(fd, out, NULL), 0);
        assert_string_equal(out, SHA256_EMPTY);
        close(fd);
        test_unlink_and_free(path);

        assert_int_equal(digest_fd(-1, out, &size), -EBADF);
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(digest_fd(fd, out, &size), -EISDIR);
        assert_false(digest_is_valid(out));
        close(fd);
}

static void on_alarm(int sig) {
        (void)sig;
}

/*
 * A slow writer: the reader sees short reads, and with a timer firing
 * without SA_RESTART its read() fails with EINTR over and over.
 */
static void test_digest_fd_pipe_short_reads_eintr(void **state) {
        struct sigaction sa = { .sa_handler = on_alarm }, old;
        struct itimerval tv = { { 0, 500 }, { 0, 500 } }, stop = {};
        static uint8_t data[300000];
        char expect[DIGEST_STRING_MAX], out[DIGEST_STRING_MAX];
        uint64_t size = 0;
        int p[2], status;
        pid_t pid;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i ^ (i >> 8));
        digest_buffer(data, sizeof(data), expect);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                for (size_t off = 0, n = 1; off < sizeof(data); off += n, n = n * 2 % 4093 + 1) {
                        if (n > sizeof(data) - off)
                                n = sizeof(data) - off;
                        if (write(p[1], data + off, n) != (ssize_t)n)
                                _exit(1);
                        if (off % 7 == 0)
                                usleep(200);
                }
                _exit(0);
        }
        close(p[1]);
        assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
        assert_int_equal(setitimer(ITIMER_REAL, &tv, NULL), 0);
        assert_int_equal(digest_fd(p[0], out, &size), 0);
        assert_int_equal(setitimer(ITIMER_REAL, &stop, NULL), 0);
        assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
        close(p[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(size, sizeof(data));
        assert_string_equal(out, expect);
}

/* image_ref_check_pin: a name's digest must be the manifest's or its index's. */
static void test_check_pin(void **state) {
        const char *a = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        const char *b = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        const char *c = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
        struct image_ref unpinned = { .repository = (char *)"local/x", .tag = (char *)"1" };
        struct image_ref pinned = { .repository = (char *)"local/x", .digest = (char *)a };
        struct km_error err = {};

        (void)state;
        assert_int_equal(image_ref_check_pin(&unpinned, "src", a, NULL, &err), 0);
        assert_int_equal(image_ref_check_pin(&pinned, "src", a, NULL, &err), 0);
        assert_int_equal(image_ref_check_pin(&pinned, "src", b, a, &err), 0);
        assert_int_equal(image_ref_check_pin(&pinned, "src", a, b, &err), 0);
        assert_int_equal(image_ref_check_pin(&pinned, "src", b, NULL, &err), -EINVAL);
        assert_non_null(strstr(err.message, a));
        assert_non_null(strstr(err.message, b));
        assert_null(strchr(err.message, '\n'));
        assert_int_equal(image_ref_check_pin(&pinned, "src", b, b, &err), -EINVAL);
        assert_int_equal(image_ref_check_pin(&pinned, "src", b, c, &err), -EINVAL);
        assert_non_null(strstr(err.message, b));
        assert_non_null(strstr(err.message, c));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ref_table),
                cmocka_unit_test(test_ref_fields),
                cmocka_unit_test(test_ref_length_limits),
                cmocka_unit_test(test_ref_format_null),
                cmocka_unit_test(test_digest_is_valid),
                cmocka_unit_test(test_digest_known_values),
                cmocka_unit_test(test_digest_incremental),
                cmocka_unit_test(test_digest_fd_file),
                cmocka_unit_test(test_digest_short_and_libcrypto_agree),
                cmocka_unit_test(test_digest_fd_pipe_short_reads_eintr),
                cmocka_unit_test(test_check_pin),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
