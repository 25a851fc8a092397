/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OCI / Docker schema 2 manifests, indexes and image configs from registry
 * bytes.  Everything is outside input: types are checked field by field,
 * digests for form, sizes and counts against limits, and each refusal names
 * the field ("manifest: layers[3].digest: not a sha256 digest").
 */
#include <ctype.h>
#include "jansson-dl.h"
#include <limits.h>
#include <strings.h>
#include <sys/utsname.h>

#include "digest.h"
#include "json-shape.h"
#include "manifest.h"

/* JSON numbers beyond 2^53 lose precision in other parsers: a size one client reads differently. */
#define DESCRIPTOR_SIZE_MAX ((json_int_t)1 << 53)
/* Real manifests and configs nest 5 levels at most; jansson itself stops at 2048. */
#define DEPTH_MAX 32
#define MEDIA_TYPE_MAX_LEN 255
#define PLATFORM_FIELD_MAX_LEN 64
#define CONFIG_LIST_MAX 4096
/* The kernel's MAX_ARG_STRLEN: no argument or variable can be longer anyway. */
#define CONFIG_STRING_MAX (128 * 1024)

const char manifest_accept[] = MT_OCI_MANIFEST ", " MT_OCI_INDEX ", " MT_DOCKER_MANIFEST ", " MT_DOCKER_LIST;

static const char *const layer_types[] = {
        MT_OCI_LAYER_TAR,
        MT_OCI_LAYER_GZIP,
        MT_OCI_LAYER_ZSTD,
        MT_DOCKER_LAYER_GZIP,
        /* Allowed only because "urls" is refused: then they are ordinary blobs of the registry. */
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
};

/* Content-Types that say nothing about the kind: some registries and proxies serve these. */
static const char *const generic_types[] = {
        "application/json",
        "application/octet-stream",
        "text/plain",
};

/* Refusals name the field ("manifest: layers[3].digest: ..."); null is absent, as Go writes nil. */
static const struct json_doc MANIFEST = { { NULL, "manifest", 0 }, -EBADMSG, "missing", true, 0 },
                             IMAGE_CONFIG = { { NULL, "image config", 0 }, -EBADMSG, "missing", true, 0 };

static bool in_list(const char *s, const char *const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (streq(s, list[i]))
                        return true;
        return false;
}

static bool is_manifest_type(const char *t) {
        return t && (streq(t, MT_OCI_MANIFEST) || streq(t, MT_DOCKER_MANIFEST));
}

static bool is_index_type(const char *t) {
        return t && (streq(t, MT_OCI_INDEX) || streq(t, MT_DOCKER_LIST));
}

/* type/subtype with printable ASCII and no blanks; what appears in messages stays readable. */
static bool media_type_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > MEDIA_TYPE_MAX_LEN || !strchr(s, '/'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] <= 0x20 || s[i] >= 0x7f)
                        return false;
        return true;
}

static bool too_deep(json_t *v, unsigned depth) {
        const char *key;
        json_t *child;
        size_t i;

        if (depth > DEPTH_MAX)
                return true;
        if (json_is_object(v)) {
                json_object_foreach(v, key, child) {
                        if (too_deep(child, depth + 1))
                                return true;
                }
        } else if (json_is_array(v)) {
                json_array_foreach(v, i, child) {
                        if (too_deep(child, depth + 1))
                                return true;
                }
        }
        return false;
}

static int load(const struct json_doc *doc, const char *body, size_t size, json_t **ret, struct km_error *err) {
        const struct json_at *at = &doc->at;
        _cleanup_(json_decrefp) json_t *root = NULL;
        char shown[JSON_ERROR_TEXT_LENGTH];
        json_error_t je;

        if (!body)
                return json_fail(err, -EBADMSG, at, "no data");
        if (size > MANIFEST_MAX_SIZE)
                return json_fail(err, -EBADMSG, at, "%zu bytes, more than the limit of %d", size, MANIFEST_MAX_SIZE);
        if (memchr(body, '\0', size))
                return json_fail(err, -EBADMSG, at, "contains a NUL byte");
        /* Duplicate keys would let two readers of the same digest see different content. */
        root = json_loadb(body, size, JSON_REJECT_DUPLICATES, &je);
        if (!root) {
                if (json_error_code(&je) == json_error_out_of_memory)
                        return error_set(err, -ENOMEM, "%s", at->key);
                return json_fail(err, -EBADMSG, at, "line %d column %d: %s", je.line, je.column,
                                 str_printable(je.text, shown, sizeof(shown)));
        }
        if (!json_is_object(root))
                return json_fail(err, -EBADMSG, at, "must be a JSON object, not %s", json_type_name(json_typeof(root)));
        if (too_deep(root, 0))
                return json_fail(err, -EBADMSG, at, "nested deeper than %d levels", DEPTH_MAX);
        *ret = TAKE_PTR(root);
        return 0;
}

