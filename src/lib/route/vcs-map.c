/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The filesystem type -> VCS image table and its sources (see vcs-map.h). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "imageref.h"
#include "json-shape.h"
#include "mount-spec.h"
#include "options.h"
#include "syscalls.h"
#include "vcs-map.h"

#define TYPE_MAX_LEN 64
#define CONTAINER_OPTION_SUFFIX "_mount_container"

/*
 * The images of images/, as `kubemount image import oci:build/images/NAME` names them.
 * ext2/3/4, xfs and block-tools are the tools of the multi-call form (vcs-tools.h).
 * xfs is the host's: the kernel wants CAP_SYS_ADMIN of the host's user namespace for
 * mkfs.xfs's BLKBSZSET and for xfs_growfs (XFS_IOC_FSGROWFSDATA), which no user
 * namespace of a container gives, and a privileged container of a mutable tag would
 * make whoever pushes it host root.  A root-owned vcs.d entry opts in to a privileged
 * image pinned by digest (docs/images.md).
 */
static const struct {
        const char *type, *image;
        enum vcs_policy policy;
} defaults[] = {
        { "block-tools", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "ceph", "rbd:latest", VCS_POLICY_AUTO },
        { "cifs", "cifs:latest", VCS_POLICY_AUTO },
        { "ext2", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "ext3", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "ext4", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "fuse.bindfs", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "fuse.squashfuse", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "fuse.sshfs", "fuse-tools:latest", VCS_POLICY_AUTO },
        { "glusterfs", "glusterfs:latest", VCS_POLICY_AUTO },
        { "iscsi", NULL, VCS_POLICY_HOST },
        { "nfs", "nfs:latest", VCS_POLICY_AUTO },
        { "nfs4", "nfs:latest", VCS_POLICY_AUTO },
        { "smb3", "cifs:latest", VCS_POLICY_AUTO },
        { "xfs", NULL, VCS_POLICY_HOST },
};

const char *vcs_policy_to_string(enum vcs_policy p) {
        switch (p) {
        case VCS_POLICY_HOST:
                return "host";
        case VCS_POLICY_CONTAINER:
                return "container";
        default:
                return "auto";
        }
}

