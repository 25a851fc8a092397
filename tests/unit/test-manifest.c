/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Manifests, indexes and image configs as registries serve them, and every
 * refusal with an input crafted for it (THREATS 24: a manifest that is also
 * an index, digest "sha256:../../x", over 4 MiB, foreign "urls"), plus the
 * platform selection table.
 *
 * JSON is written with ' for " (q() swaps them) to stay readable.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "digest.h"
#include "manifest.h"
#include "test-helpers.h"

#define H8(c) c c c c c c c c
#define HEX64(c) H8(H8(c))
#define DA "sha256:" HEX64("a")
#define DB "sha256:" HEX64("b")
#define DC "sha256:" HEX64("c")
#define DD "sha256:" HEX64("d")

#define OCI_CFG "{'mediaType':'" MT_OCI_CONFIG "','digest':'" DA "','size':1470}"
#define LAYER(mt, d) "{'mediaType':'" mt "','digest':'" d "','size':3623807}"
#define OCI_MANIFEST_WITH(layers)                                                                                      \
        "{'schemaVersion':2,'mediaType':'" MT_OCI_MANIFEST "','config':" OCI_CFG ",'layers':[" layers "]}"
#define GOOD_LAYER LAYER(MT_OCI_LAYER_GZIP, DB)

/* s with every ' turned into " (malloc'ed). */
static char *q(const char *s) {
        char *r = strdup(s);

        assert_non_null(r);
        for (char *p = r; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return r;
}

static void parse_ok(const char *json, const char *content_type, struct manifest *m) {
        _cleanup_free_ char *body = q(json);
        struct km_error err = {};
        int r = manifest_parse(body, strlen(body), content_type, m, &err);

        if (r < 0)
                fail_msg("refused (%d): %s\n%s", r, err.message, body);
}

/* Refused with -EBADMSG and a message containing msg; nothing returned. */
static void parse_bad_raw(const char *body, size_t size, const char *content_type, const char *msg) {
        struct manifest m = {};
        struct km_error err = {};
        int r = manifest_parse(body, size, content_type, &m, &err);

        if (r != -EBADMSG)
                fail_msg("expected -EBADMSG ('%s'), got %d", msg, r);
        if (!strstr(err.message, msg))
                fail_msg("message '%s' lacks '%s'", err.message, msg);
        assert_true(startswith(err.message, "manifest: "));
        assert_null(m.media_type);
        assert_null(m.layers);
        assert_null(m.entries);
}

static void parse_bad(const char *json, const char *content_type, const char *msg) {
        _cleanup_free_ char *body = q(json);

        test_note("expect '%s'", msg);
        parse_bad_raw(body, strlen(body), content_type, msg);
}

/* ---- real-world shapes ---- */

/* What registry:2 serves for a `docker push` (Docker Hub the same for older images). */
static const char docker_manifest[] =
        "{\n   'schemaVersion': 2,\n   'mediaType': '" MT_DOCKER_MANIFEST
        "',\n"
        "   'config': {\n      'mediaType': '" MT_DOCKER_CONFIG "',\n      'size': 1457,\n      'digest': '" DA
        "'\n   },\n"
        "   'layers': [\n      {\n         'mediaType': '" MT_DOCKER_LAYER_GZIP
        "',\n         'size': 2220094,\n"
        "         'digest': '" DB "'\n      },\n      {\n         'mediaType': '" MT_DOCKER_LAYER_GZIP
        "',\n"
        "         'size': 32,\n         'digest': '" DC "'\n      }\n   ]\n}";

/* A buildkit OCI image: annotations, zstd and plain tar layers. */
static const char oci_manifest[] = "{'schemaVersion':2,'mediaType':'" MT_OCI_MANIFEST "','config':" OCI_CFG
                                   ",'layers':["
                                   "{'mediaType':'" MT_OCI_LAYER_ZSTD "','digest':'" DB
                                   "','size':3623807},"
                                   "{'mediaType':'" MT_OCI_LAYER_TAR "','digest':'" DC
                                   "','size':0,'annotations':{'x':'y'}}],"
                                   "'annotations':{'org.opencontainers.image.created':'2024-01-01T00:00:00Z',"
                                   "'org.opencontainers.image.source':'https://github.com/kubemount/fuse-tools'}}";

/* Docker Hub's official images today: an OCI index with attestation manifests. */
#define ENTRY(mt, d, platform) "{'mediaType':'" mt "','digest':'" d "','size':610,'platform':" platform "}"
static const char hub_index[] =
        "{'manifests':["
        ENTRY(MT_OCI_MANIFEST, DA, "{'architecture':'amd64','os':'linux'}") ","
        ENTRY(MT_OCI_MANIFEST, DB, "{'architecture':'arm','os':'linux','variant':'v5'}") ","
        ENTRY(MT_OCI_MANIFEST, DC, "{'architecture':'arm','os':'linux','variant':'v6'}") ","
        ENTRY(MT_OCI_MANIFEST, DD, "{'architecture':'arm','os':'linux','variant':'v7'}") ","
        ENTRY(MT_OCI_MANIFEST, "sha256:" HEX64("1"), "{'architecture':'arm64','os':'linux','variant':'v8'}") ","
        ENTRY(MT_OCI_MANIFEST, "sha256:" HEX64("2"), "{'architecture':'386','os':'linux'}") ","
        ENTRY(MT_OCI_MANIFEST, "sha256:" HEX64("3"), "{'architecture':'ppc64le','os':'linux'}") ","
        ENTRY(MT_OCI_MANIFEST, "sha256:" HEX64("4"), "{'architecture':'s390x','os':'linux'}") ","
        "{'annotations':{'vnd.docker.reference.digest':'" DA "','vnd.docker.reference.type':'attestation-manifest'},"
        "'digest':'sha256:" HEX64("5") "','mediaType':'" MT_OCI_MANIFEST "','platform':{'architecture':'unknown','os':'unknown'},'size':839},"
        ENTRY(MT_OCI_MANIFEST, "sha256:" HEX64("6"), "{'architecture':'amd64','os':'windows','os.version':'10.0.17763.5329'}") ","
        /* Never picked: a nested index and an artifact, even for their platform. */
        "{'mediaType':'" MT_OCI_INDEX "','digest':'sha256:" HEX64("7") "','size':300},"
        ENTRY(MT_OCI_INDEX, "sha256:" HEX64("8"), "{'architecture':'riscv64','os':'linux'}") ","
        ENTRY("application/vnd.in-toto+json", "sha256:" HEX64("9"), "{'architecture':'riscv64','os':'linux'}")
        "],'mediaType':'" MT_OCI_INDEX "','schemaVersion':2}";

/* A Docker manifest list (docker buildx before OCI, most of Docker Hub's history). */
// clang-format off
static const char docker_list[] =
        "{'schemaVersion':2,'mediaType':'" MT_DOCKER_LIST "','manifests':["
        ENTRY(MT_DOCKER_MANIFEST, DA, "{'architecture':'amd64','os':'linux'}") ","
        ENTRY(MT_DOCKER_MANIFEST, DB, "{'architecture':'arm64','os':'linux','variant':'v8'}") ","
        ENTRY(MT_DOCKER_MANIFEST, DC, "{'architecture':'arm','os':'linux','variant':'v7','features':['sse4']}") "]}";
// clang-format on

static void test_accept_header(void **state) {
        assert_string_equal(manifest_accept,
                            MT_OCI_MANIFEST ", " MT_OCI_INDEX ", " MT_DOCKER_MANIFEST ", " MT_DOCKER_LIST);
}

static void test_docker_manifest(void **state) {
        static const char *const cts[] = { NULL, MT_DOCKER_MANIFEST, "application/json",
                                           " " MT_DOCKER_MANIFEST "; charset=utf-8",
                                           "Application/Vnd.Docker.Distribution.Manifest.V2+JSON" };

        for (size_t i = 0; i < ELEMENTSOF(cts); i++) {
                struct manifest m = {};

                parse_ok(docker_manifest, cts[i], &m);
                assert_int_equal(m.kind, MANIFEST_IMAGE);
                assert_string_equal(m.media_type, MT_DOCKER_MANIFEST);
                assert_string_equal(m.config.media_type, MT_DOCKER_CONFIG);
                assert_string_equal(m.config.digest, DA);
                assert_int_equal(m.config.size, 1457);
                assert_int_equal(m.n_layers, 2);
                assert_string_equal(m.layers[0].media_type, MT_DOCKER_LAYER_GZIP);
                assert_string_equal(m.layers[0].digest, DB);
                assert_int_equal(m.layers[0].size, 2220094);
                assert_string_equal(m.layers[1].digest, DC);
                assert_int_equal(m.n_entries, 0);
                manifest_done(&m);
                assert_null(m.layers);
        }
}

static void test_oci_manifest(void **state) {
        struct manifest m = {};

        parse_ok(oci_manifest, MT_OCI_MANIFEST, &m);
        assert_string_equal(m.media_type, MT_OCI_MANIFEST);
        assert_int_equal(m.n_layers, 2);
        assert_string_equal(m.layers[0].media_type, MT_OCI_LAYER_ZSTD);
        assert_string_equal(m.layers[1].media_type, MT_OCI_LAYER_TAR);
        assert_int_equal(m.layers[1].size, 0);
        manifest_done(&m);
        manifest_done(NULL);
}

/* Without mediaType in the body (allowed by OCI), the Content-Type or else the shape decides. */
static void test_media_type_from_header_or_shape(void **state) {
        struct manifest m = {};

        parse_ok("{'schemaVersion':2,'config':" OCI_CFG ",'layers':[" GOOD_LAYER "]}", MT_DOCKER_MANIFEST, &m);
        assert_string_equal(m.media_type, MT_DOCKER_MANIFEST);
        manifest_done(&m);
        parse_ok("{'schemaVersion':2,'config':" OCI_CFG ",'layers':[]}", NULL, &m);
        assert_string_equal(m.media_type, MT_OCI_MANIFEST);
        assert_int_equal(m.n_layers, 0);
        manifest_done(&m);
        parse_ok("{'schemaVersion':2,'manifests':[]}", "text/plain", &m);
        assert_int_equal(m.kind, MANIFEST_INDEX);
        assert_string_equal(m.media_type, MT_OCI_INDEX);
        manifest_done(&m);
        parse_ok("{'schemaVersion':2,'manifests':[]}", MT_DOCKER_LIST, &m);
        assert_string_equal(m.media_type, MT_DOCKER_LIST);
        manifest_done(&m);
}

static void test_indexes(void **state) {
        struct manifest m = {};

        parse_ok(hub_index, MT_OCI_INDEX, &m);
        assert_int_equal(m.kind, MANIFEST_INDEX);
        assert_int_equal(m.n_entries, 13);
        assert_string_equal(m.entries[1].architecture, "arm");
        assert_string_equal(m.entries[1].variant, "v5");
        assert_null(m.entries[0].variant);
        assert_string_equal(m.entries[8].os, "unknown");
        assert_null(m.entries[10].os); /* nested index without platform */
        assert_string_equal(m.entries[12].media_type, "application/vnd.in-toto+json");
        assert_int_equal(m.entries[12].size, 610);
        manifest_done(&m);

        parse_ok(docker_list, NULL, &m);
        assert_string_equal(m.media_type, MT_DOCKER_LIST);
        assert_int_equal(m.n_entries, 3);
        assert_int_equal(m.n_layers, 0);
        assert_null(m.config.media_type);
        manifest_done(&m);
}

static void test_other_layer_types(void **state) {
        struct manifest m = {};

        /* Nondistributable / foreign layers are ordinary blobs when they carry no urls. */
        parse_ok(OCI_MANIFEST_WITH(LAYER("application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
                                         DB) "," LAYER("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
                                                       DC) "," LAYER(MT_OCI_LAYER_TAR, DD)),
                 NULL, &m);
        assert_int_equal(m.n_layers, 3);
        manifest_done(&m);
        /* Sizes up to 2^53 and repeated layers (the empty gzip layer) are fine. */
        parse_ok(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB
                                   "','size':9007199254740992}," GOOD_LAYER),
                 NULL, &m);
        assert_int_equal(m.layers[0].size, UINT64_C(9007199254740992));
        manifest_done(&m);
}

