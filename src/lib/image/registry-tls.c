/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trust of a registry: certs.d CA certificates and client certificates (registry-tls.h). */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "registry-tls.h"

#define CERT_FILE_MAX (1024 * 1024)
#define BUNDLE_MAX (8 * 1024 * 1024)

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
