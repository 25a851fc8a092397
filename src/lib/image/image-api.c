/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public image calls (kubemount.h): options, and each call run in the host's mount namespace. */
#include "jansson-dl.h"

#include "image.h"
#include "image-resolve.h"

struct km_image_options {
        char *store_dir, *certs_dir, *os, *arch, *variant;
        char **insecure, **auth_files;
        size_t n_insecure, n_auth_files;
        int progress_fd;
        uint64_t max_image_bytes;
        bool no_pull; /* resolving a VCS image: the store's or nothing */
};

KM_EXPORT struct km_image_options *km_image_options_new(void) {
        struct km_image_options *o = calloc(1, sizeof(*o));

        if (o)
                o->progress_fd = -1;
        return o;
}

KM_EXPORT void km_image_options_free(struct km_image_options *o) {
        if (!o)
                return;
        free(o->store_dir);
        free(o->certs_dir);
        free(o->os);
        free(o->arch);
        free(o->variant);
        km_strv_free(o->insecure);
        km_strv_free(o->auth_files);
        free(o);
}

KM_EXPORT int km_image_options_set_store_dir(struct km_image_options *o, const char *dir) {
        _cleanup_free_ char *abs = dir ? path_absolute(dir) : NULL;
        return dir && !abs ? -ENOMEM : free_and_strdup(&o->store_dir, abs);
}
KM_EXPORT int km_image_options_add_insecure_registry(struct km_image_options *o, const char *host_port) {
        return !host_port || !*host_port || strchr(host_port, '/')
                       ? -EINVAL
                       : strv_append(&o->insecure, &o->n_insecure, host_port);
}
KM_EXPORT int km_image_options_set_certs_dir(struct km_image_options *o, const char *dir) {
        return free_and_strdup(&o->certs_dir, dir);
}
KM_EXPORT int km_image_options_add_auth_file(struct km_image_options *o, const char *path) {
        return strv_append(&o->auth_files, &o->n_auth_files, path);
}
KM_EXPORT void km_image_options_set_progress_fd(struct km_image_options *o, int fd) {
        o->progress_fd = fd;
}
KM_EXPORT void km_image_options_set_max_image_size(struct km_image_options *o, uint64_t bytes) {
        o->max_image_bytes = bytes;
}
KM_EXPORT void km_image_options_set_pull(struct km_image_options *o, bool pull) {
        o->no_pull = !pull;
}

KM_EXPORT int km_image_options_set_platform(struct km_image_options *o, const char *platform) {
        _cleanup_free_ char *copy = platform ? strdup(platform) : NULL;
        char *save = NULL, *os, *arch, *variant;

        if (!copy || !(os = strtok_r(copy, "/", &save)) || !(arch = strtok_r(NULL, "/", &save)))
                return -EINVAL;
        variant = strtok_r(NULL, "/", &save);
        if (strtok_r(NULL, "/", &save))
                return -EINVAL;
        return free_and_strdup(&o->os, os) ?: free_and_strdup(&o->arch, arch) ?: free_and_strdup(&o->variant, variant);
}

/* The internal options a call needs, borrowing from o (NULL: all defaults). */
static struct image_options internal(const struct km_image_options *o) {
        struct image_options io = { .registry = { .progress_fd = -1 } };

        if (o) {
                io.store_dir = o->store_dir;
                io.max_image_bytes = o->max_image_bytes;
                io.registry.insecure = o->insecure;
                io.registry.certs_dir = o->certs_dir;
                io.registry.auth_files = o->auth_files;
                io.registry.progress_fd = o->progress_fd;
                io.os = o->os;
                io.arch = o->arch;
                io.variant = o->variant;
        }
        return io;
}

enum op { OP_PULL, OP_IMPORT, OP_LIST, OP_REMOVE, OP_RESOLVE, OP_RESOLVE_STORED };

struct call {
        enum op op;
        const struct km_image_options *o;
        const char *a, *b;
        char *const *keep;
        bool unchecked; /* OP_RESOLVE*: the tree is the agent's to check */
        json_t *result;
};

static int call_in_host(void *userdata, struct km_error *err) {
        struct call *c = userdata;
        struct image_options io = internal(c->o);

        switch (c->op) {
        case OP_PULL:
                return image_pull(c->a, &io, &c->result, err);
        case OP_IMPORT:
                return image_import(c->a, c->b, &io, &c->result, err);
        case OP_LIST:
                return image_list(&io, &c->result, err);
        case OP_REMOVE:
                return image_remove(c->a, c->keep, &io, err);
        case OP_RESOLVE:
        case OP_RESOLVE_STORED:
                return image_resolve(c->a, c->op == OP_RESOLVE && !(c->o && c->o->no_pull), !c->unchecked, &io,
                                     &c->result, err);
        }
        return -EINVAL;
}

/* Runs the call in the host mount namespace (where the store is) and hands back its JSON. */
static int run_call(const struct km_host *h, struct call *c, char **json, struct km_error *err) {
        int r = jansson_require(err);

        if (r < 0)
                return r;
        r = km_host_run(h, call_in_host, c, err);

        if (r >= 0 && json && c->result && !(*json = json_dumps(c->result, JSON_INDENT(2) | JSON_SORT_KEYS)))
                r = -ENOMEM;
        json_decref(c->result);
        return r;
}

KM_EXPORT int km_image_pull(const struct km_host *h, const struct km_image_options *o, const char *ref, char **json,
                            struct km_error *err) {
        struct call c = { OP_PULL, o, ref };
        return run_call(h, &c, json, err);
}

KM_EXPORT int km_image_import(const struct km_host *h, const struct km_image_options *o, const char *source,
                              const char *name, char **json, struct km_error *err) {
        struct call c = { OP_IMPORT, o, source, name };
        return run_call(h, &c, json, err);
}

KM_EXPORT int km_image_list(const struct km_host *h, const struct km_image_options *o, char **json,
                            struct km_error *err) {
        struct call c = { OP_LIST, o };
        int r = jansson_require(err);
        json_t *doc;

        if (r < 0)
                return r;
        r = km_host_run(h, call_in_host, &c, err);
        doc = r >= 0 ? json_pack("{s:O}", "images", c.result) : NULL;

        if (r >= 0 && (!doc || !(*json = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS))))
                r = -ENOMEM;
        json_decref(doc);
        json_decref(c.result);
        return r;
}

KM_EXPORT int km_image_remove(const struct km_host *h, const struct km_image_options *o, const char *ref,
                              char *const *keep_rootfs, struct km_error *err) {
        struct call c = { OP_REMOVE, o, ref, NULL, keep_rootfs };
        return run_call(h, &c, NULL, err);
}

int image_resolve_for_vcs(const struct km_host *h, const struct km_image_options *o, const char *ref, bool pull,
                          bool check_tree, json_t **ret, struct km_error *err) {
        struct call c = { pull ? OP_RESOLVE : OP_RESOLVE_STORED, o, ref, .unchecked = !check_tree };
        int r = km_host_run(h, call_in_host, &c, err);

        if (r >= 0)
                *ret = c.result;
        else
                json_decref(c.result);
        return r;
}
