/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Images: pull, import, list, remove (see image.h). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "digest.h"
#include "image.h"
#include "imageref.h"
#include "manifest.h"
#include "unpack-tree.h"
#include "unpack.h"

#define REF_NAME_ANNOTATION "org.opencontainers.image.ref.name"

/* Where manifests and blobs come from: a registry, or an OCI layout directory. */
struct source {
        struct registry *registry;
        int layout_fd;
        const char *what; /* for messages and the record's "source" */
};

static int read_limited(int fd, size_t max, char **ret, size_t *ret_size, const char *what, struct km_error *err) {
        int r = read_full_fd(fd, max, ret, ret_size);

        if (r == -EFBIG)
                return error_set_plain(err, r, "%s: larger than %zu bytes", what, max);
        return r < 0 ? error_set(err, r, "%s", what) : 0;
}

/*
 * A file of a layout (index.json, oci-layout, blobs/sha256/HEX): a regular
 * file below the layout, reached through no symlink, opened without blocking
 * (a FIFO in an archive must not hang the import).
 */
static int layout_open(struct source *src, const char *path, struct km_error *err) {
        int fd = unpack_open_file(src->layout_fd, path);

        if (fd == -ELOOP || fd == -EXDEV)
                return error_set_plain(err, -ELOOP, "%s: %s: a symlink on the way, not followed", src->what, path);
        if (fd == -EBADMSG)
                return error_set_plain(err, fd, "%s: %s: not a regular file", src->what, path);
        return fd >= 0 ? fd : error_set(err, fd, "%s: %s", src->what, path);
}

/* A blob of a layout: blobs/sha256/HEX. */
static int layout_blob_open(struct source *src, const char *digest, struct km_error *err) {
        char path[128];

        if (!digest_is_valid(digest))
                return error_set_plain(err, -EBADMSG, "%s: invalid digest '%s'", src->what, digest);
        snprintf(path, sizeof(path), "blobs/sha256/%s", digest + strlen(DIGEST_SHA256_PREFIX));
        return layout_open(src, path, err);
}

/* A file named by the user (an archive, a tarball): followed if a symlink, but only a regular file, never blocking. */
static int open_input(const char *file, struct km_error *err) {
        _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        int r;

        if (fd < 0)
                return error_set(err, -errno, "%s", file);
        r = fd_regular_blocking(fd);
        if (r == -EBADMSG)
                return error_set_plain(err, -EINVAL, "%s: not a regular file", file);
        if (r < 0)
                return error_set(err, r, "%s", file);
        return TAKE_FD(fd);
}

/* The manifest bytes for reference (a tag for registries; always a digest for layouts), verified. */
static int source_manifest(struct source *src, const char *reference, char **body, size_t *size, char **media_type,
                           char digest[72], struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (src->registry)
                return registry_get_manifest(src->registry, reference, body, size, media_type, digest, err);
        fd = layout_blob_open(src, reference, err);
        if (fd < 0)
                return fd;
        r = read_limited(fd, MANIFEST_MAX_SIZE, body, size, reference, err);
        if (r < 0)
                return r;
        digest_buffer(*body, *size, digest);
        if (!streq(digest, reference))
                return error_set_plain(err, -EBADMSG, "%s: manifest %s: its bytes are %s", src->what, reference,
                                       digest);
        *media_type = NULL; /* the body says */
        return 0;
}

/* Brings a blob into the store (verified by the store), unless it is there. */
static int source_blob(struct source *src, struct store *st, const struct descriptor *d, struct km_error *err) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        char buf[65536];
        ssize_t n;

        if (store_blob_exists(st, d->digest) > 0)
                return 0;
        if (src->registry)
                return registry_get_blob(src->registry, st, d->digest, d->size, err);
        in = layout_blob_open(src, d->digest, err);
        if (in < 0)
                return in;
        out = store_blob_begin(st, &tmp, err);
        if (out < 0)
                return out;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, n) != n)
                        return error_set(err, -errno, "store: copy %s", d->digest);
        if (n < 0)
                return error_set(err, -errno, "%s: read %s", src->what, d->digest);
        return store_blob_commit(st, tmp, d->digest, (int64_t)d->size, err);
}

