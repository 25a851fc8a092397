/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OCI config.json.  Reading is strict because the text may come from
 * outside: every field we use is type- and range-checked, and what the
 * launcher would silently not do (hooks, sysctl, user namespaces, recursive
 * mount attributes) is refused rather than ignored.  Writing produces the
 * config of a VCS container from a few inputs.
 */
#include <limits.h>
#include <sched.h>
#include <sys/resource.h>
#include <linux/capability.h>

#include "caps.h"
#include "json-shape.h"
#include "mount-flags.h"
#include "options.h"
#include "seccomp-filter.h"
#include "spec.h"

#define MAX_TEXT (1024 * 1024)
#define MAX_ARGS 4096
#define MAX_ENV 4096
#define MAX_MOUNTS 1024
#define MAX_DEVICES 1024
#define MAX_LIST 1024 /* capability names, mount options, masked and read-only paths */
#define MAX_STRING 4096
#define MAX_DATA 4095       /* mount(2) copies one page of data, NUL included */
#define MAX_ID 4294967294LL /* (uid_t)-1 means "leave unchanged" to the kernel */
/* For strcspn(): the control characters, which have no place in a mount option or host name. */
#define CONTROLS                                                                                                       \
        "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16"                     \
        "\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"

/* Refusals of config.json name the field, "is required" when absent; null is a wrong type. */
static const struct json_doc CONFIG = { { NULL, "config.json", 0 }, -EINVAL, "is required", false, MAX_STRING },
                             VCS = { { NULL, "vcs", 0 }, -EINVAL, "is required", false, MAX_STRING };

/* Why p is not an absolute path free of ".." components, or NULL. */
static const char *path_why(const char *p) {
        if (p[0] != '/')
                return "must be absolute";
        for (const char *c = p; (c = strstr(c, "..")); c += 2)
                if (c[-1] == '/' && (c[2] == '\0' || c[2] == '/'))
                        return "must not contain \"..\"";
        return NULL;
}

/* Why sethostname() should not get h, or NULL. */
static const char *hostname_why(const char *h) {
        if (!*h || strlen(h) > HOST_NAME_MAX)
                return "must be 1 to 64 bytes";
        return h[strcspn(h, "/" CONTROLS)] ? "contains '/' or a control character" : NULL;
}

/* A copy of the string; with path, an absolute one without "..", simplified. */
static int want_strdup(json_t *v, const struct json_at *at, bool required, bool path, char **ret,
                       struct km_error *err) {
        const char *s, *why;
        int r = json_want_str(v, at, required, &s, err);

        *ret = NULL;
        if (r < 0 || !s)
                return r;
        if (!(*ret = strdup(s)))
                return error_set(err, -ENOMEM, "config.json");
        if (path && (why = path_why(s)))
                return json_fail(err, -EINVAL, at, "%s", why);
        if (path)
                path_simplify(*ret);
        return 0;
}

struct name_value {
        const char *name;
        unsigned long value;
};

static int lookup(const struct name_value *t, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(name, t[i].name))
                        return (int)i;
        return -1;
}

/* The index of the table entry the string v names, or -errno. */
static int want_name(json_t *v, const struct json_at *at, const struct name_value *t, size_t n, const char *what,
                     struct km_error *err) {
        char shown[64];
        const char *s;
        int r = json_want_str(v, at, true, &s, err), k;

        if (r < 0)
                return r;
        if ((k = lookup(t, n, s)) < 0)
                return json_fail(err, -EINVAL, at, "unknown %s '%s'", what, str_printable(s, shown, sizeof(shown)));
        return k;
}

enum strv_kind { STRV_ARGS, STRV_ENV, STRV_PATHS };

/* A NULL-terminated copy of an array of strings; absent gives an empty list. */
static int want_strv(json_t *a, const struct json_at *at, size_t max, enum strv_kind kind, char ***ret,
                     struct km_error *err) {
        json_t *v;
        size_t i;
        int r;

        if ((r = json_want_array(a, at, max, false, err)) < 0)
                return r;
        if (!(*ret = calloc(json_array_size(a) + 1, sizeof(char *))))
                return error_set(err, -ENOMEM, "config.json");
        json_array_foreach(a, i, v) {
                const struct json_at *it = JSON_AT_I(at, i);

                if ((r = want_strdup(v, it, true, kind == STRV_PATHS, &(*ret)[i], err)) < 0)
                        return r;
                if (kind == STRV_ENV && ((*ret)[i][0] == '=' || !strchr((*ret)[i], '=')))
                        return json_fail(err, -EINVAL, it, "must be KEY=VALUE");
        }
        return 0;
}

typedef int item_fn(void *items, size_t i, json_t *v, const struct json_at *at, struct km_error *err);

/* An array of objects, each parsed by fn into entry i of a new zeroed array; *ret and *n are set
 * first, so that the caller's free function cleans up after a failure half-way. */
static int want_items(json_t *a, const struct json_at *at, size_t max, size_t size, item_fn *fn, void **ret, size_t *n,
                      struct km_error *err) {
        json_t *v;
        size_t i;
        int r;

        if ((r = json_want_array(a, at, max, false, err)) < 0 || !a)
                return r;
        if (!(*ret = calloc(json_array_size(a) + 1, size)))
                return error_set(err, -ENOMEM, "config.json");
        *n = json_array_size(a);
        json_array_foreach(a, i, v) if ((r = json_want(v, JSON_AT_I(at, i), JSON_OBJECT, true, err)) < 0 ||
                                        (r = fn(*ret, i, v, JSON_AT_I(at, i), err)) < 0) return r;
        return 0;
}