static int policy_from_string(const char *s, enum vcs_policy *ret) {
        for (enum vcs_policy p = VCS_POLICY_AUTO; p <= VCS_POLICY_CONTAINER; p++)
                if (streq(s, vcs_policy_to_string(p))) {
                        *ret = p;
                        return 0;
                }
        return -EINVAL;
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* Why a filesystem type is refused, or NULL: what mount -t takes, [A-Za-z0-9][A-Za-z0-9._+-]*. */
static const char *type_why(const char *t) {
        if (!*t)
                return "type is empty";
        if (has_control(t))
                return "type contains a control character";
        if (strlen(t) > TYPE_MAX_LEN)
                return "type is longer than 64 characters";
        if (strstr(t, ".."))
                return "type contains '..'";
        if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z') || (t[0] >= '0' && t[0] <= '9')))
                return "type must start with a letter or digit";
        if (t[strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-")])
                return "type may hold only letters, digits and . _ + -";
        return NULL;
}

/* Why an image reference is refused (into err), or 0. */
/* A valid reference; one of a privileged entry (host root for whoever controls the image) pinned by digest. */
static int check_image(const char *ref, bool privileged, const char *place, struct km_error *err) {
        struct image_ref parsed = {};
        bool pinned;
        int r;

        if (!*ref)
                return error_set_plain(err, -EINVAL, "%s: image reference is empty", place);
        if (has_control(ref))
                return error_set_plain(err, -EINVAL, "%s: image reference contains a control character", place);
        r = image_ref_parse(ref, &parsed, err);
        pinned = parsed.digest;
        image_ref_done(&parsed);
        if (r < 0)
                return error_wrap(err, -EINVAL, "%s", place);
        if (privileged && !pinned)
                return error_set_plain(err, -EINVAL,
                                       "%s: a privileged entry must pin its image by digest (NAME@sha256:...)", place);
        return 0;
}

static void entry_done(struct vcs_entry *e) {
        free(e->type);
        free(e->options);
        free(e->image);
        free(e->source);
        *e = (struct vcs_entry){};
}

/* One source's entries before they are taken: each with the place it came from, for duplicates. */
struct batch {
        struct vcs_entry *entries;
        char **places;
        size_t n;
        bool no_privileged; /* a ConfigMap's: whoever may edit one must not get host root on every node */
        char **skipped;     /* the warnings of entries skipped for that */
        size_t n_skipped;
};

static void batch_done(struct batch *b) {
        for (size_t i = 0; i < b->n; i++) {
                entry_done(&b->entries[i]);
                free(b->places[i]);
        }
        free(b->entries);
        free(b->places);
        km_strv_free(b->skipped);
        *b = (struct batch){};
}

static int batch_add(struct batch *b, const char *type, const char *image, enum vcs_policy policy, int daemon,
                     const char *options, bool privileged, const char *place, struct km_error *err) {
        char shown[TYPE_MAX_LEN + 16];
        const char *why = type_why(type);
        struct vcs_entry *e;
        char **p;
        int r;

        if (why)
                return error_set_plain(err, -EINVAL, "%s: %s (\"%s\")", place, why,
                                       str_printable(type, shown, sizeof(shown)));
        for (size_t i = 0; i < b->n; i++)
                if (streq(b->entries[i].type, type))
                        return error_set_plain(err, -EINVAL, "%s: type %s is mapped twice in one source (also at %s)",
                                               place, type, b->places[i]);
        if (b->n >= VCS_SOURCE_ENTRIES_MAX)
                return error_set_plain(err, -E2BIG, "%s: more than %d types in one source", place,
                                       VCS_SOURCE_ENTRIES_MAX);
        if (image && (r = check_image(image, false, place, err)) < 0)
                return r;
        if (!image && policy != VCS_POLICY_HOST)
                return error_set_plain(err, -EINVAL, "%s: an image is required unless the policy is host", place);
        if (daemon == 0 && fstype_keeps_daemon(type))
                return error_set_plain(err, -EINVAL, "%s: daemon cannot be false: the %s client keeps running", place,
                                       type);
        if (options && options_validate(options, &why) < 0)
                return error_set_plain(err, -EINVAL, "%s: options: %s", place, why);

        e = reallocarray(b->entries, b->n + 1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        b->entries = e;
        p = reallocarray(b->places, b->n + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        b->places = p;
        e = &b->entries[b->n];
        *e = (struct vcs_entry){
                .type = strdup(type),
                .image = image ? strdup(image) : NULL,
                .policy = policy,
                .daemon = daemon > 0 || fstype_keeps_daemon(type),
                .options = options && *options ? strdup(options) : NULL,
                .privileged = privileged,
        };
        b->places[b->n] = strdup(place);
        b->n++;
        if (!e->type || (image && !e->image) || (options && *options && !e->options) || !b->places[b->n - 1])
                return -ENOMEM;
        return 0;
}

static int entry_compare(const void *a, const void *b) {
        return strcmp(((const struct vcs_entry *)a)->type, ((const struct vcs_entry *)b)->type);
}

/* Takes every entry of b into m, over what a lower source said of the same type. */
static int map_take(struct vcs_map *m, struct batch *b, const char *source) {
        struct vcs_entry *grown;

        grown = reallocarray(m->entries, m->n + b->n ?: 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        m->entries = grown;
        for (size_t i = 0; i < b->n; i++) {
                struct vcs_entry *e = &b->entries[i], *old = NULL;

                e->source = strdup(source);
                if (!e->source)
                        return -ENOMEM;
                for (size_t k = 0; k < m->n && !old; k++)
                        if (streq(m->entries[k].type, e->type))
                                old = &m->entries[k];
                if (old)
                        entry_done(old);
                else
                        old = &m->entries[m->n++];
                *old = *e;
                *e = (struct vcs_entry){};
        }
        qsort(m->entries, m->n, sizeof(*m->entries), entry_compare);
        return 0;
}

static int map_warn(struct vcs_map *m, const char *message) {
        int r = strv_append(&m->warnings, &m->n_warnings, message);

        if (r < 0)
                return r;
        /* File names are outside input too: one line each, whatever they hold. */
        for (char *c = m->warnings[m->n_warnings - 1]; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        *c = '?';
        return 0;
}

struct vcs_map *vcs_map_new(void) {
        return calloc(1, sizeof(struct vcs_map));
}

void vcs_map_free(struct vcs_map *m) {
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++)
                entry_done(&m->entries[i]);
        free(m->entries);
        km_strv_free(m->warnings);
        free(m);
}

const struct vcs_entry *vcs_map_find(const struct vcs_map *m, const char *type) {
        const struct vcs_entry key = { .type = (char *)type };

        return m && m->n ? bsearch(&key, m->entries, m->n, sizeof(key), entry_compare) : NULL;
}

int vcs_map_images(const struct vcs_map *m, char *const *types, char ***ret, struct km_error *err) {
        _cleanup_(km_strv_freep) char **refs = NULL;
        size_t n = 0;

        for (char *const *t = types; t && *t; t++)
                if (!vcs_map_find(m, *t))
                        return error_set_plain(err, -EINVAL, "no mapping for type '%s' (see kubemount vcs list)", *t);
        if (!(refs = calloc(1, sizeof(char *))))
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                const char *image = m->entries[i].image;
                bool wanted = !types || !*types;

                for (char *const *t = types; t && *t && !wanted; t++)
                        wanted = streq(*t, m->entries[i].type);
                for (size_t k = 0; wanted && image && k < n; k++)
                        wanted = !streq(refs[k], image);
                if (wanted && image && strv_append(&refs, &n, image) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(refs);
        return 0;
}

/* The entries of one vcs.d document into b. */
static int parse_json(struct batch *b, json_t *doc, const struct json_doc *d, struct km_error *err) {
        const struct json_at *list_at = JSON_AT(&d->at, "mappings");
        json_t *list, *item;
        size_t i;
        int r;

        if (!json_is_object(doc))
                return json_fail(err, -EINVAL, &d->at, "must be an object, not %s", json_type_name(json_typeof(doc)));
        r = json_want_member(doc, &d->at, "mappings", JSON_ARRAY, true, &list, err);
        if (r < 0)
                return r;
        r = json_want_array(list, list_at, VCS_SOURCE_ENTRIES_MAX, true, err);
        if (r < 0)
                return r;
        json_array_foreach(list, i, item) {
                const struct json_at *at = JSON_AT_I(list_at, i), *types_at = JSON_AT(at, "types");
                const char *image = NULL, *policy_text = NULL, *options = NULL, *key;
                enum vcs_policy policy = VCS_POLICY_AUTO;
                json_t *types, *t, *unused;
                bool daemon_value = false, privileged = false;
                int daemon = -1;
                size_t k;

                r = json_want(item, at, JSON_OBJECT, true, err);
                if (r < 0)
                        return r;
                json_object_foreach(item, key, unused) {
                        if (!streq(key, "types") && !streq(key, "image") && !streq(key, "policy") &&
                            !streq(key, "daemon") && !streq(key, "options") && !streq(key, "privileged"))
                                return json_fail(err, -EINVAL, at,
                                                 "unknown member \"%s\" (types, image, policy, daemon, options, "
                                                 "privileged)",
                                                 has_control(key) ? "?" : key);
                }
                if ((r = json_want_member(item, at, "types", JSON_ARRAY, true, &types, err)) < 0 ||
                    (r = json_want_array(types, types_at, VCS_SOURCE_ENTRIES_MAX, true, err)) < 0 ||
                    (r = json_want_str(JSON_FIELD(item, at, "image"), false, &image, err)) < 0 ||
                    (r = json_want_str(JSON_FIELD(item, at, "policy"), false, &policy_text, err)) < 0 ||
                    (r = json_want_str(JSON_FIELD(item, at, "options"), false, &options, err)) < 0 ||
                    (r = json_want_bool(JSON_FIELD(item, at, "privileged"), &privileged, err)) < 0)
                        return r;
                if (privileged && b->no_privileged) {
                        char place[512], line[sizeof(place) + 160];

                        json_at_format(at, place, sizeof(place));
                        snprintf(line, sizeof(line),
                                 "%s: \"privileged\" is taken only from /etc/kubemount/vcs.d and the command line, "
                                 "never from a ConfigMap; entry ignored",
                                 place);
                        if (strv_append(&b->skipped, &b->n_skipped, line) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (json_object_get(item, "daemon")) {
                        r = json_want_bool(JSON_FIELD(item, at, "daemon"), &daemon_value, err);
                        if (r < 0)
                                return r;
                        daemon = daemon_value;
                }
                if (policy_text && policy_from_string(policy_text, &policy) < 0)
                        return json_fail(err, -EINVAL, JSON_AT(at, "policy"),
                                         "unknown policy \"%s\" (auto, host or container)",
                                         has_control(policy_text) ? "?" : policy_text);
                if (json_array_size(types) == 0)
                        return json_fail(err, -EINVAL, types_at, "names no type");
                if (image) {
                        char place[512];

                        json_at_format(JSON_AT(at, "image"), place, sizeof(place));
                        r = check_image(image, privileged, place, err);
                        if (r < 0)
                                return r;
                }
                json_array_foreach(types, k, t) {
                        const struct json_at *t_at = JSON_AT_I(types_at, k);
                        const char *type;
                        char place[512];

                        r = json_want_str(t, t_at, true, &type, err);
                        if (r < 0)
                                return r;
                        json_at_format(t_at, place, sizeof(place));
                        r = batch_add(b, type, image, policy, daemon, options, privileged, place, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int vcs_map_add_json(struct vcs_map *m, json_t *doc, const char *source, struct km_error *err) {
        const struct json_doc d = { { NULL, source, 0 }, -EINVAL, "is required", false, 4096 };
        _cleanup_(batch_done) struct batch b = {};
        int r;

        r = parse_json(&b, doc, &d, err);
        return r < 0 ? r : map_take(m, &b, source);
}

bool vcs_map_is_container_option(const char *arg) {
        const char *eq;
        size_t n, suffix = strlen(CONTAINER_OPTION_SUFFIX);

        if (!startswith(arg, "--"))
                return false;
        eq = strchrnul(arg, '=');
        n = (size_t)(eq - arg);
        return n > 2 + suffix && strncmp(eq - suffix, CONTAINER_OPTION_SUFFIX, suffix) == 0;
}

/* One raw command-line value into b: "TYPE=REF", or "--TYPE_mount_container=REF". */
static int parse_option(struct batch *b, const char *raw, struct km_error *err) {
        _cleanup_free_ char *type = NULL;
        char place[160], shown[128];
        const char *eq, *start = raw;
        bool design = vcs_map_is_container_option(raw);

        if (design) {
                snprintf(place, sizeof(place), "command line: %s", str_printable(raw, shown, sizeof(shown)));
                if (!strchr(raw, '='))
                        return error_set_plain(err, -EINVAL, "%s: needs =REF", place);
                start = raw + 2;
                eq = strchr(raw, '=') - strlen(CONTAINER_OPTION_SUFFIX);
        } else {
                snprintf(place, sizeof(place), "command line: --vcs-image %s",
                         str_printable(raw, shown, sizeof(shown)));
                eq = strchr(raw, '=');
                if (!eq)
                        return error_set_plain(err, -EINVAL, "%s: expected TYPE=REF", place);
        }
        type = strndup(start, (size_t)(eq - start));
        if (!type)
                return -ENOMEM;
        return batch_add(b, type, strchr(raw, '=') + 1, VCS_POLICY_CONTAINER, -1, NULL, false, place, err);
}

/* A small regular file dirfd/name, never through a symlink; a trailing newline is dropped. */
static int read_key(int dirfd, const char *name, char **ret, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return 0;
                if (r == -ELOOP || r == -ENXIO)
                        return error_set_plain(err, -EINVAL, "%s: not a regular file (symlinks are not followed)",
                                               name);
                return error_set(err, r, "%s", name);
        }
        if (fd_regular_blocking(fd) < 0)
                return error_set_plain(err, -EINVAL, "%s: not a regular file", name);
        r = read_full_fd(fd, VCS_KEY_MAX, &buf, &size);
        if (r == -EFBIG)
                return error_set_plain(err, -E2BIG, "%s: larger than %d bytes", name, VCS_KEY_MAX);
        if (r < 0)
                return error_set(err, r, "%s", name);
        if (memchr(buf, '\0', size))
                return error_set_plain(err, -EINVAL, "%s: contains a NUL byte", name);
        if (size > 0 && buf[size - 1] == '\n')
                buf[size - 1] = '\0';
        *ret = TAKE_PTR(buf);
        return 1;
}

/*
 * The kubelet updates a ConfigMap volume by pointing DIR/..data at a new
 * directory: opened once (beneath DIR), every key is read from the same
 * version.  A directory without ..data (a plain one) is read as it is.
 */
static int open_configmap(const char *dir, struct km_error *err) {
        _cleanup_close_ int dfd = -EBADF;
        int fd;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_set(err, -errno, "cannot open");
        fd = sys_openat2(dfd, "..data", O_RDONLY | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
        if (fd == -ENOSYS) {
                fd = openat(dfd, "..data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        fd = -errno;
        }
        if (fd >= 0)
                return fd;
        if (fd == -ENOENT)
                return TAKE_FD(dfd);
        if (fd == -EXDEV || fd == -ELOOP)
                return error_set_plain(err, -EINVAL, "..data: leads out of the directory");
        return error_set(err, fd, "..data");
}

static int parse_configmap(struct batch *b, const char *dir, const char *source, struct km_error *err) {
        _cleanup_free_ char *plugin = NULL, *image = NULL, *doc_name = NULL;
        _cleanup_(json_decrefp) json_t *doc = NULL;
        _cleanup_close_ int fd = -EBADF;
        char place[PATH_MAX + 64];
        int r, has_plugin, has_image;

        fd = open_configmap(dir, err);
        if (fd < 0)
                return fd;
        if ((has_plugin = read_key(fd, "volume-plugin", &plugin, err)) < 0 ||
            (has_image = read_key(fd, "docker-container", &image, err)) < 0)
                return has_plugin < 0 ? has_plugin : has_image;
        if (has_plugin != has_image)
                return error_set_plain(err, -EINVAL, "%s without %s", has_plugin ? "volume-plugin" : "docker-container",
                                       has_plugin ? "docker-container" : "volume-plugin");
        if (has_plugin) {
                snprintf(place, sizeof(place), "%s: volume-plugin", source);
                r = batch_add(b, plugin, image, VCS_POLICY_AUTO, -1, NULL, false, place, err);
                if (r < 0)
                        return r;
        }
        r = read_json_file(fd, "mappings", &doc, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (asprintf(&doc_name, "%s: mappings", source) < 0)
                return -ENOMEM;
        return parse_json(b, doc,
                          &(const struct json_doc){ { NULL, doc_name, 0 }, -EINVAL, "is required", false, 4096 }, err);
}

static int name_compare(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* vcs.d's *.json names, sorted; a missing directory has none. */
static int list_dir(int dfd, char ***ret, size_t *ret_n, struct km_error *err) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(km_strv_freep) char **names = NULL;
        struct dirent *de;
        size_t n = 0;
        int fd;

        fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return error_set(err, -errno, "dup");
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return error_set(err, -errno, "opendir");
        }
        while ((errno = 0, de = readdir(d))) {
                size_t len = strlen(de->d_name);
                char **grown;

                if (len <= 5 || !streq(de->d_name + len - 5, ".json") || de->d_name[0] == '.')
                        continue;
                if (n >= VCS_DIR_FILES_MAX)
                        return error_set_plain(err, -E2BIG, "more than %d *.json files", VCS_DIR_FILES_MAX);
                grown = reallocarray(names, n + 2, sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                names = grown;
                names[n] = strdup(de->d_name);
                names[++n] = NULL;
                if (!names[n - 1])
                        return -ENOMEM;
        }
        if (errno)
                return error_set(err, -errno, "readdir");
        if (n)
                qsort(names, n, sizeof(*names), name_compare);
        *ret = TAKE_PTR(names);
        *ret_n = n;
        return 0;
}

/* A source that failed: its error as a warning, the source dropped. */
static int warn_dropped(struct vcs_map *m, int r, const struct km_error *e, const char *source) {
        char line[sizeof(e->message) + PATH_MAX + 64], shown[PATH_MAX];

        if (r == -ENOMEM)
                return r;
        /* Messages show control characters as '?': so must the comparison. */
        if (startswith(e->message, str_printable(source, shown, sizeof(shown))))
                snprintf(line, sizeof(line), "%s; ignored", e->message);
        else
                snprintf(line, sizeof(line), "%s: %s; ignored", source, e->message);
        return map_warn(m, line);
}

static int load_config_dir(struct vcs_map *m, const char *dir, bool named) {
        _cleanup_(km_strv_freep) char **names = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct km_error e = {};
        size_t n = 0;
        int r;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = error_set(&e, -errno, "cannot open");
                return r == -ENOENT && !named ? 0 : warn_dropped(m, r, &e, dir);
        }
        r = list_dir(dfd, &names, &n, &e);
        if (r < 0)
                return warn_dropped(m, r, &e, dir);
        for (size_t i = 0; i < n; i++) {
                _cleanup_(json_decrefp) json_t *doc = NULL;
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s", streq(dir, "/") ? "" : dir, names[i]) < 0)
                        return -ENOMEM;
                e = (struct km_error){};
                r = read_json_file(dfd, names[i], &doc, &e);
                if (r >= 0)
                        r = vcs_map_add_json(m, doc, path, &e);
                if (r < 0 && (r = warn_dropped(m, r, &e, path)) < 0)
                        return r;
        }
        return 0;
}

void vcs_map_sources_from_env(struct vcs_map_sources *s) {
        const char *dir = getenv("KUBEMOUNT_VCS_DIR");
        const char *cm = getenv("KUBEMOUNT_VCS_CONFIGMAP");

        if (!s->configmap_dir && cm && *cm)
                s->configmap_dir = cm;
        if (!s->config_dir) {
                s->config_dir_named = dir && *dir;
                s->config_dir = s->config_dir_named ? dir : VCS_DIR_DEFAULT;
        }
}

int vcs_map_load(const struct vcs_map_sources *s, struct vcs_map **ret, struct km_error *err) {
        _cleanup_(vcs_map_freep) struct vcs_map *m = vcs_map_new();
        _cleanup_(batch_done) struct batch cli = {};
        int r;

        if (!m)
                return -ENOMEM;
        /* The command line first: its errors are the caller's, before any file is read. */
        for (size_t i = 0; i < s->n_command_line; i++) {
                r = parse_option(&cli, s->command_line[i], err);
                if (r < 0)
                        return r;
        }
        if (!s->no_defaults) {
                _cleanup_(batch_done) struct batch b = {};

                for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                        r = batch_add(&b, defaults[i].type, defaults[i].image, defaults[i].policy, -1, NULL, false,
                                      "default", err);
                        if (r < 0)
                                return r;
                }
                r = map_take(m, &b, "default");
                if (r < 0)
                        return r;
        }
        if (s->config_dir) {
                r = load_config_dir(m, s->config_dir, s->config_dir_named);
                if (r < 0)
                        return r;
        }
        if (s->configmap_dir) {
                _cleanup_(batch_done) struct batch b = { .no_privileged = true };
                _cleanup_free_ char *source = NULL;
                struct km_error e = {};

                if (asprintf(&source, "configmap %s", s->configmap_dir) < 0)
                        return -ENOMEM;
                r = parse_configmap(&b, s->configmap_dir, source, &e);
                for (size_t i = 0; r >= 0 && i < b.n_skipped; i++)
                        r = map_warn(m, b.skipped[i]);
                r = r < 0 ? warn_dropped(m, r, &e, source) : map_take(m, &b, source);
                if (r < 0)
                        return r;
        }
        r = map_take(m, &cli, "command line");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}