static void iso_now(char buf[32]) {
        time_t t = time(NULL);
        struct tm tm;

        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

static uint64_t max_image_bytes(const struct image_options *o) {
        return o && o->max_image_bytes ? o->max_image_bytes : IMAGE_MAX_BYTES_DEFAULT;
}

/*
 * Unpacks the layers in order into a new root filesystem, unless the one in
 * the store for this manifest matches its record (else it is replaced).
 */
static int unpack_image(struct store *st, const char *manifest_digest, const struct manifest *m,
                        const struct image_options *o, uint64_t *ret_bytes, struct km_error *err) {
        struct unpack_limits lim = { .max_image_bytes = max_image_bytes(o) };
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int root = -EBADF;
        int r;

        *ret_bytes = 0;
        r = store_rootfs_check(st, manifest_digest, err);
        if (r != 0)
                return r < 0 ? r : 0;
        r = store_rootfs_begin(st, &tmp, &root, err);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < m->n_layers; i++) {
                _cleanup_close_ int fd = store_blob_open(st, m->layers[i].digest, err);
                struct unpack_stats stats = {};

                lim.image_bytes_before = *ret_bytes;
                r = fd < 0 ? fd : unpack_layer(fd, root, &lim, &stats, err);
                *ret_bytes += stats.bytes;
        }
        if (r < 0) {
                /* A half-applied layer is no image: nothing of it stays. */
                closep(&root);
                store_rootfs_abort(st, tmp);
                return r;
        }
        return store_rootfs_commit(st, tmp, manifest_digest, err);
}

static const char *store_dir(const struct image_options *o) {
        const char *env = getenv("KUBEMOUNT_STORE_DIR");

        return o && o->store_dir ? o->store_dir : env && *env ? env : STORE_DIR_DEFAULT;
}

/* What the manifest declares is refused before anything is fetched when it alone is over the image's limit. */
static int check_declared(struct source *src, const struct manifest *m, const struct image_options *o,
                          struct km_error *err) {
        uint64_t total = m->config.size, max = max_image_bytes(o);

        for (size_t i = 0; i < m->n_layers && total <= max; i++)
                total = m->layers[i].size > UINT64_MAX - total ? UINT64_MAX : total + m->layers[i].size;
        if (total > max)
                return error_set_plain(err, -EFBIG, "%s: its layers are over the image size limit of %llu bytes",
                                       src->what, (unsigned long long)max);
        return 0;
}

/*
 * reference (a tag or digest) to an image manifest through src, choosing
 * this platform in an index; the manifests and every blob end up in the store.
 */
static int fetch_image(struct source *src, struct store *st, const char *reference, const struct image_options *o,
                       char digest[72], struct manifest *m, struct km_error *err) {
        _cleanup_free_ char *body = NULL, *mt = NULL;
        size_t size = 0;
        int r;

        r = source_manifest(src, reference, &body, &size, &mt, digest, err);
        if (r >= 0)
                r = manifest_parse(body, size, mt, m, err);
        if (r >= 0 && m->kind == MANIFEST_INDEX) {
                const struct descriptor *d = NULL;
                char chosen[72];

                r = store_blob_put(st, digest, body, size, err);
                if (r >= 0)
                        r = manifest_select_platform(m, o->os, o->arch, o->variant, &d, err);
                if (r < 0)
                        return r;
                snprintf(chosen, sizeof(chosen), "%s", d->digest);
                manifest_done(m);
                free(TAKE_PTR(body));
                free(TAKE_PTR(mt));
                r = source_manifest(src, chosen, &body, &size, &mt, digest, err);
                if (r >= 0)
                        r = manifest_parse(body, size, mt, m, err);
                if (r >= 0 && m->kind != MANIFEST_IMAGE)
                        r = error_set_plain(err, -EBADMSG, "%s: an index inside an index", src->what);
        }
        if (r >= 0)
                r = check_declared(src, m, o, err);
        if (r >= 0)
                r = store_blob_put(st, digest, body, size, err);
        if (r >= 0)
                r = source_blob(src, st, &m->config, err);
        for (size_t i = 0; r >= 0 && i < m->n_layers; i++)
                r = source_blob(src, st, &m->layers[i], err);
        return r;
}