/* Empty or absent, or refused: ignoring hooks or sysctls would silently not do them. */
static int refuse_nonempty(json_t *v, const struct json_at *at, struct km_error *err) {
        const char *key;
        json_t *h;
        int r;

        if ((r = json_want(v, at, JSON_OBJECT, false, err)) < 0)
                return r;
        json_object_foreach(v, key,
                            h) if (!json_is_array(h) ||
                                   json_array_size(h) > 0) return json_fail(err, -EOPNOTSUPP, at,
                                                                            "not supported by the embedded launcher");
        return 0;
}

static int parse_user(struct container_spec *s, json_t *user, const struct json_at *at, struct km_error *err) {
        json_t *gids = json_object_get(user, "additionalGids"), *v;
        long long uid = 0, gid = 0, id = 0;
        size_t i;
        int r;

        if ((r = json_want(user, at, JSON_OBJECT, true, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(user, at, "uid"), true, MAX_ID, &uid, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(user, at, "gid"), true, MAX_ID, &gid, err)) < 0 ||
            (r = json_want_array(gids, JSON_AT(at, "additionalGids"), NGROUPS_MAX, false, err)) < 0)
                return r;
        s->uid = uid;
        s->gid = gid;
        if (!(s->additional_gids = calloc(json_array_size(gids) + 1, sizeof(gid_t))))
                return error_set(err, -ENOMEM, "config.json");
        json_array_foreach(gids, i, v) {
                if ((r = json_want_int(v, JSON_AT_I(JSON_AT(at, "additionalGids"), i), true, MAX_ID, &id, err)) < 0)
                        return r;
                s->additional_gids[s->n_additional_gids++] = id;
        }
        return 0;
}