static int string_get(json_t *obj, const struct json_at *at, const char *key, bool required, const char **ret,
                      struct km_error *err) {
        json_t *v;
        int r;

        r = json_want_member(obj, at, key, JSON_STRING, required, &v, err);
        if (r < 0)
                return r;
        *ret = v ? json_string_value(v) : NULL;
        return 0;
}

static int media_type_get(json_t *obj, const struct json_at *at, bool required, const char **ret,
                          struct km_error *err) {
        int r;

        r = string_get(obj, at, "mediaType", required, ret, err);
        if (r < 0)
                return r;
        if (*ret && !media_type_valid(*ret))
                return json_fail(err, -EBADMSG, JSON_AT(at, "mediaType"), "not a media type");
        return 0;
}

/* os, architecture, variant: short identifiers ("linux", "arm64", "v8"). */
static int platform_field_get(json_t *platform, const struct json_at *at, const char *key, bool required, char **ret,
                              struct km_error *err) {
        const char *s;
        size_t n;
        int r;

        r = string_get(platform, at, key, required, &s, err);
        if (r < 0 || !s)
                return r;
        n = strlen(s);
        if (n == 0 || n > PLATFORM_FIELD_MAX_LEN)
                return json_fail(err, -EBADMSG, JSON_AT(at, key), "must be 1-%d characters", PLATFORM_FIELD_MAX_LEN);
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
                        return json_fail(err, -EBADMSG, JSON_AT(at, key),
                                         "may contain only letters, digits, '.', '_', '-'");
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int platform_parse(json_t *entry, const struct json_at *at, bool required, struct descriptor *d,
                          struct km_error *err) {
        const struct json_at *p = JSON_AT(at, "platform");
        json_t *platform;
        int r;

        r = json_want_member(entry, at, "platform", JSON_OBJECT, required, &platform, err);
        if (r < 0 || !platform)
                return r;
        if ((r = platform_field_get(platform, p, "os", true, &d->os, err)) < 0 ||
            (r = platform_field_get(platform, p, "architecture", true, &d->architecture, err)) < 0 ||
            (r = platform_field_get(platform, p, "variant", false, &d->variant, err)) < 0)
                return r;
        return 0;
}

static void descriptor_done(struct descriptor *d) {
        free(d->media_type);
        free(d->os);
        free(d->architecture);
        free(d->variant);
        *d = (struct descriptor){};
}

static int descriptor_parse(json_t *obj, const struct json_at *at, struct descriptor *d, struct km_error *err) {
        const char *media_type, *digest;
        json_t *size;
        int r;

        if ((r = json_want(obj, at, JSON_OBJECT, true, err)) < 0)
                return r;
        /* THREATS 24: a descriptor pointing elsewhere would make kubemount fetch from any host. */
        if (json_object_get(obj, "urls"))
                return json_fail(err, -EBADMSG, JSON_AT(at, "urls"), "foreign URLs are not allowed");
        if ((r = media_type_get(obj, at, true, &media_type, err)) < 0 ||
            (r = string_get(obj, at, "digest", true, &digest, err)) < 0 ||
            (r = json_want_member(obj, at, "size", JSON_INTEGER, true, &size, err)) < 0)
                return r;
        if (!digest_is_valid(digest))
                return json_fail(err, -EBADMSG, JSON_AT(at, "digest"), "not a sha256 digest");
        if (json_integer_value(size) < 0 || json_integer_value(size) > DESCRIPTOR_SIZE_MAX)
                return json_fail(err, -EBADMSG, JSON_AT(at, "size"), "%" JSON_INTEGER_FORMAT " is not in 0..2^53",
                                 json_integer_value(size));
        d->media_type = strdup(media_type);
        if (!d->media_type)
                return -ENOMEM;
        strcpy(d->digest, digest);
        d->size = (uint64_t)json_integer_value(size);
        return 0;
}

/*
 * The Content-Type's media type, parameters and blanks dropped and
 * lowercased into buf; "" when absent or generic.
 */
static int content_type_parse(const char *ct, char *buf, size_t size, struct km_error *err) {
        char shown[64];
        size_t n;

        buf[0] = '\0';
        if (!ct)
                return 0;
        ct += strspn(ct, " \t");
        n = strcspn(ct, " \t;");
        if (n >= size)
                return json_fail(err, -EBADMSG, &MANIFEST.at, "Content-Type \"%s\" is not a manifest media type",
                                 str_printable(ct, shown, sizeof(shown)));
        for (size_t i = 0; i < n; i++)
                buf[i] = (char)tolower((unsigned char)ct[i]);
        buf[n] = '\0';
        if (in_list(buf, generic_types, ELEMENTSOF(generic_types))) {
                buf[0] = '\0';
                return 0;
        }
        if (*buf && !is_manifest_type(buf) && !is_index_type(buf))
                return json_fail(err, -EBADMSG, &MANIFEST.at, "Content-Type \"%s\" is not a manifest media type",
                                 str_printable(buf, shown, sizeof(shown)));
        return 0;
}

/* The declared kind, checked against the body's shape. */
static int media_type_resolve(json_t *root, const char *content_type, const char **ret, struct km_error *err) {
        const struct json_at *at = &MANIFEST.at;
        bool has_layers = json_object_get(root, "layers"), has_config = json_object_get(root, "config"),
             has_manifests = json_object_get(root, "manifests");
        char ct[MEDIA_TYPE_MAX_LEN + 1], shown[MEDIA_TYPE_MAX_LEN + 1];
        const char *body_type, *type;
        int r;

        /* THREATS 24: one digest, two meanings depending on who reads it. */
        if (has_manifests && (has_layers || has_config))
                return json_fail(err, -EBADMSG, at,
                                 "has both \"%s\" and \"manifests\": a manifest that is also an index",
                                 has_layers ? "layers" : "config");
        if ((r = content_type_parse(content_type, ct, sizeof(ct), err)) < 0 ||
            (r = media_type_get(root, at, false, &body_type, err)) < 0)
                return r;
        if (body_type && !is_manifest_type(body_type) && !is_index_type(body_type))
                return json_fail(err, -EBADMSG, JSON_AT(at, "mediaType"), "\"%s\" is not a manifest media type",
                                 str_printable(body_type, shown, sizeof(shown)));
        if (body_type && *ct && !streq(body_type, ct))
                return json_fail(err, -EBADMSG, at, "media type mismatch: Content-Type \"%s\", body \"%s\"", ct,
                                 body_type);

        type = body_type ?: *ct ? ct : NULL;
        if (!type) {
                if (has_manifests)
                        type = MT_OCI_INDEX;
                else if (has_layers || has_config)
                        type = MT_OCI_MANIFEST;
                else
                        return json_fail(err, -EBADMSG, at, "neither \"layers\" nor \"manifests\": not a manifest");
        }
        if (is_manifest_type(type) && has_manifests)
                return json_fail(err, -EBADMSG, JSON_AT(at, "manifests"), "not allowed in an image manifest");
        if (is_index_type(type) && (has_layers || has_config))
                return json_fail(err, -EBADMSG, JSON_AT(at, has_layers ? "layers" : "config"),
                                 "not allowed in an index");
        /* Back to the constant: the caller's buffer does not outlive this call. */
        *ret = is_manifest_type(type) ? (streq(type, MT_OCI_MANIFEST) ? MT_OCI_MANIFEST : MT_DOCKER_MANIFEST)
                                      : (streq(type, MT_OCI_INDEX) ? MT_OCI_INDEX : MT_DOCKER_LIST);
        return 0;
}

static int image_parse(json_t *root, struct manifest *m, struct km_error *err) {
        const struct json_at *at = &MANIFEST.at, *layers_at = JSON_AT(at, "layers");
        char shown[MEDIA_TYPE_MAX_LEN + 1];
        json_t *config, *layers, *layer;
        size_t i;
        int r;

        if ((r = json_want_member(root, at, "config", JSON_OBJECT, true, &config, err)) < 0 ||
            (r = descriptor_parse(config, JSON_AT(at, "config"), &m->config, err)) < 0)
                return r;
        if (!streq(m->config.media_type, MT_OCI_CONFIG) && !streq(m->config.media_type, MT_DOCKER_CONFIG))
                return json_fail(err, -EBADMSG, JSON_AT(JSON_AT(at, "config"), "mediaType"),
                                 "\"%s\" is not an image config (an artifact?)",
                                 str_printable(m->config.media_type, shown, sizeof(shown)));

        if ((r = json_want_member(root, at, "layers", JSON_ARRAY, true, &layers, err)) < 0)
                return r;
        if (json_array_size(layers) > MANIFEST_MAX_LAYERS)
                return json_fail(err, -EBADMSG, layers_at, "%zu entries, more than %d", json_array_size(layers),
                                 MANIFEST_MAX_LAYERS);
        m->layers = calloc(json_array_size(layers) + 1, sizeof(*m->layers));
        if (!m->layers)
                return -ENOMEM;
        json_array_foreach(layers, i, layer) {
                struct descriptor *d = &m->layers[m->n_layers];

                r = descriptor_parse(layer, JSON_AT_I(layers_at, i), d, err);
                if (r < 0) {
                        descriptor_done(d);
                        return r;
                }
                m->n_layers++;
                if (!in_list(d->media_type, layer_types, ELEMENTSOF(layer_types)))
                        return json_fail(err, -EBADMSG, JSON_AT(JSON_AT_I(layers_at, i), "mediaType"),
                                         "\"%s\" is not a supported layer type",
                                         str_printable(d->media_type, shown, sizeof(shown)));
        }
        return 0;
}

static int index_parse(json_t *root, struct manifest *m, struct km_error *err) {
        const struct json_at *entries_at = JSON_AT(&MANIFEST.at, "manifests");
        json_t *entries, *entry;
        size_t i;
        int r;

        if ((r = json_want_member(root, &MANIFEST.at, "manifests", JSON_ARRAY, true, &entries, err)) < 0)
                return r;
        if (json_array_size(entries) > MANIFEST_MAX_INDEX_ENTRIES)
                return json_fail(err, -EBADMSG, entries_at, "%zu entries, more than %d", json_array_size(entries),
                                 MANIFEST_MAX_INDEX_ENTRIES);
        m->entries = calloc(json_array_size(entries) + 1, sizeof(*m->entries));
        if (!m->entries)
                return -ENOMEM;
        json_array_foreach(entries, i, entry) {
                struct descriptor *d = &m->entries[m->n_entries];

                r = descriptor_parse(entry, JSON_AT_I(entries_at, i), d, err);
                /* Images are chosen by platform; nested indexes and artifacts may have none. */
                if (r >= 0)
                        r = platform_parse(entry, JSON_AT_I(entries_at, i), is_manifest_type(d->media_type), d, err);
                if (r < 0) {
                        descriptor_done(d);
                        return r;
                }
                m->n_entries++;
        }
        return 0;
}

int manifest_parse(const char *body, size_t size, const char *media_type, struct manifest *ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_(manifest_done) struct manifest m = {};
        const char *type = NULL;
        json_t *version;
        int r;

        if ((r = load(&MANIFEST, body, size, &root, err)) < 0 ||
            (r = media_type_resolve(root, media_type, &type, err)) < 0 ||
            (r = json_want_member(root, &MANIFEST.at, "schemaVersion", JSON_INTEGER, true, &version, err)) < 0)
                return r;
        if (json_integer_value(version) != 2)
                return json_fail(err, -EBADMSG, JSON_AT(&MANIFEST.at, "schemaVersion"),
                                 "%" JSON_INTEGER_FORMAT " is not supported (only 2)", json_integer_value(version));
        m.media_type = strdup(type);
        if (!m.media_type)
                return error_set(err, -ENOMEM, "manifest");
        m.kind = is_index_type(type) ? MANIFEST_INDEX : MANIFEST_IMAGE;
        r = m.kind == MANIFEST_INDEX ? index_parse(root, &m, err) : image_parse(root, &m, err);
        if (r < 0)
                return r == -ENOMEM ? error_set(err, r, "manifest") : r;
        *ret = m;
        m = (struct manifest){};
        return 0;
}

void manifest_done(struct manifest *m) {
        if (!m)
                return;
        descriptor_done(&m->config);
        for (size_t i = 0; i < m->n_layers; i++)
                descriptor_done(&m->layers[i]);
        free(m->layers);
        for (size_t i = 0; i < m->n_entries; i++)
                descriptor_done(&m->entries[i]);
        free(m->entries);
        free(m->media_type);
        *m = (struct manifest){};
}

/* ---- platform selection ---- */

struct platform {
        char os[PLATFORM_FIELD_MAX_LEN + 1];
        char arch[PLATFORM_FIELD_MAX_LEN + 1];
        char variant[PLATFORM_FIELD_MAX_LEN + 1]; /* "" for none */
};

/* uname -m to GOARCH (and GOARM-style variant), the names images use. */
static const struct {
        const char *machine, *arch, *variant;
        bool prefix;
} machines[] = {
        { "x86_64", "amd64", NULL, false },
        { "amd64", "amd64", NULL, false },
        { "aarch64", "arm64", NULL, false },
        { "arm64", "arm64", NULL, false },
        { "armv8l", "arm", "v7", false },
        { "armv7", "arm", "v7", true },
        { "armv6", "arm", "v6", true },
        { "armv5", "arm", "v5", true },
        { "i386", "386", NULL, false },
        { "i486", "386", NULL, false },
        { "i586", "386", NULL, false },
        { "i686", "386", NULL, false },
        { "ppc64le", "ppc64le", NULL, false },
        { "ppc64", "ppc64", NULL, false },
        { "s390x", "s390x", NULL, false },
        { "riscv64", "riscv64", NULL, false },
        { "loongarch64", "loong64", NULL, false },
        { "mips64", "mips64", NULL, false },
};

static void lower_copy(char *dst, const char *src) {
        size_t i = 0;

        for (; src && src[i] && i < PLATFORM_FIELD_MAX_LEN; i++)
                dst[i] = (char)tolower((unsigned char)src[i]);
        dst[i] = '\0';
}

/* Aliases folded ("aarch64" is "arm64", "7" is "v7"); baseline variants (arm64 v8, amd64 v1) are none. */
static void platform_normalize(struct platform *p, const char *os, const char *arch, const char *variant) {
        lower_copy(p->os, os);
        lower_copy(p->arch, arch);
        lower_copy(p->variant, variant);
        for (size_t i = 0; i < ELEMENTSOF(machines); i++)
                if (!machines[i].prefix && streq(p->arch, machines[i].machine)) {
                        lower_copy(p->arch, machines[i].arch);
                        break;
                }
        if (streq(p->arch, "armhf") || streq(p->arch, "armel")) {
                if (!p->variant[0])
                        lower_copy(p->variant, streq(p->arch, "armhf") ? "v7" : "v6");
                lower_copy(p->arch, "arm");
        }
        if (p->variant[0] >= '0' && p->variant[0] <= '9' && strlen(p->variant) < PLATFORM_FIELD_MAX_LEN) {
                memmove(p->variant + 1, p->variant, strlen(p->variant) + 1);
                p->variant[0] = 'v';
        }
        if ((streq(p->arch, "arm64") && streq(p->variant, "v8")) ||
            (streq(p->arch, "amd64") && streq(p->variant, "v1")))
                p->variant[0] = '\0';
}

static void machine_platform(struct utsname *u, const char **arch, const char **variant) {
        if (uname(u) < 0) {
                *arch = "unknown";
                return;
        }
        *arch = u->machine;
        for (size_t i = 0; i < ELEMENTSOF(machines); i++)
                if (machines[i].prefix ? startswith(u->machine, machines[i].machine)
                                       : streq(u->machine, machines[i].machine)) {
                        *arch = machines[i].arch;
                        if (!*variant)
                                *variant = machines[i].variant;
                        return;
                }
}

/* "v7" -> 7; 0 for anything else. */
static int variant_level(const char *v) {
        if (v[0] != 'v' || v[1] < '1' || v[1] > '9' || v[2])
                return 0;
        return v[1] - '0';
}

/* How well an entry fits: exact variant 100, variantless 50, an older level of the same ISA 10+level, else 0. */
static int platform_score(const struct platform *want, const struct platform *have) {
        int w, h;

        if (!streq(want->os, have->os) || !streq(want->arch, have->arch))
                return 0;
        if (streq(want->variant, have->variant))
                return 100;
        if (!have->variant[0])
                return 50;
        /* An armv7 runs v6 and v5 binaries, an amd64 v3 runs v2. */
        w = variant_level(want->variant);
        h = variant_level(have->variant);
        if ((streq(want->arch, "arm") || streq(want->arch, "amd64")) && h > 0 && h < w)
                return 10 + h;
        return 0;
}

static void platform_show(char *buf, size_t size, const char *os, const char *arch, const char *variant) {
        snprintf(buf, size, "%s/%s%s%s", os ?: "?", arch ?: "?", variant && *variant ? "/" : "",
                 variant && *variant ? variant : "");
}

int manifest_select_platform(const struct manifest *index, const char *os, const char *arch, const char *variant,
                             const struct descriptor **ret, struct km_error *err) {
        const struct descriptor *best = NULL;
        char wanted[3 * PLATFORM_FIELD_MAX_LEN + 3], avail[KM_ERROR_MAX] = "", one[3 * PLATFORM_FIELD_MAX_LEN + 3];
        struct platform want, have;
        struct utsname u;
        int best_score = 0;
        size_t used = 0;

        if (!index || index->kind != MANIFEST_INDEX)
                return error_set_plain(err, -EINVAL, "manifest: not an index");
        if (!arch)
                machine_platform(&u, &arch, &variant);
        platform_normalize(&want, os ?: "linux", arch, variant);
        /* GOARM's default: an "arm" request without a variant means v7. */
        if (streq(want.arch, "arm") && !want.variant[0])
                lower_copy(want.variant, "v7");

        for (size_t i = 0; i < index->n_entries; i++) {
                const struct descriptor *d = &index->entries[i];
                int score;

                if (!is_manifest_type(d->media_type) || !d->os || !d->architecture)
                        continue;
                platform_normalize(&have, d->os, d->architecture, d->variant);
                score = platform_score(&want, &have);
                if (score > best_score) {
                        best = d;
                        best_score = score;
                }
                platform_show(one, sizeof(one), d->os, d->architecture, d->variant);
                if (used < sizeof(avail))
                        used += snprintf(avail + used, sizeof(avail) - used, "%s%s", used ? ", " : "", one);
        }
        if (!best) {
                platform_show(wanted, sizeof(wanted), want.os, want.arch, want.variant);
                return error_set_plain(err, -ENOENT, "manifest: no image for %s in the index (available: %s)", wanted,
                                       used ? avail : "none");
        }
        *ret = best;
        return 0;
}

/* ---- image config ---- */

/* A JSON array of strings (absent or null: NULL), each checked by its kind. */
static int strv_get(json_t *obj, const struct json_at *at, const char *key, bool env, char ***ret,
                    struct km_error *err) {
        const struct json_at *name = JSON_AT(at, key);
        _cleanup_(km_strv_freep) char **v = NULL;
        json_t *array, *s;
        size_t i;
        int r;

        *ret = NULL;
        r = json_want_member(obj, at, key, JSON_ARRAY, false, &array, err);
        if (r < 0 || !array)
                return r;
        if (json_array_size(array) > CONFIG_LIST_MAX)
                return json_fail(err, -EBADMSG, name, "%zu entries, more than %d", json_array_size(array),
                                 CONFIG_LIST_MAX);
        v = calloc(json_array_size(array) + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        json_array_foreach(array, i, s) {
                const struct json_at *item = JSON_AT_I(name, i);
                const char *text = json_string_value(s);

                if ((r = json_want(s, item, JSON_STRING, true, err)) < 0)
                        return r;
                if (json_string_length(s) > CONFIG_STRING_MAX)
                        return json_fail(err, -EBADMSG, item, "longer than %d bytes", CONFIG_STRING_MAX);
                if (env && (text[0] == '=' || !strchr(text, '=')))
                        return json_fail(err, -EBADMSG, item, "not NAME=VALUE");
                if (!(v[i] = strdup(text)))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int diff_ids_get(json_t *root, char ***ret, struct km_error *err) {
        const struct json_at *rootfs_at = JSON_AT(&IMAGE_CONFIG.at, "rootfs"), *ids_at = JSON_AT(rootfs_at, "diff_ids");
        _cleanup_(km_strv_freep) char **v = NULL;
        json_t *rootfs, *ids, *id;
        const char *type;
        size_t i;
        int r;

        if ((r = json_want_member(root, &IMAGE_CONFIG.at, "rootfs", JSON_OBJECT, true, &rootfs, err)) < 0 ||
            (r = string_get(rootfs, rootfs_at, "type", false, &type, err)) < 0 ||
            (r = json_want_member(rootfs, rootfs_at, "diff_ids", JSON_ARRAY, true, &ids, err)) < 0)
                return r;
        if (type && !streq(type, "layers"))
                return json_fail(err, -EBADMSG, JSON_AT(rootfs_at, "type"), "must be \"layers\"");
        if (json_array_size(ids) > MANIFEST_MAX_LAYERS)
                return json_fail(err, -EBADMSG, ids_at, "%zu entries, more than %d", json_array_size(ids),
                                 MANIFEST_MAX_LAYERS);
        v = calloc(json_array_size(ids) + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        json_array_foreach(ids, i, id) {
                if ((r = json_want(id, JSON_AT_I(ids_at, i), JSON_STRING, true, err)) < 0)
                        return r;
                if (!digest_is_valid(json_string_value(id)))
                        return json_fail(err, -EBADMSG, JSON_AT_I(ids_at, i), "not a sha256 digest");
                if (!(v[i] = strdup(json_string_value(id))))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int config_build(json_t *root, struct image_config *ic, struct km_error *err) {
        const struct json_at *at = JSON_AT(&IMAGE_CONFIG.at, "config");
        const char *wd = NULL;
        json_t *config;
        int r;

        if ((r = json_want_member(root, &IMAGE_CONFIG.at, "config", JSON_OBJECT, false, &config, err)) < 0)
                return r;
        if (config && ((r = strv_get(config, at, "Entrypoint", false, &ic->entrypoint, err)) < 0 ||
                       (r = strv_get(config, at, "Cmd", false, &ic->cmd, err)) < 0 ||
                       (r = strv_get(config, at, "Env", true, &ic->env, err)) < 0 ||
                       (r = string_get(config, at, "WorkingDir", false, &wd, err)) < 0))
                return r;
        if (wd && strlen(wd) >= PATH_MAX)
                return json_fail(err, -EBADMSG, JSON_AT(at, "WorkingDir"), "longer than %d bytes", PATH_MAX - 1);
        if (wd && *wd && !(ic->working_dir = strdup(wd)))
                return -ENOMEM;
        return diff_ids_get(root, &ic->diff_ids, err);
}

int image_config_parse(const char *body, size_t size, struct image_config *ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_(image_config_done) struct image_config ic = {};
        int r;

        if ((r = load(&IMAGE_CONFIG, body, size, &root, err)) < 0)
                return r;
        r = config_build(root, &ic, err);
        if (r < 0)
                return r == -ENOMEM ? error_set(err, r, "image config") : r;
        *ret = ic;
        ic = (struct image_config){};
        return 0;
}

void image_config_done(struct image_config *c) {
        if (!c)
                return;
        km_strv_free(c->entrypoint);
        km_strv_free(c->cmd);
        km_strv_free(c->env);
        free(c->working_dir);
        km_strv_free(c->diff_ids);
        *c = (struct image_config){};
}