/* Unpacks and records the image under ref. */
static int finish(struct store *st, const char *ref, const char *digest, const struct manifest *m, const char *source,
                  const struct image_options *o, json_t **ret, struct km_error *err) {
        _cleanup_free_ char *config = NULL, *rootfs = NULL;
        struct image_config ic = {};
        size_t config_size = 0;
        uint64_t bytes = 0;
        char created[32];
        json_t *rec;
        int r;

        r = unpack_image(st, digest, m, o, &bytes, err);
        if (r >= 0)
                r = store_blob_read(st, m->config.digest, MANIFEST_MAX_SIZE, &config, &config_size, err);
        if (r >= 0)
                r = image_config_parse(config, config_size, &ic, err);
        if (r < 0)
                return r;
        rootfs = store_rootfs_path(st, digest);
        iso_now(created);
        rec = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:o, s:o, s:o, s:s?}", "ref", ref, "manifest", digest,
                        "config", m->config.digest, "rootfs", rootfs, "created", created, "source", source,
                        "entrypoint", json_from_strv(ic.entrypoint), "cmd", json_from_strv(ic.cmd), "env",
                        json_from_strv(ic.env), "working_dir", ic.working_dir);
        image_config_done(&ic);
        if (!rec || !rootfs)
                r = error_set(err, rec ? -ENOENT : -ENOMEM, "image %s: its root filesystem", ref);
        if (r >= 0)
                r = store_ref_set(st, ref, rec, err);
        if (r >= 0 && ret)
                *ret = json_incref(rec);
        json_decref(rec);
        return r;
}

int image_pull(const char *text, const struct image_options *o, json_t **ret, struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        _cleanup_(registry_freep) struct registry *reg = NULL;
        _cleanup_free_ char *canonical = NULL;
        struct image_ref ref = {};
        struct manifest m = {};
        char digest[72];
        int r;

        r = image_ref_parse(text, &ref, err);
        if (r < 0)
                return r;
        canonical = image_ref_format(&ref);
        r = canonical ? store_open(store_dir(o), &st, err) : -ENOMEM;
        if (r >= 0)
                r = registry_new(&ref, &o->registry, &reg, err);
        if (r >= 0) {
                struct source src = { reg, -EBADF, canonical };
                r = fetch_image(&src, st, ref.digest ? ref.digest : ref.tag, o, digest, &m, err);
        }
        if (r >= 0)
                r = finish(st, canonical, digest, &m, "registry", o, ret, err);
        manifest_done(&m);
        image_ref_done(&ref);
        return r;
}

/* ---- import ---------------------------------------------------------------- */

/* The layout's oci-layout file: {"imageLayoutVersion": "1.x"}. */
static int layout_check(struct source *src, struct km_error *err) {
        _cleanup_close_ int fd = layout_open(src, "oci-layout", err);
        _cleanup_free_ char *body = NULL;
        _cleanup_json_ json_t *j = NULL;
        const char *version;
        size_t size;
        int r;

        if (fd == -ENOENT)
                return error_set_plain(err, fd, "%s: no oci-layout file: not an OCI image layout", src->what);
        if (fd < 0)
                return fd;
        r = read_limited(fd, 4096, &body, &size, "oci-layout", err);
        if (r < 0)
                return r;
        j = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
        version = json_string_value(json_object_get(j, "imageLayoutVersion"));
        if (!version || !startswith(version, "1."))
                return error_set_plain(err, -EBADMSG, "%s: oci-layout: not an OCI image layout of version 1",
                                       src->what);
        return 0;
}

/* The index.json entry to import: the one named tag, or the only one; with its own name. */
static int layout_pick(struct source *src, const char *tag, char digest[72], char **ret_name, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *body = NULL;
        _cleanup_json_ json_t *index = NULL;
        json_t *entries, *e, *pick = NULL;
        size_t size, i;
        int r;

        r = layout_check(src, err);
        if (r < 0)
                return r;
        fd = layout_open(src, "index.json", err);
        if (fd < 0)
                return fd;
        r = read_limited(fd, MANIFEST_MAX_SIZE, &body, &size, "index.json", err);
        if (r < 0)
                return r;
        index = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
        entries = json_object_get(index, "manifests");
        if (!json_is_array(entries) || json_array_size(entries) == 0)
                return error_set_plain(err, -EBADMSG, "%s: index.json lists no image", src->what);
        json_array_foreach(entries, i, e) {
                const char *name =
                        json_string_value(json_object_get(json_object_get(e, "annotations"), REF_NAME_ANNOTATION));

                if (tag ? name && streq(name, tag) : json_array_size(entries) == 1)
                        pick = e;
        }
        if (!pick)
                return error_set_plain(err, -ENOENT, "%s: %s", src->what,
                                       tag ? "no image of that name in index.json"
                                           : "several images: name one (oci:DIR:NAME)");
        if (!json_is_string(json_object_get(pick, "digest")) ||
            !digest_is_valid(json_string_value(json_object_get(pick, "digest"))))
                return error_set_plain(err, -EBADMSG, "%s: index.json: invalid digest", src->what);
        snprintf(digest, 72, "%s", json_string_value(json_object_get(pick, "digest")));
        const char *name =
                json_string_value(json_object_get(json_object_get(pick, "annotations"), REF_NAME_ANNOTATION));
        *ret_name = name ? strdup(name) : NULL;
        return 0;
}