static int parse_capabilities(struct container_spec *s, json_t *caps, const struct json_at *at, struct km_error *err) {
        static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
        uint64_t *masks[] = { &s->cap_bounding, &s->cap_effective, &s->cap_inheritable, &s->cap_permitted,
                              &s->cap_ambient };
        const char *name;
        char shown[64];
        int r, cap;

        if ((r = json_want(caps, at, JSON_OBJECT, false, err)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                const struct json_at *set = JSON_AT(at, sets[i]);
                json_t *a = json_object_get(caps, sets[i]), *v;
                size_t j;

                if ((r = json_want_array(a, set, MAX_LIST, false, err)) < 0)
                        return r;
                json_array_foreach(a, j, v) {
                        if ((r = json_want_str(v, JSON_AT_I(set, j), true, &name, err)) < 0)
                                return r;
                        cap = caps_from_name(name);
                        if (cap == -EOPNOTSUPP)
                                return error_set_plain(err, cap, "capabilities: cannot load libcap (libcap.so.2)");
                        if (cap < 0 || cap >= 64)
                                return json_fail(err, -EINVAL, JSON_AT_I(set, j), "unknown capability '%s'",
                                                 str_printable(name, shown, sizeof(shown)));
                        *masks[i] |= UINT64_C(1) << cap;
                }
        }
        return 0;
}

static const struct name_value rlimits[] = {
        { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
        { "RLIMIT_STACK", RLIMIT_STACK },     { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
};

/* Note: RLIM_INFINITY (2^64-1) is beyond the integers jansson reads. */
static int parse_rlimit(void *items, size_t i, json_t *v, const struct json_at *at, struct km_error *err) {
        struct spec_rlimit *l = items;
        long long soft = 0, hard = 0;
        int r, k;

        if ((r = k = want_name(JSON_FIELD(v, at, "type"), rlimits, ELEMENTSOF(rlimits), "rlimit", err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "soft"), true, LLONG_MAX, &soft, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "hard"), true, LLONG_MAX, &hard, err)) < 0)
                return r;
        for (size_t j = 0; j < i; j++)
                if (l[j].resource == (int)rlimits[k].value)
                        return json_fail(err, -EINVAL, JSON_AT(at, "type"), "'%s' given twice", rlimits[k].name);
        if (soft > hard)
                return json_fail(err, -EINVAL, at, "soft limit above the hard limit");
        l[i] = (struct spec_rlimit){ (int)rlimits[k].value, soft, hard };
        return 0;
}

static int parse_process(struct container_spec *s, json_t *p, const struct json_at *at, struct km_error *err) {
        int r;

        if ((r = json_want(p, at, JSON_OBJECT, true, err)) < 0 ||
            (r = json_want_bool(JSON_FIELD(p, at, "terminal"), &s->terminal, err)) < 0 ||
            (r = json_want_bool(JSON_FIELD(p, at, "noNewPrivileges"), &s->no_new_privileges, err)) < 0 ||
            (r = parse_user(s, JSON_FIELD(p, at, "user"), err)) < 0 ||
            (r = want_strv(JSON_FIELD(p, at, "args"), MAX_ARGS, STRV_ARGS, &s->args, err)) < 0 ||
            (r = want_strv(JSON_FIELD(p, at, "env"), MAX_ENV, STRV_ENV, &s->env, err)) < 0 ||
            (r = want_strdup(JSON_FIELD(p, at, "cwd"), true, true, &s->cwd, err)) < 0 ||
            (r = parse_capabilities(s, JSON_FIELD(p, at, "capabilities"), err)) < 0 ||
            (r = want_items(JSON_FIELD(p, at, "rlimits"), ELEMENTSOF(rlimits), sizeof(struct spec_rlimit), parse_rlimit,
                            (void **)&s->rlimits, &s->n_rlimits, err)) < 0)
                return r;
        if (!s->args[0] || !s->args[0][0])
                return json_fail(err, -EINVAL, JSON_AT(at, "args"), "must hold a non-empty command");
        /* /proc/self/fd/N could reach a descriptor leaked from the host side (THREATS 16). */
        if (path_is_below(s->cwd, "/proc"))
                return json_fail(err, -EINVAL, JSON_AT(at, "cwd"), "must not be below /proc");
        return 0;
}

int spec_command(json_t *args, json_t *env, char ***ret_args, char ***ret_env, struct km_error *err) {
        const struct json_at *proc = JSON_AT(&CONFIG.at, "process");
        _cleanup_(km_strv_freep) char **a = NULL, **e = NULL;
        int r;

        if ((r = want_strv(args, JSON_AT(proc, "args"), MAX_ARGS, STRV_ARGS, &a, err)) < 0 ||
            (env && (r = want_strv(env, JSON_AT(proc, "env"), MAX_ENV, STRV_ENV, &e, err)) < 0))
                return r;
        if (!a[0] || !a[0][0])
                return json_fail(err, -EINVAL, JSON_AT(proc, "args"), "must hold a non-empty command");
        *ret_args = TAKE_PTR(a);
        *ret_env = TAKE_PTR(e);
        return 0;
}

/* One entry of "options", applied in order as runc does (the last of ro/rw wins). */
static int mount_option(struct spec_mount *m, json_t *v, const struct json_at *at, struct km_error *err) {
        const struct mount_flag *f, *plain;
        const char *o;
        char *data;
        int r;

        if ((r = json_want_str(v, at, true, &o, err)) < 0)
                return r;
        if (!*o || o[strcspn(o, "," CONTROLS)])
                return json_fail(err, -EINVAL, at, "is empty or contains ',' or a control character");
        if ((f = mount_flag_lookup(o)) && f->propagation)
                m->propagation = f->ms;
        else if (f)
                m->flags = f->clear ? m->flags & ~f->ms : m->flags | f->ms;
        if (f)
                return 0;
        /* runc's recursive attributes ("rro", "rnosuid", ...) and id-mapped mounts would end up in the data,
         * which a bind mount ignores: silently weaker than asked. */
        if ((o[0] == 'r' && (plain = mount_flag_lookup(o + 1)) && !plain->propagation) || streq(o, "idmap") ||
            streq(o, "ridmap") || streq(o, "tmpcopyup"))
                return json_fail(err, -EOPNOTSUPP, at, "'%s' is not supported by the embedded launcher", o);
        if (!(data = strjoin_opts(m->data, o)))
                return error_set(err, -ENOMEM, "config.json");
        free(m->data);
        m->data = data;
        if (strlen(data) > MAX_DATA)
                return json_fail(err, -E2BIG, at->up, "longer than mount(2) takes");
        return 0;
}

/* A propagation word ("rslave") as MS_* flags; *ret is left alone when absent. */
static int want_propagation(json_t *v, const struct json_at *at, unsigned long *ret, struct km_error *err) {
        const struct mount_flag *f;
        char shown[64];
        const char *s;
        int r = json_want_str(v, at, false, &s, err);

        if (r < 0 || !s)
                return r;
        if (!(f = mount_flag_lookup(s)) || !f->propagation)
                return json_fail(err, -EINVAL, at, "unknown propagation '%s'", str_printable(s, shown, sizeof(shown)));
        *ret = f->ms;
        return 0;
}

static int parse_mount(void *items, size_t i, json_t *v, const struct json_at *at, struct km_error *err) {
        struct spec_mount *m = (struct spec_mount *)items + i;
        json_t *options = json_object_get(v, "options"), *o;
        const char *why = NULL;
        size_t j;
        int r;

        if ((r = want_strdup(JSON_FIELD(v, at, "destination"), true, true, &m->destination, err)) < 0 ||
            (r = want_strdup(JSON_FIELD(v, at, "type"), false, false, &m->type, err)) < 0 ||
            (r = want_strdup(JSON_FIELD(v, at, "source"), false, false, &m->source, err)) < 0 ||
            (r = json_want_array(options, JSON_AT(at, "options"), MAX_LIST, false, err)) < 0)
                return r;
        if (m->type && fstype_validate(m->type, &why) < 0)
                return json_fail(err, -EINVAL, JSON_AT(at, "type"), "%s", why);
        json_array_foreach(options, j,
                           o) if ((r = mount_option(m, o, JSON_AT_I(JSON_AT(at, "options"), j), err)) < 0) return r;
        /* Type "bind" is a bind mount even when the options forgot to say so. */
        if (m->type && streq(m->type, "bind"))
                m->flags |= MS_BIND;
        return 0;
}

static const struct name_value namespaces[] = {
        { "pid", CLONE_NEWPID }, { "network", CLONE_NEWNET },   { "mount", CLONE_NEWNS },  { "ipc", CLONE_NEWIPC },
        { "uts", CLONE_NEWUTS }, { "cgroup", CLONE_NEWCGROUP }, { "user", CLONE_NEWUSER }, { "time", CLONE_NEWTIME },
};

static int parse_namespaces(struct container_spec *s, json_t *a, const struct json_at *at, struct km_error *err) {
        unsigned seen = 0;
        json_t *v;
        size_t i;
        int r, k;

        if ((r = json_want_array(a, at, ELEMENTSOF(namespaces), false, err)) < 0)
                return r;
        json_array_foreach(a, i, v) {
                const struct json_at *it = JSON_AT_I(at, i);
                _cleanup_free_ char *path = NULL;

                if ((r = json_want(v, it, JSON_OBJECT, true, err)) < 0 ||
                    (r = k = want_name(JSON_FIELD(v, it, "type"), namespaces, ELEMENTSOF(namespaces), "namespace",
                                       err)) < 0 ||
                    (r = want_strdup(JSON_FIELD(v, it, "path"), false, true, &path, err)) < 0)
                        return r;
                if (seen & (1u << k))
                        return json_fail(err, -EINVAL, JSON_AT(it, "type"), "'%s' given twice", namespaces[k].name);
                seen |= 1u << k;
                if (namespaces[k].value & CLONE_NEWTIME)
                        return json_fail(err, -EOPNOTSUPP, it,
                                         "%s namespaces are not supported by the embedded launcher",
                                         namespaces[k].name);
                if (path && namespaces[k].value != CLONE_NEWNET)
                        return json_fail(err, -EOPNOTSUPP, JSON_AT(it, "path"),
                                         "joining a %s namespace is not supported", namespaces[k].name);
                if (path)
                        s->netns_path = TAKE_PTR(path);
                else
                        s->namespaces |= namespaces[k].value;
        }
        /* Without one, setting up the root would change the host's mounts. */
        if (!(s->namespaces & CLONE_NEWNS))
                return json_fail(err, -EOPNOTSUPP, at, "must include \"mount\": the embedded launcher needs one");
        return 0;
}

static int parse_device(void *items, size_t i, json_t *v, const struct json_at *at, struct km_error *err) {
        struct spec_device *d = (struct spec_device *)items + i;
        long long major = 0, minor = 0, mode = 0666, uid = 0, gid = 0;
        const char *type;
        int r;

        if ((r = want_strdup(JSON_FIELD(v, at, "path"), true, true, &d->path, err)) < 0 ||
            (r = json_want_str(JSON_FIELD(v, at, "type"), true, &type, err)) < 0)
                return r;
        if (!path_is_below(d->path, "/dev") || streq(d->path, "/dev"))
                return json_fail(err, -EINVAL, JSON_AT(at, "path"), "must be below /dev");
        for (size_t j = 0; j < i; j++)
                if (streq(((struct spec_device *)items)[j].path, d->path))
                        return json_fail(err, -EINVAL, JSON_AT(at, "path"), "given twice");
        if (strlen(type) != 1 || !strchr("cbup", type[0]))
                return json_fail(err, -EINVAL, JSON_AT(at, "type"), "must be \"c\", \"b\", \"u\" or \"p\"");
        /* dev_t holds 12 bits of major and 20 of minor; fileMode is permission bits only. */
        if ((r = json_want_int(JSON_FIELD(v, at, "major"), type[0] != 'p', 4095, &major, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "minor"), type[0] != 'p', 1048575, &minor, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "fileMode"), false, 0777, &mode, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "uid"), false, MAX_ID, &uid, err)) < 0 ||
            (r = json_want_int(JSON_FIELD(v, at, "gid"), false, MAX_ID, &gid, err)) < 0)
                return r;
        *d = (struct spec_device){ d->path, type[0], major, minor, mode, uid, gid };
        return 0;
}