/* ---- refusals ---- */

static void test_refuse_manifest_and_index(void **state) {
        parse_bad("{'schemaVersion':2,'mediaType':'" MT_OCI_MANIFEST "','config':" OCI_CFG
                  ",'layers':[],'manifests':[]}",
                  NULL, "a manifest that is also an index");
        parse_bad("{'schemaVersion':2,'mediaType':'" MT_OCI_INDEX "','layers':[],'manifests':[]}", MT_OCI_INDEX,
                  "a manifest that is also an index");
        parse_bad("{'schemaVersion':2,'config':" OCI_CFG ",'manifests':[]}", NULL,
                  "has both \"config\" and \"manifests\"");
        /* One kind declared, the other's fields present. */
        parse_bad("{'schemaVersion':2,'manifests':[]}", MT_OCI_MANIFEST, "manifests: not allowed in an image manifest");
        parse_bad("{'schemaVersion':2,'mediaType':'" MT_DOCKER_MANIFEST "','manifests':[]}", NULL,
                  "manifests: not allowed in an image manifest");
        parse_bad("{'schemaVersion':2,'config':" OCI_CFG ",'layers':[]}", MT_OCI_INDEX,
                  "layers: not allowed in an index");
        parse_bad("{'schemaVersion':2,'mediaType':'" MT_DOCKER_LIST "','config':" OCI_CFG "}", NULL,
                  "config: not allowed in an index");
        parse_bad("{'schemaVersion':2}", NULL, "neither \"layers\" nor \"manifests\"");
}