/* The layout's own name as a reference: a full one as is, a bare tag with the directory's name. */
static char *default_name(const char *dir, const char *annotation) {
        _cleanup_free_ char *copy = strdup(dir);
        char *name = NULL;

        if (!annotation || !copy)
                return NULL;
        if (strchr(annotation, '/') || strchr(annotation, ':'))
                return strdup(annotation);
        path_simplify(copy);
        return asprintf(&name, "%s:%s", path_basename(copy), annotation) < 0 ? NULL : name;
}

static int import_layout(struct store *st, int layout_fd, const char *dir, const char *tag, const char *name,
                         const char *source, const struct image_options *o, json_t **ret, struct km_error *err) {
        struct source src = { NULL, layout_fd, source };
        _cleanup_free_ char *annotated = NULL, *fallback = NULL, *canonical = NULL;
        struct image_ref ref = {};
        struct manifest m = {};
        char entry[72], digest[72];
        int r = layout_pick(&src, tag, entry, &annotated, err);

        if (r < 0)
                return r;
        if (!name && !(name = fallback = default_name(dir, annotated)))
                return error_set_plain(err, -EINVAL, "%s: the image has no name: give one", source);
        r = image_ref_parse(name, &ref, err);
        if (r >= 0 && !(canonical = image_ref_format(&ref)))
                r = -ENOMEM;
        if (r >= 0)
                r = fetch_image(&src, st, entry, o, digest, &m, err);
        /* Before anything is recorded; the blobs fetched stay unreferenced, for gc. */
        if (r >= 0)
                r = image_ref_check_pin(&ref, source, digest, entry, err);
        if (r >= 0)
                r = finish(st, canonical, digest, &m, source, o, ret, err);
        manifest_done(&m);
        image_ref_done(&ref);
        return r;
}

/* An OCI archive unpacked (confined, with limits) into a tmp dir of the store, then imported as a layout. */
static int import_archive(struct store *st, const char *file, const char *tag, const char *name, const char *source,
                          const struct image_options *o, json_t **ret, struct km_error *err) {
        /* The archive's blobs count against the image's limit too: they are on the disk meanwhile. */
        struct unpack_limits lim = { .max_image_bytes = max_image_bytes(o) };
        _cleanup_close_ int in = open_input(file, err), dir = -EBADF;
        _cleanup_free_ char *tmp = NULL;
        int r;

        if (in < 0)
                return in;
        r = store_rootfs_begin(st, &tmp, &dir, err);
        if (r >= 0)
                r = unpack_layer(in, dir, &lim, NULL, err);
        if (r >= 0)
                r = import_layout(st, dir, file, tag, name, source, o, ret, err);
        closep(&dir);
        if (tmp)
                store_rootfs_abort(st, tmp);
        return r;
}