static int parse_linux(struct container_spec *s, json_t *l, const struct json_at *at, struct km_error *err) {
        json_t *seccomp = json_object_get(l, "seccomp");
        int r;

        if ((r = json_want(l, at, JSON_OBJECT, false, err)) < 0 ||
            (r = parse_namespaces(s, JSON_FIELD(l, at, "namespaces"), err)) < 0 ||
            (r = want_items(JSON_FIELD(l, at, "devices"), MAX_DEVICES, sizeof(struct spec_device), parse_device,
                            (void **)&s->devices, &s->n_devices, err)) < 0 ||
            (r = want_strv(JSON_FIELD(l, at, "maskedPaths"), MAX_LIST, STRV_PATHS, &s->masked_paths, err)) < 0 ||
            (r = want_strv(JSON_FIELD(l, at, "readonlyPaths"), MAX_LIST, STRV_PATHS, &s->readonly_paths, err)) < 0 ||
            (r = refuse_nonempty(JSON_FIELD(l, at, "sysctl"), err)) < 0 ||
            (r = json_want(seccomp, JSON_AT(at, "seccomp"), JSON_OBJECT, false, err)) < 0 ||
            (r = want_propagation(JSON_FIELD(l, at, "rootfsPropagation"), &s->rootfs_propagation, err)) < 0)
                return r;
        s->seccomp = json_incref(seccomp); /* compiled by the launcher */
        return 0;
}