static void test_refuse_media_type_mismatch(void **state) {
        parse_bad(oci_manifest, MT_OCI_INDEX, "media type mismatch");
        parse_bad(oci_manifest, MT_DOCKER_MANIFEST, "media type mismatch");
        parse_bad(docker_manifest, MT_OCI_MANIFEST, "media type mismatch");
        parse_bad(hub_index, MT_DOCKER_LIST, "media type mismatch");
        parse_bad(docker_list, MT_OCI_INDEX, "media type mismatch");
        /* Types that are no manifest, in the header or the body. */
        parse_bad(docker_manifest, "application/vnd.docker.distribution.manifest.v1+prettyjws",
                  "is not a manifest media type");
        parse_bad(oci_manifest, MT_OCI_CONFIG, "is not a manifest media type");
        parse_bad("{'schemaVersion':2,'mediaType':'application/vnd.oci.image.layer.v1.tar','layers':[]}", NULL,
                  "mediaType: \"application/vnd.oci.image.layer.v1.tar\" is not a manifest media type");
        parse_bad("{'schemaVersion':2,'mediaType':7,'layers':[]}", NULL, "mediaType: must be a string, not an integer");
        parse_bad("{'schemaVersion':2,'mediaType':'a b/c','layers':[]}", NULL, "mediaType: not a media type");
}

static void test_refuse_schema_version(void **state) {
        parse_bad("{'mediaType':'" MT_OCI_MANIFEST "','config':" OCI_CFG ",'layers':[]}", NULL,
                  "schemaVersion: missing");
        parse_bad("{'schemaVersion':1,'config':" OCI_CFG ",'layers':[]}", NULL, "schemaVersion: 1 is not supported");
        parse_bad("{'schemaVersion':'2','config':" OCI_CFG ",'layers':[]}", NULL,
                  "schemaVersion: must be an integer, not a string");
        parse_bad("{'schemaVersion':2.0,'config':" OCI_CFG ",'layers':[]}", NULL,
                  "schemaVersion: must be an integer, not a number");
}

static void test_refuse_bad_digests(void **state) {
        parse_bad(OCI_MANIFEST_WITH(GOOD_LAYER "," LAYER(MT_OCI_LAYER_GZIP, "sha256:../../x")), NULL,
                  "manifest: layers[1].digest: not a sha256 digest");
        parse_bad(OCI_MANIFEST_WITH(LAYER(MT_OCI_LAYER_GZIP, "sha256:" HEX64("A"))), NULL,
                  "layers[0].digest: not a sha256 digest");
        parse_bad(OCI_MANIFEST_WITH(LAYER(MT_OCI_LAYER_GZIP, "sha512:" HEX64("a") HEX64("a"))), NULL,
                  "layers[0].digest: not a sha256 digest");
        parse_bad(OCI_MANIFEST_WITH(LAYER(MT_OCI_LAYER_GZIP, DA "/../x")), NULL,
                  "layers[0].digest: not a sha256 digest");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':5,'size':1}"), NULL,
                  "layers[0].digest: must be a string, not an integer");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','size':1}"), NULL,
                  "layers[0].digest: missing");
        parse_bad("{'schemaVersion':2,'config':{'mediaType':'" MT_OCI_CONFIG "','digest':'" DA
                  "x','size':1},'layers':[]}",
                  NULL, "config.digest: not a sha256 digest");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, "sha256:../../x",
                                                           "{'os':'linux','architecture':'amd64'}") "]}",
                  NULL, "manifests[0].digest: not a sha256 digest");
}