static const char *layer_media_type(int fd) {
        unsigned char magic[4] = {};

        if (pread(fd, magic, sizeof(magic), 0) != sizeof(magic))
                return MT_OCI_LAYER_TAR;
        if (magic[0] == 0x1f && magic[1] == 0x8b)
                return MT_OCI_LAYER_GZIP;
        if (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
                return MT_OCI_LAYER_ZSTD;
        return MT_OCI_LAYER_TAR;
}

/* Stores bytes as a blob and fills its descriptor. */
static int put_json(struct store *st, json_t *doc, const char *media_type, struct descriptor *d, char **ret_body,
                    struct km_error *err) {
        _cleanup_free_ char *body = json_dumps(doc, JSON_COMPACT);
        int r;

        if (!body)
                return error_set(err, -ENOMEM, "image");
        digest_buffer(body, strlen(body), d->digest);
        d->size = strlen(body);
        d->media_type = (char *)media_type;
        r = store_blob_put(st, d->digest, body, d->size, err);
        if (r >= 0 && ret_body)
                *ret_body = TAKE_PTR(body);
        return r;
}

/* A root filesystem tarball becomes a one-layer OCI image. */
static int import_rootfs(struct store *st, const char *file, const char *name, const char *source,
                         const struct image_options *o, json_t **ret, struct km_error *err) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        _cleanup_free_ char *tmp = NULL, *canonical = NULL, *body = NULL;
        _cleanup_json_ json_t *config = NULL, *manifest = NULL;
        struct descriptor layer = {}, cfg = {}, man = {};
        struct image_ref ref = {};
        struct manifest m = {};
        struct utsname u;
        uint64_t size = 0;
        char buf[65536];
        ssize_t n;
        int r;

        if (!name)
                return error_set_plain(err, -EINVAL, "%s: a root filesystem import needs NAME[:TAG]", source);
        in = open_input(file, err);
        if (in < 0)
                return in;
        r = image_ref_parse(name, &ref, err);
        if (r < 0)
                return r;
        canonical = image_ref_format(&ref);
        image_ref_done(&ref);
        r = canonical ? digest_fd(in, layer.digest, &size) : -ENOMEM;
        if (r < 0)
                return error_set(err, r, "%s", file);
        layer.size = size;
        if (size > max_image_bytes(o))
                return error_set_plain(err, -EFBIG, "%s: over the image size limit of %llu bytes", file,
                                       (unsigned long long)max_image_bytes(o));
        layer.media_type = (char *)layer_media_type(in);
        out = store_blob_begin(st, &tmp, err);
        if (out < 0)
                return out;
        if (lseek(in, 0, SEEK_SET) < 0)
                return error_set(err, -errno, "%s", file);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, n) != n)
                        return error_set(err, -errno, "store: copy %s", file);
        if (n < 0)
                return error_set(err, -errno, "%s", file);
        r = store_blob_commit(st, tmp, layer.digest, (int64_t)layer.size, err);
        if (r < 0)
                return r;
        /* diff_ids name the uncompressed layer: for a compressed tarball it is not known here, so the
         * layer's own digest stands in (kubemount never uses diff_ids). */
        config = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[s]}}", "architecture", uname(&u) == 0 ? u.machine : "unknown",
                           "os", "linux", "config", "rootfs", "type", "layers", "diff_ids", layer.digest);
        r = config ? put_json(st, config, MT_OCI_CONFIG, &cfg, NULL, err) : -ENOMEM;
        if (r < 0)
                return r;
        manifest = json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:[{s:s, s:s, s:I}]}", "schemaVersion", 2, "mediaType",
                             MT_OCI_MANIFEST, "config", "mediaType", MT_OCI_CONFIG, "digest", cfg.digest, "size",
                             (json_int_t)cfg.size, "layers", "mediaType", layer.media_type, "digest", layer.digest,
                             "size", (json_int_t)layer.size);
        r = manifest ? put_json(st, manifest, MT_OCI_MANIFEST, &man, &body, err) : -ENOMEM;
        if (r >= 0)
                r = manifest_parse(body, man.size, MT_OCI_MANIFEST, &m, err);
        if (r >= 0) {
                /* Before anything is recorded; the blobs written stay unreferenced, for gc. */
                r = image_ref_parse(name, &ref, err);
                if (r >= 0)
                        r = image_ref_check_pin(&ref, source, man.digest, NULL, err);
                image_ref_done(&ref);
        }
        if (r >= 0)
                r = finish(st, canonical, man.digest, &m, source, o, ret, err);
        manifest_done(&m);
        return r;
}

int image_import(const char *source, const char *name, const struct image_options *o, json_t **ret,
                 struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        _cleanup_free_ char *path = NULL;
        const char *rest, *tag = NULL;
        char *colon;
        int r;

        rest = startswith(source, "oci:")           ? source + 4
               : startswith(source, "oci-archive:") ? source + 12
               : startswith(source, "rootfs:")      ? source + 7
                                                    : NULL;
        if (!rest || !*rest)
                return error_set_plain(
                        err, -EINVAL,
                        "import: '%s': expected oci:DIR[:NAME], oci-archive:FILE[:NAME] or rootfs:TARFILE", source);
        path = strdup(rest);
        if (!path)
                return -ENOMEM;
        /* As skopeo: what follows the last ':' names the image in the layout (a path has no ':' after a '/'). */
        colon = strrchr(path, ':');
        if (!startswith(source, "rootfs:") && colon && !strchr(colon, '/')) {
                *colon = '\0';
                tag = colon + 1;
        }
        r = store_open(store_dir(o), &st, err);
        if (r < 0)
                return r;
        if (startswith(source, "rootfs:"))
                return import_rootfs(st, path, name, source, o, ret, err);
        if (startswith(source, "oci-archive:"))
                return import_archive(st, path, tag, name, source, o, ret, err);
        _cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return error_set(err, -errno, "%s", path);
        return import_layout(st, dir, path, tag, name, source, o, ret, err);
}

