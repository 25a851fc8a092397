/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A test driver of the registry client (src/lib/image/registry.h) until
 * `kubemount pull` exists: pulls REF's manifest (through an index, for this
 * machine's platform), config and layers into the store at STORE_DIR, the
 * manifest last, and prints the manifest's digest.  Used by registry.sh.
 *
 *   registry-pull [--insecure HOST:PORT]... [--certs-dir DIR] [--auth-file FILE]...
 *                 [--retries N] [--progress] [--debug] [--manifest-only] REF STORE_DIR
 *
 * Errors: one line "registry-pull: MESSAGE" on stderr, exit 1; usage: 2.
 * --debug prints the library's log lines on stderr ("debug: ...").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "imageref.h"
#include "manifest.h"
#include "registry.h"
#include "store.h"

#define MAX_LIST 16

static void log_stderr(int level, const char *message, void *userdata) {
        fprintf(stderr, "debug: %s\n", message);
}

/* REF's image into the store at dir; the manifest's digest into digest. */
static int pull(const char *text, const char *dir, const struct registry_options *o, bool manifest_only,
                char digest[DIGEST_STRING_MAX], struct km_error *err) {
        _cleanup_(image_ref_done) struct image_ref ref = {};
        _cleanup_(registry_freep) struct registry *reg = NULL;
        _cleanup_(store_closep) struct store *s = NULL;
        _cleanup_(manifest_done) struct manifest m = {};
        _cleanup_free_ char *body = NULL, *media_type = NULL;
        size_t size = 0;
        int r;

        if ((r = image_ref_parse(text, &ref, err)) < 0 || (r = registry_new(&ref, o, &reg, err)) < 0 ||
            (r = store_open(dir, &s, err)) < 0 ||
            (r = registry_get_manifest(reg, ref.digest ? ref.digest : ref.tag, &body, &size, &media_type, digest,
                                       err)) < 0 ||
            (r = manifest_parse(body, size, media_type, &m, err)) < 0)
                return r;
        if (m.kind == MANIFEST_INDEX) {
                const struct descriptor *d;
                char want[DIGEST_STRING_MAX];

                /* The index is stored too: a reference may name it. */
                if ((r = store_blob_put(s, digest, body, size, err)) < 0 ||
                    (r = manifest_select_platform(&m, NULL, NULL, NULL, &d, err)) < 0)
                        return r;
                memcpy(want, d->digest, sizeof(want));
                manifest_done(&m);
                memset(&m, 0, sizeof(m));
                free(TAKE_PTR(body));
                free(TAKE_PTR(media_type));
                if ((r = registry_get_manifest(reg, want, &body, &size, &media_type, digest, err)) < 0 ||
                    (r = manifest_parse(body, size, media_type, &m, err)) < 0)
                        return r;
                if (m.kind != MANIFEST_IMAGE)
                        return error_set_plain(err, -EBADMSG, "the index's entry %s is an index again", want);
        }
        if (!manifest_only) {
                if ((r = registry_get_blob(reg, s, m.config.digest, m.config.size, err)) < 0)
                        return r;
                for (size_t i = 0; i < m.n_layers; i++)
                        if ((r = registry_get_blob(reg, s, m.layers[i].digest, m.layers[i].size, err)) < 0)
                                return r;
        }
        return store_blob_put(s, digest, body, size, err);
}

int main(int argc, char **argv) {
        static const struct option longopts[] = {
                { "insecure", required_argument, NULL, 'i' },  { "certs-dir", required_argument, NULL, 'c' },
                { "auth-file", required_argument, NULL, 'a' }, { "retries", required_argument, NULL, 'r' },
                { "progress", no_argument, NULL, 'p' },        { "debug", no_argument, NULL, 'd' },
                { "manifest-only", no_argument, NULL, 'm' },   {},
        };
        char *insecure[MAX_LIST + 1] = {}, *auth_files[MAX_LIST + 1] = {};
        size_t n_insecure = 0, n_auth = 0;
        struct registry_options o = { .insecure = insecure, .progress_fd = -1 };
        struct km_error err = {};
        char digest[DIGEST_STRING_MAX];
        bool manifest_only = false;
        int c;

        while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
                switch (c) {
                case 'i':
                        if (n_insecure == MAX_LIST)
                                return 2;
                        insecure[n_insecure++] = optarg;
                        break;
                case 'c':
                        o.certs_dir = optarg;
                        break;
                case 'a':
                        if (n_auth == MAX_LIST)
                                return 2;
                        auth_files[n_auth++] = optarg;
                        o.auth_files = auth_files;
                        break;
                case 'r':
                        o.retries = atoi(optarg);
                        break;
                case 'p':
                        o.progress_fd = STDERR_FILENO;
                        break;
                case 'd':
                        km_log_set(log_stderr, NULL, KM_LOG_DEBUG);
                        break;
                case 'm':
                        manifest_only = true;
                        break;
                default:
                        return 2;
                }
        if (argc - optind != 2) {
                fprintf(stderr,
                        "usage: registry-pull [--insecure HOST:PORT]... [--certs-dir DIR] [--auth-file FILE]... "
                        "[--retries N] [--progress] [--debug] [--manifest-only] REF STORE_DIR\n");
                return 2;
        }
        if (pull(argv[optind], argv[optind + 1], &o, manifest_only, digest, &err) < 0) {
                fprintf(stderr, "registry-pull: %s\n", err.message);
                return 1;
        }
        printf("%s\n", digest);
        return 0;
}