static void test_refuse_foreign_urls(void **state) {
        parse_bad(OCI_MANIFEST_WITH(GOOD_LAYER
                                    ",{'mediaType':'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',"
                                    "'digest':'" DC "','size':1,'urls':['https://evil.example/x']}"),
                  NULL, "manifest: layers[1].urls: foreign URLs are not allowed");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DC "','size':1,'urls':[]}"), NULL,
                  "layers[0].urls: foreign URLs");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DC "','size':1,'urls':null}"),
                  NULL, "layers[0].urls: foreign URLs");
        parse_bad("{'schemaVersion':2,'config':{'mediaType':'" MT_OCI_CONFIG "','digest':'" DA
                  "','size':1,'urls':['http://x']},"
                  "'layers':[]}",
                  NULL, "config.urls: foreign URLs");
        parse_bad("{'schemaVersion':2,'manifests':[{'mediaType':'" MT_OCI_MANIFEST "','digest':'" DA
                  "','size':1,"
                  "'urls':['http://x'],'platform':{'os':'linux','architecture':'amd64'}}]}",
                  NULL, "manifests[0].urls: foreign URLs");
}

static void test_refuse_descriptor_fields(void **state) {
        parse_bad("{'schemaVersion':2,'layers':[]}", NULL, "config: missing");
        parse_bad("{'schemaVersion':2,'config':[],'layers':[]}", NULL, "config: must be an object, not an array");
        parse_bad("{'schemaVersion':2,'config':{'digest':'" DA "','size':1},'layers':[]}", NULL,
                  "config.mediaType: missing");
        parse_bad("{'schemaVersion':2,'config':{'mediaType':'application/vnd.cncf.helm.config.v1+json','digest':'" DA
                  "','size':1},"
                  "'layers':[]}",
                  NULL, "config.mediaType: \"application/vnd.cncf.helm.config.v1+json\" is not an image config");
        parse_bad("{'schemaVersion':2,'config':{'mediaType':'" MT_OCI_CONFIG "','digest':'" DA
                  "','size':-1},'layers':[]}",
                  NULL, "config.size: -1 is not in 0..2^53");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','size':9007199254740993}"),
                  NULL, "layers[0].size: 9007199254740993 is not in 0..2^53");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','size':'12'}"), NULL,
                  "layers[0].size: must be an integer, not a string");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','size':1.5}"), NULL,
                  "layers[0].size: must be an integer, not a number");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','size':1e3}"), NULL,
                  "layers[0].size: must be an integer, not a number");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "'}"), NULL,
                  "layers[0].size: missing");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','size':null}"), NULL,
                  "layers[0].size: missing");
        parse_bad(
                OCI_MANIFEST_WITH(LAYER("application/vnd.oci.image.layer.v1.tar+bzip2", DB)), NULL,
                "layers[0].mediaType: \"application/vnd.oci.image.layer.v1.tar+bzip2\" is not a supported layer type");
        parse_bad(OCI_MANIFEST_WITH(LAYER(MT_OCI_CONFIG, DB)), NULL, "is not a supported layer type");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'a/b\\u001b[31m','digest':'" DB "','size':1}"), NULL,
                  "layers[0].mediaType: not a media type");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'','digest':'" DB "','size':1}"), NULL,
                  "layers[0].mediaType: not a media type");
        parse_bad(OCI_MANIFEST_WITH(GOOD_LAYER ",[]"), NULL, "layers[1]: must be an object, not an array");
        parse_bad(OCI_MANIFEST_WITH(GOOD_LAYER ",'x'"), NULL, "layers[1]: must be an object, not a string");
        parse_bad("{'schemaVersion':2,'config':" OCI_CFG "}", NULL, "layers: missing");
        parse_bad("{'schemaVersion':2,'config':" OCI_CFG ",'layers':{}}", NULL,
                  "layers: must be an array, not an object");
        parse_bad("{'schemaVersion':2,'config':" OCI_CFG ",'layers':true}", NULL,
                  "layers: must be an array, not a boolean");
}

static void test_refuse_index_entries(void **state) {
        parse_bad("{'schemaVersion':2,'manifests':{}}", NULL, "manifests: must be an array, not an object");
        parse_bad("{'schemaVersion':2,'manifests':[{'mediaType':'" MT_OCI_MANIFEST "','digest':'" DA "','size':1}]}",
                  NULL, "manifests[0].platform: missing");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA, "{'os':'linux'}") "]}", NULL,
                  "manifests[0].platform.architecture: missing");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA, "{'architecture':'amd64'}") "]}", NULL,
                  "manifests[0].platform.os: missing");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA, "{'os':1,'architecture':'amd64'}") "]}",
                  NULL, "manifests[0].platform.os: must be a string, not an integer");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(
                          MT_OCI_MANIFEST, DA, "{'os':'linux','architecture':'amd64','variant':'v7\\n'}") "]}",
                  NULL, "manifests[0].platform.variant: may contain only");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA,
                                                           "{'os':'','architecture':'amd64'}") "]}",
                  NULL, "manifests[0].platform.os: must be 1-64 characters");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA, "'linux/amd64'") "]}", NULL,
                  "manifests[0].platform: must be an object, not a string");
        /* A nested index needs no platform, but one it has must be valid. */
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_INDEX, DA, "{'os':'linux'}") "]}", NULL,
                  "manifests[0].platform.architecture: missing");
        parse_bad("{'schemaVersion':2,'manifests':[" ENTRY(MT_OCI_MANIFEST, DA,
                                                           "{'os':'linux','architecture':'amd64'}") ",5]}",
                  NULL, "manifests[1]: must be an object, not an integer");
}