/* Of "annotations" (string values, OCI): only ours means something to the launcher. */
static int parse_layer(struct container_spec *s, json_t *annotations, const struct json_at *at, struct km_error *err) {
        const char *layer;
        int r = json_want(annotations, at, JSON_OBJECT, false, err);

        if (r < 0 || (r = json_want_str(JSON_FIELD(annotations, at, SPEC_ANNOTATION_LAYER), false, &layer, err)) < 0)
                return r;
        if (layer && !streq(layer, "overlay"))
                return json_fail(err, -EINVAL, JSON_AT(at, SPEC_ANNOTATION_LAYER), "must be \"overlay\"");
        s->root_overlay = layer != NULL;
        return 0;
}

int spec_from_json(json_t *root, struct container_spec **ret, struct km_error *err) {
        _cleanup_(spec_freep) struct container_spec *s = NULL;
        json_t *mounts = json_object_get(root, "mounts"), *rootfs = json_object_get(root, "root");
        const struct json_at *at_root = JSON_AT(&CONFIG.at, "root");
        const char *version, *why;
        int r;

        if (!json_is_object(root))
                return json_fail(err, -EINVAL, &CONFIG.at, "must be a JSON object");
        if (!(s = calloc(1, sizeof(*s))))
                return error_set(err, -ENOMEM, "config.json");
        if ((r = json_want_str(JSON_FIELD(root, &CONFIG.at, "ociVersion"), true, &version, err)) < 0 ||
            !startswith(version, "1."))
                return r < 0 ? r : json_fail(err, -EINVAL, JSON_AT(&CONFIG.at, "ociVersion"), "must start with \"1.\"");
        if ((r = refuse_nonempty(JSON_FIELD(root, &CONFIG.at, "hooks"), err)) < 0 ||
            (r = parse_process(s, JSON_FIELD(root, &CONFIG.at, "process"), err)) < 0 ||
            /* A relative root.path is resolved against the bundle by the launcher. */
            (r = json_want(rootfs, at_root, JSON_OBJECT, true, err)) < 0 ||
            (r = want_strdup(JSON_FIELD(rootfs, at_root, "path"), true, false, &s->root_path, err)) < 0 ||
            (r = json_want_bool(JSON_FIELD(rootfs, at_root, "readonly"), &s->root_readonly, err)) < 0)
                return r;
        if (!s->root_path[0])
                return json_fail(err, -EINVAL, JSON_AT(at_root, "path"), "is empty");
        if ((r = parse_layer(s, JSON_FIELD(root, &CONFIG.at, "annotations"), err)) < 0)
                return r;
        if ((r = want_items(mounts, JSON_AT(&CONFIG.at, "mounts"), MAX_MOUNTS, sizeof(struct spec_mount), parse_mount,
                            (void **)&s->mounts, &s->n_mounts, err)) < 0 ||
            (r = parse_linux(s, JSON_FIELD(root, &CONFIG.at, "linux"), err)) < 0 ||
            (r = want_strdup(JSON_FIELD(root, &CONFIG.at, "hostname"), false, false, &s->hostname, err)) < 0)
                return r;
        if ((r = spec_parse_unprivileged(s, root, err)) < 0)
                return r;
        if (s->hostname && (why = hostname_why(s->hostname)))
                return json_fail(err, -EINVAL, JSON_AT(&CONFIG.at, "hostname"), "%s", why);
        /* Without its own UTS namespace, sethostname() would rename the host. */
        if (s->hostname && !(s->namespaces & CLONE_NEWUTS))
                return json_fail(err, -EINVAL, JSON_AT(&CONFIG.at, "hostname"), "needs a \"uts\" namespace");
        *ret = TAKE_PTR(s);
        return 0;
}

int spec_parse(const char *json, size_t size, struct container_spec **ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        char shown[JSON_ERROR_TEXT_LENGTH];
        json_error_t je;

        if (size > MAX_TEXT)
                return json_fail(err, -EFBIG, &CONFIG.at, "larger than %d bytes", MAX_TEXT);
        if (!json || memchr(json, '\0', size))
                return json_fail(err, -EINVAL, &CONFIG.at, "contains a NUL byte");
        /* Duplicate keys would let two readers of one text see different configs. */
        if (!(root = json_loadb(json, size, JSON_REJECT_DUPLICATES, &je)))
                return json_fail(err, -EINVAL, &CONFIG.at, "line %d column %d: %s", je.line, je.column,
                                 str_printable(je.text, shown, sizeof(shown)));
        return spec_from_json(root, ret, err);
}

void spec_free(struct container_spec *s) {
        if (!s)
                return;
        km_strv_free(s->args);
        km_strv_free(s->env);
        free(s->cwd);
        free(s->additional_gids);
        free(s->rlimits);
        free(s->root_path);
        free(s->hostname);
        for (size_t i = 0; i < s->n_mounts; i++) {
                free(s->mounts[i].destination);
                free(s->mounts[i].type);
                free(s->mounts[i].source);
                free(s->mounts[i].data);
        }
        free(s->mounts);
        free(s->netns_path);
        for (size_t i = 0; i < s->n_devices; i++)
                free(s->devices[i].path);
        free(s->devices);
        km_strv_free(s->masked_paths);
        km_strv_free(s->readonly_paths);
        json_decref(s->seccomp);
        km_strv_free(s->broker_types);
        free(s);
}