/* ---- list, resolve, remove ------------------------------------------------------ */

int image_list(const struct image_options *o, json_t **ret, struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        int r = store_open(store_dir(o), &st, err);

        return r < 0 ? r : store_ref_list(st, ret, err);
}

/* The canonical form of a reference given by a user, and the store it lives in. */
static int open_for(const char *text, const struct image_options *o, char **ret_canonical, struct store **ret_store,
                    struct km_error *err) {
        struct image_ref ref = {};
        int r = image_ref_parse(text, &ref, err);

        if (r < 0)
                return r;
        *ret_canonical = image_ref_format(&ref);
        image_ref_done(&ref);
        return *ret_canonical ? store_open(store_dir(o), ret_store, err) : -ENOMEM;
}

/* The manifest's root filesystem unpacked again from the store's own blobs (it was missing or differed). */
static int unpack_again(struct store *st, const char *digest, const struct image_options *o, struct km_error *err) {
        _cleanup_free_ char *body = NULL;
        struct manifest m = {};
        uint64_t bytes = 0;
        size_t size = 0;
        int r;

        r = store_blob_read(st, digest, MANIFEST_MAX_SIZE, &body, &size, err);
        if (r >= 0)
                r = manifest_parse(body, size, NULL, &m, err);
        if (r >= 0 && m.kind != MANIFEST_IMAGE)
                r = error_set_plain(err, -EBADMSG, "manifest %s: not an image manifest", digest);
        if (r >= 0)
                r = unpack_image(st, digest, &m, o, &bytes, err);
        manifest_done(&m);
        return r;
}

int image_resolve(const char *text, bool pull, bool check_tree, const struct image_options *o, json_t **ret,
                  struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        _cleanup_free_ char *canonical = NULL, *rootfs = NULL;
        json_t *rec = NULL;
        int r;

        /* A look only (a routed mount): a node without a store gets none made. */
        if (!pull && access(store_dir(o), F_OK) < 0 && errno == ENOENT)
                return error_set_plain(err, -ENOENT,
                                       "image %s: not in the store (%s does not exist; kubemount pull %s)", text,
                                       store_dir(o), text);
        r = open_for(text, o, &canonical, &st, err);

        if (r >= 0 && store_ref_get(st, canonical, &rec, NULL) >= 0) {
                const char *manifest = json_string_value(json_object_get(rec, "manifest")) ?: "";
                /* Never handed out unless it matches its record: else unpacked again from the verified blobs. */
                int q = check_tree ? store_rootfs_check(st, manifest, NULL) : 1;

                if (q == 0)
                        q = unpack_again(st, manifest, o, err);
                if (q < 0 && !pull) {
                        json_decref(rec);
                        return q;
                }
                rootfs = check_tree ? store_rootfs_path(st, manifest) : store_rootfs_path_unchecked(st, manifest);
                if (rootfs) {
                        json_object_set_new(rec, "rootfs", json_string(rootfs));
                        if (!check_tree)
                                json_object_set_new(rec, "store", json_string(store_path(st)));
                        *ret = rec;
                        return 0;
                }
        }
        json_decref(rec);
        if (r < 0)
                return r;
        if (!pull)
                return error_set_plain(err, -ENOENT, "image %s: not in the store (kubemount pull %s)", canonical, text);
        store_close(TAKE_PTR(st)); /* the pull opens it again */
        return image_pull(text, o, ret, err);
}

int image_remove(const char *text, char *const *keep_rootfs, const struct image_options *o, struct km_error *err) {
        _cleanup_(store_closep) struct store *st = NULL;
        _cleanup_free_ char *canonical = NULL;
        uint64_t freed = 0;
        json_t *rec = NULL;
        int r = open_for(text, o, &canonical, &st, err);

        if (r >= 0 && (r = store_ref_get(st, canonical, &rec, err)) == -ENOENT)
                r = error_set_plain(err, -ENOENT, "image %s: not in the store", canonical);
        json_decref(rec);
        if (r >= 0)
                r = store_ref_remove(st, canonical, err);
        if (r >= 0)
                r = store_gc(st, keep_rootfs, &freed, err);
        return r < 0 ? r : (int)(freed >> 20); /* MiB freed */
}