/* Writes a manifest (or index) with n layers (or entries) into a malloc'ed string. */
static char *big_body(size_t n, bool index) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        if (index)
                fputs("{\"schemaVersion\":2,\"manifests\":[", f);
        else
                fputs("{\"schemaVersion\":2,\"config\":{\"mediaType\":\"" MT_OCI_CONFIG "\",\"digest\":\"" DA
                      "\",\"size\":1},\"layers\":[",
                      f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s{\"mediaType\":\"%s\",\"digest\":\"sha256:%064zx\",\"size\":%zu%s}", i ? "," : "",
                        index ? MT_OCI_MANIFEST : MT_OCI_LAYER_GZIP, i, i,
                        index ? ",\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}" : "");
        fputs("]}", f);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void test_limits_counts(void **state) {
        struct manifest m = {};
        char *body;

        body = big_body(MANIFEST_MAX_LAYERS, false);
        assert_int_equal(manifest_parse(body, strlen(body), NULL, &m, NULL), 0);
        assert_int_equal(m.n_layers, MANIFEST_MAX_LAYERS);
        assert_string_equal(m.layers[255].digest,
                            "sha256:"
                            "00000000000000000000000000000000000000000000000000000000000000ff");
        manifest_done(&m);
        free(body);
        body = big_body(MANIFEST_MAX_LAYERS + 1, false);
        parse_bad_raw(body, strlen(body), NULL, "layers: 257 entries, more than 256");
        free(body);

        body = big_body(MANIFEST_MAX_INDEX_ENTRIES, true);
        assert_int_equal(manifest_parse(body, strlen(body), MT_OCI_INDEX, &m, NULL), 0);
        assert_int_equal(m.n_entries, MANIFEST_MAX_INDEX_ENTRIES);
        manifest_done(&m);
        free(body);
        body = big_body(MANIFEST_MAX_INDEX_ENTRIES + 1, true);
        parse_bad_raw(body, strlen(body), NULL, "manifests: 1025 entries, more than 1024");
        free(body);
}

/* A valid manifest padded with blanks to size bytes. */
static char *padded(size_t size) {
        _cleanup_free_ char *json = q(oci_manifest);
        char *buf = malloc(size);

        assert_non_null(buf);
        memset(buf, ' ', size);
        memcpy(buf, json, strlen(json));
        return buf;
}

static void test_limits_size(void **state) {
        struct manifest m = {};
        char *buf;

        buf = padded(MANIFEST_MAX_SIZE);
        assert_int_equal(manifest_parse(buf, MANIFEST_MAX_SIZE, NULL, &m, NULL), 0);
        manifest_done(&m);
        free(buf);
        /* Refused before parsing: the garbage after the limit is never looked at. */
        buf = padded(MANIFEST_MAX_SIZE + 1);
        buf[MANIFEST_MAX_SIZE] = '{';
        parse_bad_raw(buf, MANIFEST_MAX_SIZE + 1, NULL, "4194305 bytes, more than the limit of 4194304");
        free(buf);
}

static void test_refuse_bad_json(void **state) {
        static const char nul[] = "{\"schemaVersion\":2,\0\"layers\":[]}";
        char *deep, *p;
        size_t n = 3000;

        parse_bad("{'schemaVersion':2,'config':" OCI_CFG ",'layers':[],'layers':[]}", NULL, "duplicate object key");
        parse_bad(OCI_MANIFEST_WITH("{'mediaType':'" MT_OCI_LAYER_GZIP "','digest':'" DB "','digest':'" DC
                                    "','size':1}"),
                  NULL, "duplicate object key");
        parse_bad("{'schemaVersion':2,'schemaVersion':2,'manifests':[]}", NULL, "duplicate object key");
        parse_bad_raw(nul, sizeof(nul) - 1, NULL, "contains a NUL byte");
        parse_bad("{'schemaVersion':2,'manifests':[", NULL, "line 1 column");
        parse_bad("", NULL, "line 1");
        parse_bad("[]", NULL, "must be a JSON object, not an array");
        parse_bad("'manifest'", NULL, "line 1");
        parse_bad("{'schemaVersion':2,'manifests':[]} x", NULL, "end of file expected");
        parse_bad("{'schemaVersion':2,'manifests':[],'annotations':{'a':'\\u0000'}}", NULL, "NUL");
        parse_bad_raw(NULL, 0, NULL, "no data");

        /* Beyond jansson's own depth limit, and beyond ours. */
        deep = malloc(2 * n + 64);
        assert_non_null(deep);
        p = stpcpy(deep, "{\"schemaVersion\":2,\"manifests\":[],\"a\":");
        memset(p, '[', n);
        memset(p + n, ']', n);
        strcpy(p + 2 * n, "}");
        parse_bad_raw(deep, strlen(deep), NULL, "maximum parsing depth");
        parse_bad(
                "{'schemaVersion':2,'manifests':[],'annotations':[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]"
                "]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                NULL, "nested deeper than 32 levels");
        free(deep);
}

/* ---- platform selection ---- */

struct platform_case {
        const char *os, *arch, *variant;
        int want; /* index into the entries, or -1: -ENOENT */
};

static void expect_platforms(const char *index_json, const struct platform_case *cases, size_t n) {
        struct manifest m = {};

        parse_ok(index_json, NULL, &m);
        for (size_t i = 0; i < n; i++) {
                const struct descriptor *d = NULL;
                struct km_error err = {};
                int r;

                test_note("platform %s/%s/%s", cases[i].os ?: "-", cases[i].arch ?: "-", cases[i].variant ?: "-");
                r = manifest_select_platform(&m, cases[i].os, cases[i].arch, cases[i].variant, &d, &err);
                if (cases[i].want < 0) {
                        assert_int_equal(r, -ENOENT);
                        assert_non_null(strstr(err.message, "available: "));
                        continue;
                }
                if (r < 0)
                        fail_msg("no match: %s", err.message);
                assert_ptr_equal(d, &m.entries[cases[i].want]);
        }
        manifest_done(&m);
}

static void test_select_hub_index(void **state) {
        static const struct platform_case cases[] = {
                { "linux", "amd64", NULL, 0 },   { NULL, "amd64", NULL, 0 },        { "linux", "x86_64", NULL, 0 },
                { "linux", "arm64", NULL, 4 },   { "linux", "arm64", "v8", 4 },     { "linux", "aarch64", NULL, 4 },
                { "linux", "arm", NULL, 3 },     { "linux", "arm", "v7", 3 },       { "linux", "arm", "7", 3 },
                { "linux", "armhf", NULL, 3 },   { "linux", "armel", NULL, 2 },     { "linux", "arm", "v6", 2 },
                { "linux", "arm", "v5", 1 },     { "linux", "386", NULL, 5 },       { "linux", "i686", NULL, 5 },
                { "linux", "ppc64le", NULL, 6 }, { "linux", "s390x", NULL, 7 },     { "windows", "amd64", NULL, 9 },
                { "LINUX", "AMD64", NULL, 0 },   { "linux", "riscv64", NULL, -1 },  { "linux", "mips64le", NULL, -1 },
                { "linux", "amd64", "v3", 0 },   { "unknown", "unknown", NULL, 8 }, { "darwin", "arm64", NULL, -1 },
                { "linux", "arm", "v4", -1 },
        };

        expect_platforms(hub_index, cases, ELEMENTSOF(cases));
}

#define PLAT(arch, variant) ENTRY(MT_OCI_MANIFEST, DA, "{'os':'linux','architecture':'" arch "'" variant "}")
#define V(v) ",'variant':'" v "'"

static void test_select_variants(void **state) {
        static const struct platform_case older_arm[] = {
                { "linux", "arm", "v7", 1 }, /* v6 runs on a v7 */
                { "linux", "arm", "v6", 1 },
                { "linux", "arm", "v5", 0 },
                { "linux", "arm64", NULL, -1 },
        };
        static const struct platform_case exact_first[] = {
                { "linux", "arm", "v7", 1 }, /* exact beats variantless, wherever it is */
                { "linux", "arm", "v6", 2 },
                { "linux", "arm", "v5", 0 },
        };
        static const struct platform_case variantless_before_older[] = {
                { "linux", "arm", "v7", 1 },
                { "linux", "arm", "v8", 1 },
                { "linux", "arm", "v6", 0 },
        };
        static const struct platform_case amd64_levels[] = {
                { "linux", "amd64", NULL, -1 }, /* a plain amd64 cannot run v2/v3 binaries */
                { "linux", "amd64", "v1", -1 }, { "linux", "amd64", "v2", 1 },
                { "linux", "amd64", "v3", 0 },  { "linux", "amd64", "v4", 0 },
        };
        static const struct platform_case duplicates[] = {
                { "linux", "amd64", NULL, 0 },
                { "linux", "arm64", NULL, 2 },
                { "linux", "arm64", "v8", 2 },
        };

        expect_platforms("{'schemaVersion':2,'manifests':[" PLAT("arm", V("v5")) "," PLAT("arm", V("v6")) "]}",
                         older_arm, ELEMENTSOF(older_arm));
        // clang-format off
        expect_platforms("{'schemaVersion':2,'manifests':["
                         PLAT("arm", "") "," PLAT("arm", V("v7")) "," PLAT("arm", V("v6")) "]}",
                         exact_first, ELEMENTSOF(exact_first));
        // clang-format on
        expect_platforms("{'schemaVersion':2,'manifests':[" PLAT("arm", V("v6")) "," PLAT("arm", "") "]}",
                         variantless_before_older, ELEMENTSOF(variantless_before_older));
        expect_platforms("{'schemaVersion':2,'manifests':[" PLAT("amd64", V("v3")) "," PLAT("amd64", V("v2")) "]}",
                         amd64_levels, ELEMENTSOF(amd64_levels));
        expect_platforms("{'schemaVersion':2,'manifests':[" PLAT("amd64", "") "," PLAT("amd64", "") "," PLAT(
                                 "arm64", "") "," PLAT("aarch64", V("v8")) "]}",
                         duplicates, ELEMENTSOF(duplicates));
}

static void test_select_defaults_and_errors(void **state) {
        struct manifest m = {};
        const struct descriptor *d = NULL;
        struct km_error err = {};
        struct utsname u;

        parse_ok(docker_list, NULL, &m);
        assert_int_equal(uname(&u), 0);
        if (streq(u.machine, "x86_64")) {
                assert_int_equal(manifest_select_platform(&m, NULL, NULL, NULL, &d, &err), 0);
                assert_ptr_equal(d, &m.entries[0]);
        } else if (streq(u.machine, "aarch64")) {
                assert_int_equal(manifest_select_platform(&m, NULL, NULL, NULL, &d, &err), 0);
                assert_ptr_equal(d, &m.entries[1]);
        } else
                test_note("machine %s: default platform not checked", u.machine);

        assert_int_equal(manifest_select_platform(&m, "linux", "riscv64", NULL, &d, &err), -ENOENT);
        assert_string_equal(err.message,
                            "manifest: no image for linux/riscv64 in the index "
                            "(available: linux/amd64, linux/arm64/v8, linux/arm/v7)");
        manifest_done(&m);

        parse_ok("{'schemaVersion':2,'manifests':[]}", NULL, &m);
        assert_int_equal(manifest_select_platform(&m, "linux", "arm", NULL, &d, &err), -ENOENT);
        assert_string_equal(err.message, "manifest: no image for linux/arm/v7 in the index (available: none)");
        manifest_done(&m);

        parse_ok(docker_manifest, NULL, &m);
        assert_int_equal(manifest_select_platform(&m, NULL, NULL, NULL, &d, &err), -EINVAL);
        assert_string_equal(err.message, "manifest: not an index");
        manifest_done(&m);
}

/* ---- image config ---- */

/* What `docker pull busybox` gets as config (trimmed of container_config). */
static const char docker_config[] =
        "{'architecture':'amd64','config':{'Hostname':'','Domainname':'','User':'','AttachStdin':false,"
        "'AttachStdout':false,'AttachStderr':false,'Tty':false,'OpenStdin':false,'StdinOnce':false,"
        "'Env':['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],'Cmd':['sh'],"
        "'Image':'" DA
        "','Volumes':null,'WorkingDir':'','Entrypoint':null,'OnBuild':null,'Labels':null},"
        "'container':'f0a1','created':'2023-07-18T23:19:33.655005962Z','docker_version':'20.10.23',"
        "'history':[{'created':'2023-07-18T23:19:33Z','created_by':'/bin/sh -c #(nop) ADD "
        "file:7e9002edaafd4e4579b65c8f0aaabde1aeb7fd3f8d95579f7fd3443cef785fd1 in / '},"
        "{'created':'2023-07-18T23:19:33Z','created_by':'/bin/sh -c #(nop)  CMD [\\'sh\\']','empty_layer':true}],"
        "'os':'linux','rootfs':{'type':'layers','diff_ids':['" DB "']}}";

/* A buildkit OCI config. */
static const char oci_config[] =
        "{'architecture':'arm64','variant':'v8','os':'linux','created':'2024-02-01T10:00:00Z',"
        "'config':{'User':'65532','Env':['PATH=/bin','A=','B=x=y'],'Entrypoint':['/usr/bin/tini','--'],"
        "'Cmd':['fuse-daemon','--foreground'],'WorkingDir':'/app','Labels':{'maintainer':'x'},"
        "'ExposedPorts':{'8080/tcp':{}},'StopSignal':'SIGTERM'},"
        "'rootfs':{'type':'layers','diff_ids':['" DB "','" DC "','" DD
        "']},"
        "'history':[{'created_by':'RUN x','comment':'buildkit.dockerfile.v0'}]}";

static void config_ok(const char *json, struct image_config *c) {
        _cleanup_free_ char *body = q(json);
        struct km_error err = {};

        if (image_config_parse(body, strlen(body), c, &err) < 0)
                fail_msg("refused: %s", err.message);
}

static void config_bad(const char *json, const char *msg) {
        _cleanup_free_ char *body = q(json);
        struct image_config c = {};
        struct km_error err = {};
        int r = image_config_parse(body, strlen(body), &c, &err);

        test_note("expect '%s'", msg);
        if (r != -EBADMSG)
                fail_msg("expected -EBADMSG ('%s'), got %d", msg, r);
        if (!strstr(err.message, msg) || !startswith(err.message, "image config: "))
                fail_msg("message '%s' lacks '%s'", err.message, msg);
        assert_null(c.diff_ids);
        assert_null(c.env);
}

static void test_config_real(void **state) {
        struct image_config c = {};

        config_ok(docker_config, &c);
        assert_null(c.entrypoint);
        assert_string_equal(c.cmd[0], "sh");
        assert_null(c.cmd[1]);
        assert_string_equal(c.env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        assert_null(c.working_dir);
        assert_string_equal(c.diff_ids[0], DB);
        assert_null(c.diff_ids[1]);
        image_config_done(&c);
        assert_null(c.cmd);

        config_ok(oci_config, &c);
        assert_string_equal(c.entrypoint[0], "/usr/bin/tini");
        assert_string_equal(c.entrypoint[1], "--");
        assert_null(c.entrypoint[2]);
        assert_string_equal(c.cmd[1], "--foreground");
        assert_string_equal(c.env[2], "B=x=y");
        assert_string_equal(c.working_dir, "/app");
        assert_string_equal(c.diff_ids[2], DD);
        image_config_done(&c);

        /* No "config" at all (scratch images, artifacts built by hand). */
        config_ok("{'architecture':'amd64','os':'linux','rootfs':{'type':'layers','diff_ids':[]}}", &c);
        assert_null(c.cmd);
        assert_null(c.env);
        assert_non_null(c.diff_ids);
        assert_null(c.diff_ids[0]);
        image_config_done(&c);
        image_config_done(NULL);
}

static void test_config_refusals(void **state) {
        _cleanup_free_ char *big = NULL, *many = NULL;
        struct image_config c = {};
        struct km_error err = {};
        char *p;

        config_bad("{'os':'linux'}", "rootfs: missing");
        config_bad("{'rootfs':[]}", "rootfs: must be an object, not an array");
        config_bad("{'rootfs':{'type':'layers'}}", "rootfs.diff_ids: missing");
        config_bad("{'rootfs':{'type':'tarball','diff_ids':[]}}", "rootfs.type: must be \"layers\"");
        config_bad("{'rootfs':{'type':'layers','diff_ids':['" DA "','sha256:../../x']}}",
                   "image config: rootfs.diff_ids[1]: not a sha256 digest");
        config_bad("{'rootfs':{'type':'layers','diff_ids':[1]}}",
                   "rootfs.diff_ids[0]: must be a string, not an integer");
        config_bad("{'rootfs':{'type':'layers','diff_ids':'" DA "'}}",
                   "rootfs.diff_ids: must be an array, not a string");
        config_bad("{'config':[],'rootfs':{'diff_ids':[]}}", "config: must be an object, not an array");
        config_bad("{'config':{'Cmd':'sh'},'rootfs':{'diff_ids':[]}}", "config.Cmd: must be an array, not a string");
        config_bad("{'config':{'Entrypoint':['sh',1]},'rootfs':{'diff_ids':[]}}",
                   "config.Entrypoint[1]: must be a string, not an integer");
        config_bad("{'config':{'Env':['PATH=/bin','NOEQUALS']},'rootfs':{'diff_ids':[]}}",
                   "config.Env[1]: not NAME=VALUE");
        config_bad("{'config':{'Env':['=x']},'rootfs':{'diff_ids':[]}}", "config.Env[0]: not NAME=VALUE");
        config_bad("{'config':{'WorkingDir':5},'rootfs':{'diff_ids':[]}}",
                   "config.WorkingDir: must be a string, not an integer");
        config_bad("{'config':{'Cmd':['a\\u0000b']},'rootfs':{'diff_ids':[]}}", "NUL");
        config_bad("{'config':{},'config':{},'rootfs':{'diff_ids':[]}}", "duplicate object key");
        config_bad("[]", "must be a JSON object");
        config_bad(
                "{'rootfs':{'diff_ids':[]},'a':[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
                "]]]]]]]]}",
                "nested deeper");

        /* A string longer than the kernel takes for one argument. */
        big = malloc(140 * 1024);
        assert_non_null(big);
        p = stpcpy(big, "{\"rootfs\":{\"diff_ids\":[]},\"config\":{\"Cmd\":[\"");
        memset(p, 'x', 131073);
        strcpy(p + 131073, "\"]}}");
        assert_int_equal(image_config_parse(big, strlen(big), &c, &err), -EBADMSG);
        assert_string_equal(err.message, "image config: config.Cmd[0]: longer than 131072 bytes");

        /* Too many variables. */
        many = malloc(4097 * 6 + 100);
        assert_non_null(many);
        p = stpcpy(many, "{\"rootfs\":{\"diff_ids\":[]},\"config\":{\"Env\":[");
        for (int i = 0; i < 4097; i++)
                p = stpcpy(p, i ? ",\"A=\"" : "\"A=\"");
        strcpy(p, "]}}");
        assert_int_equal(image_config_parse(many, strlen(many), &c, &err), -EBADMSG);
        assert_string_equal(err.message, "image config: config.Env: 4097 entries, more than 4096");

        /* Too many layers, too many bytes. */
        free(many);
        many = malloc(257 * 80 + 100);
        assert_non_null(many);
        p = stpcpy(many, "{\"rootfs\":{\"diff_ids\":[");
        for (int i = 0; i < 257; i++)
                p = stpcpy(p, i ? ",\"" DA "\"" : "\"" DA "\"");
        strcpy(p, "]}}");
        assert_int_equal(image_config_parse(many, strlen(many), &c, &err), -EBADMSG);
        assert_string_equal(err.message, "image config: rootfs.diff_ids: 257 entries, more than 256");
        assert_int_equal(image_config_parse(many, MANIFEST_MAX_SIZE + 1, &c, &err), -EBADMSG);
        assert_non_null(strstr(err.message, "more than the limit"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accept_header),
                cmocka_unit_test(test_docker_manifest),
                cmocka_unit_test(test_oci_manifest),
                cmocka_unit_test(test_media_type_from_header_or_shape),
                cmocka_unit_test(test_indexes),
                cmocka_unit_test(test_other_layer_types),
                cmocka_unit_test(test_refuse_manifest_and_index),
                cmocka_unit_test(test_refuse_media_type_mismatch),
                cmocka_unit_test(test_refuse_schema_version),
                cmocka_unit_test(test_refuse_bad_digests),
                cmocka_unit_test(test_refuse_foreign_urls),
                cmocka_unit_test(test_refuse_descriptor_fields),
                cmocka_unit_test(test_refuse_index_entries),
                cmocka_unit_test(test_limits_counts),
                cmocka_unit_test(test_limits_size),
                cmocka_unit_test(test_refuse_bad_json),
                cmocka_unit_test(test_select_hub_index),
                cmocka_unit_test(test_select_variants),
                cmocka_unit_test(test_select_defaults_and_errors),
                cmocka_unit_test(test_config_real),
                cmocka_unit_test(test_config_refusals),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