/* ---- the VCS container ---- */

/*
 * What volume clients need.  Left out: CAP_NET_RAW (no client uses raw
 * sockets; with host_network they could sniff and spoof host traffic),
 * CAP_SYS_RESOURCE (the config sets the rlimits; a client must not exceed
 * them or eat filesystem reserves), and everything to load modules, trace,
 * do raw I/O, reboot, set the clock, change MAC policy, load BPF or perf.
 */
uint64_t spec_vcs_capabilities(void) {
        static const int caps[] = {
                CAP_SYS_ADMIN, /* mount(2), umount2, the new mount API, FUSE */
                CAP_CHOWN,
                CAP_FOWNER,
                CAP_FSETID,          /* bindfs/sshfs pass ownership and modes through; helpers
                                        hand their state files (/var/lib/nfs) to service users */
                CAP_DAC_OVERRIDE,    /* root helpers open their files whatever the mode */
                CAP_DAC_READ_SEARCH, /* FUSE mirrors walk any tree (seccomp stops open_by_handle_at) */
                CAP_KILL,            /* stop helper daemons that switched uid (rpc.statd) */
                CAP_SETUID,
                CAP_SETGID,
                CAP_SETPCAP,          /* daemons drop privileges; FUSE acts as the caller */
                CAP_NET_BIND_SERVICE, /* NFS clients bind reserved ports (< 1024) by default */
                CAP_NET_ADMIN,        /* iSCSI and rbd talk to the kernel over netlink */
                CAP_SYS_CHROOT,       /* daemons confine themselves (privilege separation) */
                CAP_MKNOD,            /* create nodes the fresh /dev lacks (loop, nbd, rbd) */
                CAP_AUDIT_WRITE,      /* PAM and login-style helpers fail without it */
                CAP_SETFCAP,          /* mirror security.capability xattrs through FUSE */
                CAP_IPC_LOCK,         /* iscsid mlockall()s: it must not page out to the disks it serves */
        };
        uint64_t mask = 0;

        for (size_t i = 0; i < ELEMENTSOF(caps); i++)
                mask |= UINT64_C(1) << caps[i];
        return mask;
}

/* The fixed part of a VCS config, ' standing for ", in the order a reader expects; the nulls are filled in. */
static const char vcs_template[] =
        "{'ociVersion': '1.0.2',"
        " 'process': {'terminal': false, 'user': {'uid': 0, 'gid': 0}, 'args': null, 'env': null, 'cwd': null,"
        "  'capabilities': {'bounding': null, 'effective': null, 'inheritable': [], 'permitted': null, 'ambient': []},"
        "  'noNewPrivileges': true},"
        " 'root': null, 'hostname': null,"
        " 'mounts': ["
        "  {'destination': '/proc', 'type': 'proc', 'source': 'proc', 'options': ['nosuid', 'noexec', 'nodev']},"
        "  {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
        "   'options': ['nosuid', 'strictatime', 'mode=755', 'size=65536k']},"
        "  {'destination': '/dev/pts', 'type': 'devpts', 'source': 'devpts',"
        "   'options': ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620']},"
        "  {'destination': '/dev/shm', 'type': 'tmpfs', 'source': 'shm',"
        "   'options': ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k']},"
        " {'destination': '/dev/mqueue', 'type': 'mqueue', 'source': 'mqueue', 'options': ['nosuid','noexec','nodev']},"
        "  {'destination': '/sys', 'type': 'sysfs', 'source': 'sysfs', 'options': ['nosuid','noexec','nodev','ro']}],"
        " 'linux': {'namespaces': [{'type': 'pid'}, {'type': 'ipc'}, {'type': 'uts'}, {'type': 'mount'}],"
        "  'devices': ["
        "   {'path': '/dev/null', 'type': 'c', 'major': 1, 'minor': 3, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/zero', 'type': 'c', 'major': 1, 'minor': 5, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/full', 'type': 'c', 'major': 1, 'minor': 7, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/random', 'type': 'c', 'major': 1, 'minor': 8, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/urandom', 'type': 'c', 'major': 1, 'minor': 9, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/tty', 'type': 'c', 'major': 5, 'minor': 0, 'fileMode': 438, 'uid': 0, 'gid': 0},"
        "   {'path': '/dev/fuse', 'type': 'c', 'major': 10, 'minor': 229, 'fileMode': 438, 'uid': 0, 'gid': 0}],"
        "  'maskedPaths': ['/proc/acpi', '/proc/asound', '/proc/kcore', '/proc/keys', '/proc/latency_stats',"
        "   '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug', '/proc/scsi', '/sys/firmware'],"
        "  'readonlyPaths': ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],"
        "  'rootfsPropagation': null, 'seccomp': null}}";

