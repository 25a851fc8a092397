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
#include "json-util.h"
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
#define WHERE_MAX 96

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

static void strv_freep(char ***p) {
        km_strv_free(*p);
}

struct ctx {
        const char *what; /* "manifest", "image config" */
        struct km_error *err;
};

static int fail(const struct ctx *c, const char *where, const char *fmt, ...) _printf_(3, 4);
static int fail(const struct ctx *c, const char *where, const char *fmt, ...) {
        char why[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (where && *where)
                return error_set_plain(c->err, -EBADMSG, "%s: %s: %s", c->what, where, why);
        return error_set_plain(c->err, -EBADMSG, "%s: %s", c->what, why);
}

/* A field's name for messages, cut to WHERE_MAX (names are short; cutting only shortens a message). */
static const char *where_printf(char buf[WHERE_MAX], const char *fmt, ...) _printf_(2, 3);
static const char *where_printf(char buf[WHERE_MAX], const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, WHERE_MAX, fmt, ap);
        va_end(ap);
        return buf;
}

/* "where.key" ("layers[3].digest"). */
static const char *field_name(char buf[WHERE_MAX], const char *where, const char *key) {
        return where_printf(buf, "%s%s%s", where, *where ? "." : "", key);
}

/*
 * obj[key] into *ret if it has type t.  Absent or null (Go's nil slices and
 * pointers) gives *ret = NULL, an error when required.
 */
static int field_get(const struct ctx *c, json_t *obj, const char *where, const char *key, json_type t, bool required,
                     json_t **ret) {
        json_t *v = json_object_get(obj, key);
        char name[WHERE_MAX];

        *ret = NULL;
        if (!v || json_is_null(v))
                return required ? fail(c, field_name(name, where, key), "missing") : 0;
        if (json_typeof(v) != t)
                return fail(c, field_name(name, where, key), "must be %s, not %s", json_type_name(t),
                            json_type_name(json_typeof(v)));
        *ret = v;
        return 0;
}

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

static int load(const struct ctx *c, const char *body, size_t size, json_t **ret) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        char shown[JSON_ERROR_TEXT_LENGTH];
        json_error_t je;

        if (!body)
                return fail(c, NULL, "no data");
        if (size > MANIFEST_MAX_SIZE)
                return fail(c, NULL, "%zu bytes, more than the limit of %d", size, MANIFEST_MAX_SIZE);
        if (memchr(body, '\0', size))
                return fail(c, NULL, "contains a NUL byte");
        /* Duplicate keys would let two readers of the same digest see different content. */
        root = json_loadb(body, size, JSON_REJECT_DUPLICATES, &je);
        if (!root) {
                if (json_error_code(&je) == json_error_out_of_memory)
                        return error_set(c->err, -ENOMEM, "%s", c->what);
                return fail(c, NULL, "line %d column %d: %s", je.line, je.column,
                            str_printable(je.text, shown, sizeof(shown)));
        }
        if (!json_is_object(root))
                return fail(c, NULL, "must be a JSON object, not %s", json_type_name(json_typeof(root)));
        if (too_deep(root, 0))
                return fail(c, NULL, "nested deeper than %d levels", DEPTH_MAX);
        *ret = TAKE_PTR(root);
        return 0;
}

static int string_get(const struct ctx *c, json_t *obj, const char *where, const char *key, bool required,
                      const char **ret) {
        json_t *v;
        int r;

        r = field_get(c, obj, where, key, JSON_STRING, required, &v);
        if (r < 0)
                return r;
        *ret = v ? json_string_value(v) : NULL;
        return 0;
}

static int media_type_get(const struct ctx *c, json_t *obj, const char *where, bool required, const char **ret) {
        char name[WHERE_MAX];
        int r;

        r = string_get(c, obj, where, "mediaType", required, ret);
        if (r < 0)
                return r;
        if (*ret && !media_type_valid(*ret))
                return fail(c, field_name(name, where, "mediaType"), "not a media type");
        return 0;
}