/* An input the generated JSON can hold (bounded, UTF-8: jansson refuses the rest); maybe a path. */
static int vcs_check(const char *s, const struct json_at *at, bool path, struct km_error *err) {
        const char *why;
        json_t *t;

        if (!s)
                return json_fail(err, -EINVAL, at, "is missing");
        if (strlen(s) > MAX_STRING)
                return json_fail(err, -E2BIG, at, "longer than %d bytes", MAX_STRING);
        if (!(t = json_string(s)))
                return json_fail(err, -EINVAL, at, "is not valid UTF-8");
        json_decref(t);
        if (path && (why = path_why(s)))
                return json_fail(err, -EINVAL, at, "%s", why);
        return 0;
}

/* Refuses, naming the input, what spec_from_json would refuse in the output. */
static int vcs_validate(const struct vcs_inputs *in, struct km_error *err) {
        const struct json_at *args = JSON_AT(&VCS.at, "args"), *env = JSON_AT(&VCS.at, "env");
        const size_t max_binds = MAX_MOUNTS - 6; /* after the template's */
        const char *why;
        int r;

        if ((r = vcs_check(in->rootfs, JSON_AT(&VCS.at, "rootfs"), true, err)) < 0)
                return r;
        if (!in->args || !in->args[0] || !in->args[0][0])
                return json_fail(err, -EINVAL, args, "must hold a non-empty command");
        for (size_t i = 0; in->args[i]; i++)
                if (i >= MAX_ARGS)
                        return json_fail(err, -E2BIG, args, "more than %d entries", MAX_ARGS);
                else if ((r = vcs_check(in->args[i], JSON_AT_I(args, i), false, err)) < 0)
                        return r;
        for (size_t i = 0; in->env && in->env[i]; i++)
                if (i >= MAX_ENV - 2) /* after PATH and HOME */
                        return json_fail(err, -E2BIG, env, "more than %d entries", MAX_ENV - 2);
                else if ((r = vcs_check(in->env[i], JSON_AT_I(env, i), false, err)) < 0)
                        return r;
                else if (in->env[i][0] == '=' || !strchr(in->env[i], '='))
                        return json_fail(err, -EINVAL, JSON_AT_I(env, i), "must be KEY=VALUE");
        if (in->cwd && (r = vcs_check(in->cwd, JSON_AT(&VCS.at, "cwd"), true, err)) < 0)
                return r;
        if (in->cwd && path_is_below(in->cwd, "/proc"))
                return json_fail(err, -EINVAL, JSON_AT(&VCS.at, "cwd"), "must not be below /proc");
        if (in->hostname && (why = hostname_why(in->hostname)))
                return json_fail(err, -EINVAL, JSON_AT(&VCS.at, "hostname"), "%s", why);
        /* What is left to refuse is text that is not UTF-8, which the config could not hold. */
        if (in->hostname && (r = vcs_check(in->hostname, JSON_AT(&VCS.at, "hostname"), false, err)) < 0)
                return r;
        if (in->n_binds > (in->binds ? max_binds : 0)) /* a NULL array holds none */
                return json_fail(err, -E2BIG, JSON_AT(&VCS.at, "binds"), "%zu entries, at most %zu", in->n_binds,
                                 max_binds);
        for (size_t i = 0; i < in->n_binds; i++) {
                const struct json_at *b = JSON_AT_I(JSON_AT(&VCS.at, "binds"), i);
                unsigned long p = in->binds[i].propagation;

                if ((r = vcs_check(in->binds[i].source, JSON_AT(b, "source"), true, err)) < 0 ||
                    (r = vcs_check(in->binds[i].destination, JSON_AT(b, "destination"), true, err)) < 0)
                        return r;
                if (p != MS_SHARED && p != MS_SLAVE && p != MS_PRIVATE)
                        return json_fail(err, -EINVAL, JSON_AT(b, "propagation"),
                                         "must be MS_SHARED, MS_SLAVE or MS_PRIVATE");
        }
        return 0;
}

/* The generated config, for naming the step that failed: "vcs: config.json: process.env: ...". */
static const struct json_doc OUT = { .at = { NULL, "vcs: config.json", 0 } };

static int append(json_t *a, json_t *v) {
        return json_array_append_new(a, v) == 0 ? 0 : -ENOMEM;
}

/*
 * parent[at->key], or element at->i of the array parent (appended when at its
 * end), becomes v, which is consumed even on failure (jansson's *_new); a
 * failure (v is NULL when building it failed) names the place.
 */
static int put(json_t *parent, const struct json_at *at, json_t *v, struct km_error *err) {
        char where[128];
        int r;

        if (at->key)
                r = json_object_set_new(parent, at->key, v);
        else if (at->i == json_array_size(parent))
                r = json_array_append_new(parent, v);
        else
                r = json_array_set_new(parent, at->i, v);
        if (r == 0)
                return 0;
        json_at_format(at, where, sizeof(where));
        return error_set(err, -ENOMEM, "%s", where);
}