/* os, architecture, variant: short identifiers ("linux", "arm64", "v8"). */
static int platform_field_get(const struct ctx *c, json_t *platform, const char *where, const char *key, bool required,
                              char **ret) {
        char name[WHERE_MAX];
        const char *s;
        size_t n;
        int r;

        r = string_get(c, platform, where, key, required, &s);
        if (r < 0 || !s)
                return r;
        n = strlen(s);
        if (n == 0 || n > PLATFORM_FIELD_MAX_LEN)
                return fail(c, field_name(name, where, key), "must be 1-%d characters", PLATFORM_FIELD_MAX_LEN);
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
                        return fail(c, field_name(name, where, key), "may contain only letters, digits, '.', '_', '-'");
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int platform_parse(const struct ctx *c, json_t *entry, const char *where, bool required, struct descriptor *d) {
        char name[WHERE_MAX];
        json_t *platform;
        int r;

        r = field_get(c, entry, where, "platform", JSON_OBJECT, required, &platform);
        if (r < 0 || !platform)
                return r;
        field_name(name, where, "platform");
        if ((r = platform_field_get(c, platform, name, "os", true, &d->os)) < 0 ||
            (r = platform_field_get(c, platform, name, "architecture", true, &d->architecture)) < 0 ||
            (r = platform_field_get(c, platform, name, "variant", false, &d->variant)) < 0)
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

static int descriptor_parse(const struct ctx *c, json_t *obj, const char *where, struct descriptor *d) {
        const char *media_type, *digest;
        char name[WHERE_MAX];
        json_t *size;
        int r;

        if (!json_is_object(obj))
                return fail(c, where, "must be an object, not %s", json_type_name(json_typeof(obj)));
        /* THREATS 24: a descriptor pointing elsewhere would make kubemount fetch from any host. */
        if (json_object_get(obj, "urls"))
                return fail(c, field_name(name, where, "urls"), "foreign URLs are not allowed");
        if ((r = media_type_get(c, obj, where, true, &media_type)) < 0 ||
            (r = string_get(c, obj, where, "digest", true, &digest)) < 0 ||
            (r = field_get(c, obj, where, "size", JSON_INTEGER, true, &size)) < 0)
                return r;
        if (!digest_is_valid(digest))
                return fail(c, field_name(name, where, "digest"), "not a sha256 digest");
        if (json_integer_value(size) < 0 || json_integer_value(size) > DESCRIPTOR_SIZE_MAX)
                return fail(c, field_name(name, where, "size"), "%" JSON_INTEGER_FORMAT " is not in 0..2^53",
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
static int content_type_parse(const struct ctx *c, const char *ct, char *buf, size_t size) {
        char shown[64];
        size_t n;

        buf[0] = '\0';
        if (!ct)
                return 0;
        ct += strspn(ct, " \t");
        n = strcspn(ct, " \t;");
        if (n >= size)
                return fail(c, NULL, "Content-Type \"%s\" is not a manifest media type",
                            str_printable(ct, shown, sizeof(shown)));
        for (size_t i = 0; i < n; i++)
                buf[i] = (char)tolower((unsigned char)ct[i]);
        buf[n] = '\0';
        if (in_list(buf, generic_types, ELEMENTSOF(generic_types))) {
                buf[0] = '\0';
                return 0;
        }
        if (*buf && !is_manifest_type(buf) && !is_index_type(buf))
                return fail(c, NULL, "Content-Type \"%s\" is not a manifest media type",
                            str_printable(buf, shown, sizeof(shown)));
        return 0;
}

/* The declared kind, checked against the body's shape. */
static int media_type_resolve(const struct ctx *c, json_t *root, const char *content_type, const char **ret) {
        bool has_layers = json_object_get(root, "layers"), has_config = json_object_get(root, "config"),
             has_manifests = json_object_get(root, "manifests");
        char ct[MEDIA_TYPE_MAX_LEN + 1], shown[MEDIA_TYPE_MAX_LEN + 1];
        const char *body_type, *type;
        int r;

        /* THREATS 24: one digest, two meanings depending on who reads it. */
        if (has_manifests && (has_layers || has_config))
                return fail(c, NULL, "has both \"%s\" and \"manifests\": a manifest that is also an index",
                            has_layers ? "layers" : "config");
        if ((r = content_type_parse(c, content_type, ct, sizeof(ct))) < 0 ||
            (r = media_type_get(c, root, "", false, &body_type)) < 0)
                return r;
        if (body_type && !is_manifest_type(body_type) && !is_index_type(body_type))
                return fail(c, "mediaType", "\"%s\" is not a manifest media type",
                            str_printable(body_type, shown, sizeof(shown)));
        if (body_type && *ct && !streq(body_type, ct))
                return fail(c, NULL, "media type mismatch: Content-Type \"%s\", body \"%s\"", ct, body_type);

        type = body_type ?: *ct ? ct : NULL;
        if (!type) {
                if (has_manifests)
                        type = MT_OCI_INDEX;
                else if (has_layers || has_config)
                        type = MT_OCI_MANIFEST;
                else
                        return fail(c, NULL, "neither \"layers\" nor \"manifests\": not a manifest");
        }
        if (is_manifest_type(type) && has_manifests)
                return fail(c, "manifests", "not allowed in an image manifest");
        if (is_index_type(type) && (has_layers || has_config))
                return fail(c, has_layers ? "layers" : "config", "not allowed in an index");
        /* Back to the constant: the caller's buffer does not outlive this call. */
        *ret = is_manifest_type(type) ? (streq(type, MT_OCI_MANIFEST) ? MT_OCI_MANIFEST : MT_DOCKER_MANIFEST)
                                      : (streq(type, MT_OCI_INDEX) ? MT_OCI_INDEX : MT_DOCKER_LIST);
        return 0;
}

static int image_parse(const struct ctx *c, json_t *root, struct manifest *m) {
        char where[WHERE_MAX], name[WHERE_MAX], shown[MEDIA_TYPE_MAX_LEN + 1];
        json_t *config, *layers, *layer;
        size_t i;
        int r;

        if ((r = field_get(c, root, "", "config", JSON_OBJECT, true, &config)) < 0 ||
            (r = descriptor_parse(c, config, "config", &m->config)) < 0)
                return r;
        if (!streq(m->config.media_type, MT_OCI_CONFIG) && !streq(m->config.media_type, MT_DOCKER_CONFIG))
                return fail(c, "config.mediaType", "\"%s\" is not an image config (an artifact?)",
                            str_printable(m->config.media_type, shown, sizeof(shown)));

        if ((r = field_get(c, root, "", "layers", JSON_ARRAY, true, &layers)) < 0)
                return r;
        if (json_array_size(layers) > MANIFEST_MAX_LAYERS)
                return fail(c, "layers", "%zu entries, more than %d", json_array_size(layers), MANIFEST_MAX_LAYERS);
        m->layers = calloc(json_array_size(layers) + 1, sizeof(*m->layers));
        if (!m->layers)
                return -ENOMEM;
        json_array_foreach(layers, i, layer) {
                struct descriptor *d = &m->layers[m->n_layers];

                where_printf(where, "layers[%zu]", i);
                r = descriptor_parse(c, layer, where, d);
                if (r < 0) {
                        descriptor_done(d);
                        return r;
                }
                m->n_layers++;
                if (!in_list(d->media_type, layer_types, ELEMENTSOF(layer_types)))
                        return fail(c, field_name(name, where, "mediaType"), "\"%s\" is not a supported layer type",
                                    str_printable(d->media_type, shown, sizeof(shown)));
        }
        return 0;
}

static int index_parse(const struct ctx *c, json_t *root, struct manifest *m) {
        char where[WHERE_MAX];
        json_t *entries, *entry;
        size_t i;
        int r;

        if ((r = field_get(c, root, "", "manifests", JSON_ARRAY, true, &entries)) < 0)
                return r;
        if (json_array_size(entries) > MANIFEST_MAX_INDEX_ENTRIES)
                return fail(c, "manifests", "%zu entries, more than %d", json_array_size(entries),
                            MANIFEST_MAX_INDEX_ENTRIES);
        m->entries = calloc(json_array_size(entries) + 1, sizeof(*m->entries));
        if (!m->entries)
                return -ENOMEM;
        json_array_foreach(entries, i, entry) {
                struct descriptor *d = &m->entries[m->n_entries];

                where_printf(where, "manifests[%zu]", i);
                r = descriptor_parse(c, entry, where, d);
                /* Images are chosen by platform; nested indexes and artifacts may have none. */
                if (r >= 0)
                        r = platform_parse(c, entry, where, is_manifest_type(d->media_type), d);
                if (r < 0) {
                        descriptor_done(d);
                        return r;
                }
                m->n_entries++;
        }
        return 0;
}

int manifest_parse(const char *body, size_t size, const char *media_type, struct manifest *ret, struct km_error *err) {
        const struct ctx c = { "manifest", err };
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_(manifest_done) struct manifest m = {};
        const char *type = NULL;
        json_t *version;
        int r;

        if ((r = load(&c, body, size, &root)) < 0 || (r = media_type_resolve(&c, root, media_type, &type)) < 0 ||
            (r = field_get(&c, root, "", "schemaVersion", JSON_INTEGER, true, &version)) < 0)
                return r;
        if (json_integer_value(version) != 2)
                return fail(&c, "schemaVersion", "%" JSON_INTEGER_FORMAT " is not supported (only 2)",
                            json_integer_value(version));
        m.media_type = strdup(type);
        if (!m.media_type)
                return error_set(err, -ENOMEM, "manifest");
        m.kind = is_index_type(type) ? MANIFEST_INDEX : MANIFEST_IMAGE;
        r = m.kind == MANIFEST_INDEX ? index_parse(&c, root, &m) : image_parse(&c, root, &m);
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
static int strv_get(const struct ctx *c, json_t *obj, const char *where, const char *key, bool env, char ***ret) {
        _cleanup_(strv_freep) char **v = NULL;
        char name[WHERE_MAX], item[WHERE_MAX];
        json_t *array, *s;
        size_t i;
        int r;

        *ret = NULL;
        r = field_get(c, obj, where, key, JSON_ARRAY, false, &array);
        if (r < 0 || !array)
                return r;
        field_name(name, where, key);
        if (json_array_size(array) > CONFIG_LIST_MAX)
                return fail(c, name, "%zu entries, more than %d", json_array_size(array), CONFIG_LIST_MAX);
        v = calloc(json_array_size(array) + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        json_array_foreach(array, i, s) {
                const char *text = json_string_value(s);

                where_printf(item, "%s[%zu]", name, i);
                if (!json_is_string(s))
                        return fail(c, item, "must be a string, not %s", json_type_name(json_typeof(s)));
                if (json_string_length(s) != strlen(text))
                        return fail(c, item, "contains a NUL byte");
                if (json_string_length(s) > CONFIG_STRING_MAX)
                        return fail(c, item, "longer than %d bytes", CONFIG_STRING_MAX);
                if (env && (text[0] == '=' || !strchr(text, '=')))
                        return fail(c, item, "not NAME=VALUE");
                if (!(v[i] = strdup(text)))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int diff_ids_get(const struct ctx *c, json_t *root, char ***ret) {
        _cleanup_(strv_freep) char **v = NULL;
        json_t *rootfs, *ids, *id;
        const char *type;
        char item[WHERE_MAX];
        size_t i;
        int r;

        if ((r = field_get(c, root, "", "rootfs", JSON_OBJECT, true, &rootfs)) < 0 ||
            (r = string_get(c, rootfs, "rootfs", "type", false, &type)) < 0 ||
            (r = field_get(c, rootfs, "rootfs", "diff_ids", JSON_ARRAY, true, &ids)) < 0)
                return r;
        if (type && !streq(type, "layers"))
                return fail(c, "rootfs.type", "must be \"layers\"");
        if (json_array_size(ids) > MANIFEST_MAX_LAYERS)
                return fail(c, "rootfs.diff_ids", "%zu entries, more than %d", json_array_size(ids),
                            MANIFEST_MAX_LAYERS);
        v = calloc(json_array_size(ids) + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        json_array_foreach(ids, i, id) {
                where_printf(item, "rootfs.diff_ids[%zu]", i);
                if (!json_is_string(id))
                        return fail(c, item, "must be a string, not %s", json_type_name(json_typeof(id)));
                if (!digest_is_valid(json_string_value(id)))
                        return fail(c, item, "not a sha256 digest");
                if (!(v[i] = strdup(json_string_value(id))))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int config_build(const struct ctx *c, json_t *root, struct image_config *ic) {
        const char *wd = NULL;
        json_t *config;
        int r;

        if ((r = field_get(c, root, "", "config", JSON_OBJECT, false, &config)) < 0)
                return r;
        if (config && ((r = strv_get(c, config, "config", "Entrypoint", false, &ic->entrypoint)) < 0 ||
                       (r = strv_get(c, config, "config", "Cmd", false, &ic->cmd)) < 0 ||
                       (r = strv_get(c, config, "config", "Env", true, &ic->env)) < 0 ||
                       (r = string_get(c, config, "config", "WorkingDir", false, &wd)) < 0))
                return r;
        if (wd && strlen(wd) >= PATH_MAX)
                return fail(c, "config.WorkingDir", "longer than %d bytes", PATH_MAX - 1);
        if (wd && *wd && !(ic->working_dir = strdup(wd)))
                return -ENOMEM;
        return diff_ids_get(c, root, &ic->diff_ids);
}

int image_config_parse(const char *body, size_t size, struct image_config *ret, struct km_error *err) {
        const struct ctx c = { "image config", err };
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_(image_config_done) struct image_config ic = {};
        int r;

        if ((r = load(&c, body, size, &root)) < 0)
                return r;
        r = config_build(&c, root, &ic);
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