/* PATH and HOME, then in->env; a later KEY= replaces an earlier one in place. */
json_t *spec_vcs_env(const struct vcs_inputs *in) {
        _cleanup_(json_decrefp) json_t *env =
                json_pack("[s, s]", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root");

        for (size_t i = 0; env && in->env && in->env[i]; i++) {
                const char *e = in->env[i];
                size_t keylen = strchr(e, '=') - e + 1, j;
                json_t *v;

                json_array_foreach(env, j, v) if (strncmp(json_string_value(v), e, keylen) == 0) break;
                if ((j < json_array_size(env) ? json_array_set_new(env, j, json_string(e))
                                              : json_array_append_new(env, json_string(e))) < 0)
                        return NULL;
        }
        return TAKE_PTR(env);
}

/* args as JSON strings, or the VCS capability names when args is NULL. */
static json_t *strings(char *const *args) {
        _cleanup_(json_decrefp) json_t *a = json_array();
        uint64_t mask = spec_vcs_capabilities();

        for (size_t i = 0; args && args[i]; i++)
                if (append(a, json_string(args[i])) < 0)
                        return NULL;
        for (int c = 0; !args && c < 64; c++)
                if ((mask & (UINT64_C(1) << c)) && append(a, json_string(caps_to_name(c))) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

/* A recursive bind with its propagation ("rshared" ...), maybe read-only. */
static json_t *bind_json(const struct vcs_bind *b) {
        json_t *m = json_pack("{s:s, s:s, s:s, s:[s, s]}", "destination", b->destination, "type", "bind", "source",
                              b->source, "options", "rbind", mount_propagation_word(b->propagation | MS_REC));

        if (b->readonly && append(json_object_get(m, "options"), json_string("ro")) < 0) {
                json_decref(m);
                return NULL;
        }
        return m;
}

json_t *spec_generate_vcs(const struct vcs_inputs *in, struct km_error *err) {
        const struct json_at *proc = JSON_AT(&OUT.at, "process"), *caps_at = JSON_AT(proc, "capabilities"),
                             *lnx = JSON_AT(&OUT.at, "linux"), *mounts_at = JSON_AT(&OUT.at, "mounts");
        const struct vcs_bind host_dev = { "/dev", "/dev", MS_SLAVE, false };
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_free_ char *text = strdup(vcs_template);
        json_t *process, *caps, *mounts, *linux_, *ns;
        bool shared = false;

        if (vcs_validate(in, err) < 0)
                return NULL;
        for (char *c = text; c && (c = strchr(c, '\'')); c++)
                *c = '"';
        root = text ? json_loads(text, 0, NULL) : NULL;
        if (!root ||
            json_unpack(root, "{s:o, s:o, s:o}", "process", &process, "mounts", &mounts, "linux", &linux_) < 0) {
                error_set(err, -ENOMEM, "%s: the template", OUT.at.key);
                return NULL;
        }
        caps = json_object_get(process, "capabilities");
        ns = json_object_get(linux_, "namespaces");
        for (size_t i = 0; i < in->n_binds; i++) {
                shared = shared || in->binds[i].propagation == MS_SHARED;
                if (put(mounts, JSON_AT_I(mounts_at, json_array_size(mounts)), bind_json(&in->binds[i]), err) < 0)
                        return NULL;
        }
        /* By default the node's own name: NFSv4 clients identify themselves by it. */
        if (!in->hostname)
                json_object_del(root, "hostname");
        if (in->host_dev)
                json_object_del(linux_, "devices");
        if (put(process, JSON_AT(proc, "terminal"), json_boolean(in->terminal), err) < 0 ||
            put(process, JSON_AT(proc, "args"), strings(in->args), err) < 0 ||
            put(process, JSON_AT(proc, "env"), spec_vcs_env(in), err) < 0 ||
            put(process, JSON_AT(proc, "cwd"), json_string(in->cwd ? in->cwd : "/"), err) < 0 ||
            put(caps, JSON_AT(caps_at, "bounding"), strings(NULL), err) < 0 ||
            put(caps, JSON_AT(caps_at, "effective"), strings(NULL), err) < 0 ||
            put(caps, JSON_AT(caps_at, "permitted"), strings(NULL), err) < 0 ||
            put(root, JSON_AT(&OUT.at, "root"),
                json_pack("{s:s, s:b}", "path", in->rootfs, "readonly", in->rootfs_readonly), err) < 0 ||
            (in->rootfs_layer && put(root, JSON_AT(&OUT.at, "annotations"),
                                     json_pack("{s:s}", SPEC_ANNOTATION_LAYER, "overlay"), err) < 0) ||
            (in->hostname && put(root, JSON_AT(&OUT.at, "hostname"), json_string(in->hostname), err) < 0) ||
            (in->host_dev && put(mounts, JSON_AT_I(mounts_at, 1), bind_json(&host_dev), err) < 0) ||
            (!in->host_network && put(ns, JSON_AT_I(JSON_AT(lnx, "namespaces"), json_array_size(ns)),
                                      json_pack("{s:s}", "type", "network"), err) < 0) ||
            put(linux_, JSON_AT(lnx, "rootfsPropagation"),
                json_string(mount_propagation_word((shared ? MS_SHARED : MS_SLAVE) | MS_REC)), err) < 0 ||
            put(linux_, JSON_AT(lnx, "seccomp"),
                in->seccomp_named ? json_string(SECCOMP_DEFAULT_NAME) : seccomp_default_profile(), err) < 0 ||
            /* No device cgroup, as the embedded launcher has none: runc denies every device otherwise. */
            put(linux_, JSON_AT(lnx, "resources"),
                json_pack("{s:[{s:b, s:s}]}", "devices", "allow", 1, "access", "rwm"), err) < 0 ||
            (!in->privileged && spec_make_unprivileged(root, in, err) < 0))
                return NULL;
        return TAKE_PTR(root);
}
