/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount broker's decisions (see broker-policy.h): string checks only, nothing resolved. */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>

#include "broker-policy.h"
#include "mount-flags.h"
#include "options.h"
#include "secrets.h"

/* What a new mount may ask for besides MS_BIND: restrictions and hints, nothing that moves or shares mounts. */
#define HARMLESS_FLAGS                                                                                                 \
        (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC | MS_NOSYMFOLLOW | MS_NOATIME |    \
         MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_LAZYTIME | MS_SILENT)
#define PROPAGATION_FLAGS (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)
#define UMOUNT_FLAGS (MNT_FORCE | MNT_DETACH | UMOUNT_NOFOLLOW)
/* The kernel copies one page of options; a FUSE verdict's data gets "fd=N," in front. */
#define DATA_MAX 4096
#define FD_PREFIX_MAX (sizeof("fd=2147483647,") - 1)

/* Bytes escape() writes for s, without the NUL. */
static size_t escaped_len(const char *s) {
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                n += *p < 0x20 || *p == 0x7f || *p == '\\' ? 4 : 1;
        return n;
}

/*
 * s (NULL: "(null)") with control characters and backslashes as \xNN, so a
 * log line stays one line; cut to fit size with "..." at the end.
 */
static char *escape(const char *s, char *buf, size_t size) {
        size_t n = 0, room;

        s = s ? s : "(null)";
        room = escaped_len(s) < size ? size : size - 3;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                bool esc = *p < 0x20 || *p == 0x7f || *p == '\\';

                if (n + (esc ? 4 : 1) >= room)
                        break;
                if (esc)
                        n += (size_t)snprintf(buf + n, 5, "\\x%02x", *p);
                else
                        buf[n++] = (char)*p;
        }
        if (room < size) {
                memcpy(buf + n, "...", 3);
                n += 3;
        }
        buf[n] = '\0';
        return buf;
}

static char *escape_dup(const char *s) {
        size_t size = escaped_len(s ? s : "(null)") + 1;
        char *buf = malloc(size);

        return buf ? escape(s, buf, size) : NULL;
}

_printf_(3, 4) static int deny(struct broker_verdict *v, int error, const char *fmt, ...) {
        va_list ap;

        broker_verdict_done(v);
        *v = (struct broker_verdict){ .action = BROKER_DENY, .error = error, .fuse_fd = -1 };
        va_start(ap, fmt);
        vsnprintf(v->why, sizeof(v->why), fmt, ap);
        va_end(ap);
        return 0;
}

/* path is below dir, and not dir itself. */
static bool strictly_below(const char *path, const char *dir) {
        return path_is_below(path, dir) && !path_is_below(dir, path);
}

/*
 * Whether path passes the string checks of a target (what: "target") or a
 * bind source (whose text stays out of the reason: it may be anything);
 * else v is a refusal.
 */
static bool path_ok(const struct broker_policy *p, const char *what, const char *path, struct broker_verdict *v) {
        const char *problem = NULL;
        char shown[200], dir[200];

        if (!path || strlen(path) >= PATH_MAX) {
                deny(v, path ? ENAMETOOLONG : EFAULT, "%s %s", what,
                     path ? "is longer than PATH_MAX" : "is a NULL pointer");
                return false;
        }
        if (!p->kubelet_dir || p->kubelet_dir[0] != '/') {
                deny(v, EPERM, "the policy has no kubelet dir");
                return false;
        }
        if (path[0] != '/')
                problem = "is not absolute";
        for (const char *c = path; !problem && *c;) {
                size_t n = strcspn(++c, "/");

                if (n == 0)
                        problem = "has an empty component ('//' or a trailing '/')";
                else if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        problem = "has a '.' or '..' component";
                c += n;
        }
        /*
         * Its scope is its targets and, below the kubelet dir (where paths are resolved without symlinks),
         * what is below them -- never another pod's volume nor the kubelet's own dirs.
         */
        for (char *const *t = p->targets; !problem && t && *t; t++)
                if (streq(path, *t) || (strictly_below(*t, p->kubelet_dir) && path_is_below(path, *t)))
                        return true;
        shown[0] = '\0';
        if (streq(what, "target")) {
                shown[0] = ' ';
                escape(path, shown + 1, sizeof(shown) - 1);
        }
        if (problem)
                deny(v, EPERM, "%s%s %s", what, shown, problem);
        else if (!p->targets || !p->targets[0])
                deny(v, EPERM, "%s%s: the container has no mount target (run --mount-target)", what, shown);
        else
                deny(v, EPERM, "%s%s is not at or below its mount target%s %s%s", what, shown, p->targets[1] ? "s" : "",
                     escape(p->targets[0], dir, sizeof(dir)), p->targets[1] ? ", ..." : "");
        return false;
}

/* The kubelet's own dirs, below which no container mounts (broker_target_check). */
static const char *const KUBELET_OWN[] = { "pki",           "plugins_registry", "device-plugins",
                                           "pod-resources", "checkpoints",      NULL };

int broker_target_check(const char *kubelet_dir, const char *target, const char **ret_why) {
        const char *rel, *c;
        size_t depth = 0, n;

        *ret_why = NULL;
        if (!target || target[0] != '/' || !kubelet_dir || !strictly_below(target, kubelet_dir)) {
                *ret_why = "is not an absolute path below the kubelet dir";
                return -EINVAL;
        }
        for (c = target; *c;) {
                n = strcspn(++c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
                        *ret_why = "has an empty, '.' or '..' component";
                        return -EINVAL;
                }
                c += n;
        }
        rel = target + strlen(kubelet_dir) + (streq(kubelet_dir, "/") ? 0 : 1);
        for (c = rel; *c; c += *c == '/')
                depth++, c += strcspn(c, "/");
        n = strcspn(rel, "/");
        for (const char *const *own = KUBELET_OWN; *own; own++)
                if (strlen(*own) == n && strncmp(rel, *own, n) == 0) {
                        *ret_why = "is in one of the kubelet's own dirs";
                        return -EINVAL;
                }
        if (depth < 2)
                *ret_why = "is one of the kubelet's own dirs or files (a direct child of the kubelet dir)";
        else if (n == 4 && strncmp(rel, "pods", 4) == 0 &&
                 (depth < 5 || strncmp(rel + 5 + strcspn(rel + 5, "/"), "/volumes/", 9) != 0))
                *ret_why = "is in pods/ but not a pod's volume (pods/UID/volumes/PLUGIN/NAME) nor below one";
        else if (n == 7 && strncmp(rel, "plugins", 7) == 0 && depth < 3)
                *ret_why = "is in plugins/ but not below a plugin's own dir (plugins/NAME/X)";
        return *ret_why ? -EINVAL : 0;
}

bool broker_targets_overlap(const char *a, const char *b) {
        return streq(a, b) || path_is_below(a, b) || path_is_below(b, a);
}

static bool strv_contains(char *const *l, const char *s) {
        for (; l && *l; l++)
                if (streq(*l, s))
                        return true;
        return false;
}

/* A decimal id as the kernel's u32 options take it, without its other spellings (no sign, no 0x, no 010). */
static int parse_decimal(const char *s, size_t n, uint32_t max, uint32_t *ret) {
        uint64_t x = 0;

        if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                x = x * 10 + (uint64_t)(s[i] - '0');
        }
        if (x > max)
                return -ERANGE;
        *ret = (uint32_t)x;
        return 0;
}

static bool item_is(const char *name, size_t n, const char *key) {
        return n == strlen(key) && strncmp(name, key, n) == 0;
}

/* The host id for the container's id (value, n bytes) of a user_id=/group_id= option; else v is a refusal. */
static bool map_id(const struct broker_policy *p, const char *key, const char *value, size_t n, uint32_t host,
                   uint32_t *ret, struct broker_verdict *v) {
        uint32_t id;

        if (!value || parse_decimal(value, n, UINT32_MAX, &id) < 0) {
                deny(v, EINVAL, "FUSE option %s is not a decimal id", key);
                return false;
        }
        if (id >= p->id_count || (uint64_t)host + id >= UINT32_MAX) {
                deny(v, EINVAL, "FUSE option %s is outside the container's %" PRIu32 " ids", key, p->id_count);
                return false;
        }
        *ret = host + id;
        return true;
}

/*
 * FUSE options as the broker passes them (after its own "fd=N,"): the
 * caller's fd= taken out into v->fuse_fd, user_id/group_id mapped to host
 * ids (the container's root when missing), allow_other added.
 */
static int fuse_rewrite(const struct broker_policy *p, const char *data, struct broker_verdict *v) {
        const char *o = data ? data : "", *name, *value;
        size_t len = strlen(o), namesz, valuesz, n = 0;
        bool uid = false, gid = false, other = false;
        int fd = -1, r;
        char *out;

        /* An id grows by at most 9 digits over an item of at least 9 bytes ("user_id=0"): twice is enough. */
        out = calloc(1, 2 * len + 64); /* zeroed: a refusal half-way frees a string */
        if (!out)
                return -ENOMEM;
        v->data = out;
        while ((r = options_next(&o, &name, &namesz, &value, &valuesz)) == 0) {
                uint32_t id;

                if (item_is(name, namesz, "fd")) {
                        if (fd >= 0)
                                return deny(v, EINVAL, "FUSE options have more than one fd=");
                        if (!value || parse_decimal(value, valuesz, INT_MAX, &id) < 0)
                                return deny(v, EINVAL, "FUSE option fd is not a decimal fd");
                        fd = (int)id;
                        continue;
                }
                if (n > 0)
                        out[n++] = ',';
                if (item_is(name, namesz, "user_id") || item_is(name, namesz, "group_id")) {
                        bool is_uid = name[0] == 'u';

                        if (!map_id(p, is_uid ? "user_id" : "group_id", value, valuesz,
                                    is_uid ? p->host_uid : p->host_gid, &id, v))
                                return 0;
                        n += (size_t)sprintf(out + n, "%s=%" PRIu32, is_uid ? "user_id" : "group_id", id);
                        *(is_uid ? &uid : &gid) = true;
                        continue;
                }
                other = other || item_is(name, namesz, "allow_other");
                n += (size_t)sprintf(out + n, "%.*s%s%.*s", (int)namesz, name, value ? "=" : "", (int)valuesz,
                                     value ? value : "");
        }
        if (r < 0)
                return deny(v, EINVAL, "FUSE options have an empty item");
        if (fd < 0)
                return deny(v, EINVAL, "FUSE options have no fd=");
        if (!uid)
                n += (size_t)sprintf(out + n, "%suser_id=%" PRIu32, n > 0 ? "," : "", (uint32_t)p->host_uid);
        if (!gid)
                n += (size_t)sprintf(out + n, "%sgroup_id=%" PRIu32, n > 0 ? "," : "", (uint32_t)p->host_gid);
        if (!other)
                n += (size_t)sprintf(out + n, "%sallow_other", n > 0 ? "," : "");
        out[n] = '\0';
        if (n + FD_PREFIX_MAX >= DATA_MAX)
                return deny(v, EINVAL, "FUSE options are longer than %zu bytes", DATA_MAX - FD_PREFIX_MAX - 1);
        v->action = BROKER_DO_FUSE;
        v->fuse_fd = fd;
        return 0;
}

/* "fuse", "fuse.X" (prefix "fuse") or "fuseblk", "fuseblk.X" (prefix "fuseblk"). */
static bool is_type_family(const char *type, const char *prefix) {
        size_t n = strlen(prefix);

        return strncmp(type, prefix, n) == 0 && (type[n] == '\0' || type[n] == '.');
}

/* The old magic number in bits 16-31: the kernel's flags &= ~MS_MGC_MSK (an unsigned int) keeps bits 0-15. */
static unsigned long mount_flags(unsigned long f) {
        return (f & MS_MGC_MSK) == MS_MGC_VAL ? f & 0xffffUL : f;
}

bool broker_refuse_by_flags(enum broker_op op, unsigned long flags, struct broker_verdict *v) {
        unsigned long f = mount_flags(flags), extra;

        *v = (struct broker_verdict){ .action = BROKER_DENY, .error = EPERM, .fuse_fd = -1 };
        if (op == BROKER_OP_UMOUNT) {
                if ((extra = flags & ~(unsigned long)UMOUNT_FLAGS))
                        return deny(v, EINVAL, "umount flags 0x%lx are not allowed", extra), true;
                return false;
        }
        if (f & MS_REMOUNT)
                return deny(v, EPERM, "MS_REMOUNT is not allowed"), true;
        if (f & MS_MOVE)
                return deny(v, EPERM, "MS_MOVE is not allowed"), true;
        if (f & PROPAGATION_FLAGS)
                return deny(v, EPERM,
                            "propagation changes (MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE) are not allowed"),
                       true;
        if (f & MS_MANDLOCK)
                return deny(v, EPERM, "MS_MANDLOCK is not allowed"), true;
        if ((extra = f & ~(HARMLESS_FLAGS | MS_BIND | (f & MS_BIND ? MS_REC : 0))))
                return deny(v, EINVAL, "mount flags 0x%lx are not allowed", extra), true;
        return false;
}

static int decide_mount(const struct broker_policy *p, const struct broker_call *c, struct broker_verdict *v) {
        unsigned long f = mount_flags(c->flags), forced = p->keep_suid_dev ? 0 : MS_NOSUID | MS_NODEV;
        unsigned max = p->max_mounts ? p->max_mounts : BROKER_MAX_MOUNTS_DEFAULT;
        const char *type = c->fstype, *why = NULL, *o = c->data, *name, *value;
        size_t n = 0, namesz, valuesz;
        char subtyped[80];
        bool fuse, blk;

        if (broker_refuse_by_flags(BROKER_OP_MOUNT, c->flags, v))
                return 0;
        if (!path_ok(p, "target", c->target, v))
                return 0;
        for (char *const *m = p->mounted; m && *m; m++)
                n++;
        if (n >= max)
                return deny(v, EPERM, "at most %u mounts", max);

        if (f & MS_BIND) { /* fstype and data mean nothing to a bind */
                if (!path_ok(p, "bind source", c->source, v))
                        return 0;
                v->action = BROKER_DO_BIND;
                v->flags = f | forced;
                return 0;
        }

        if (!type)
                return deny(v, EINVAL, "fstype is a NULL pointer");
        if (fstype_validate(type, &why) < 0)
                return deny(v, EPERM, "fstype %s", why);
        if (c->data && options_validate_data(type, c->data, &why) < 0)
                return deny(v, EINVAL, "options %s", why);
        if (c->data && strlen(c->data) >= DATA_MAX)
                return deny(v, EINVAL, "options are longer than %d bytes", DATA_MAX - 1);
        if (c->source && strlen(c->source) >= PATH_MAX)
                return deny(v, ENAMETOOLONG, "source is longer than PATH_MAX");
        for (const char *s = c->source; s && *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return deny(v, EINVAL, "source contains a control character");

        blk = is_type_family(type, "fuseblk");
        fuse = blk || is_type_family(type, "fuse");
        /* "fuse" with subtype=X is "fuse.X" to the kernel; it refuses a second subtype (or one next to fuse.X). */
        while (fuse && options_next(&o, &name, &namesz, &value, &valuesz) == 0)
                if (item_is(name, namesz, "subtype")) {
                        if (type != c->fstype || strchr(type, '.') || !value)
                                return deny(v, EINVAL, "FUSE options have a subtype= the kernel would refuse");
                        type = subtyped;
                        if (snprintf(subtyped, sizeof(subtyped), "%s.%.*s", c->fstype, (int)valuesz, value) >=
                                    (int)sizeof(subtyped) ||
                            fstype_validate(type, &why) < 0)
                                return deny(v, EPERM,
                                            "fstype %s with its subtype= option is not a filesystem type name",
                                            c->fstype);
                }
        if (!strv_contains(p->types, type) && !(blk && strv_contains(p->types, "fuseblk")))
                return deny(v, EPERM, "fstype %s%s is not allowed for this container", c->fstype,
                            type != c->fstype ? " with its subtype= option" : "");

        v->flags = f | forced;
        if (fuse)
                return fuse_rewrite(p, c->data, v);
        if (c->data && !(v->data = strdup(c->data)))
                return -ENOMEM;
        v->action = BROKER_DO_MOUNT;
        return 0;
}

static int decide_umount(const struct broker_policy *p, const struct broker_call *c, struct broker_verdict *v) {
        char shown[96];

        if (broker_refuse_by_flags(BROKER_OP_UMOUNT, c->flags, v))
                return 0;
        if (!path_ok(p, "target", c->target, v))
                return 0;
        if (!strv_contains(p->mounted, c->target))
                return deny(v, EPERM, "target %s is not a mount of this container",
                            escape(c->target, shown, sizeof(shown)));
        v->action = BROKER_DO_UMOUNT;
        v->flags = c->flags | UMOUNT_NOFOLLOW;
        return 0;
}

int broker_decide(const struct broker_policy *p, const struct broker_call *c, struct broker_verdict *v) {
        int r;

        *v = (struct broker_verdict){ .action = BROKER_DENY, .error = EPERM, .fuse_fd = -1 };
        if (!p || !c)
                return deny(v, EINVAL, "no policy or no call");
        if (c->op == BROKER_OP_MOUNT)
                r = decide_mount(p, c, v);
        else if (c->op == BROKER_OP_UMOUNT)
                r = decide_umount(p, c, v);
        else
                r = deny(v, EINVAL, "unknown operation %d", (int)c->op);
        if (r < 0)
                deny(v, ENOMEM, "out of memory");
        return r;
}

void broker_verdict_done(struct broker_verdict *v) {
        if (v->data) /* options may hold a password */
                explicit_bzero(v->data, strlen(v->data));
        free(v->data);
        v->data = NULL;
}

char *broker_describe(const struct broker_call *c, const struct broker_verdict *v) {
        _cleanup_free_ char *target = NULL, *source = NULL, *masked = NULL, *opts = NULL, *words = NULL, *shown = NULL,
                            *type = NULL;
        bool allowed = v && v->action != BROKER_DENY;
        char why[sizeof(v->why)], *line;
        unsigned long flags;

        if (!c || !v || !(target = escape_dup(c->target)))
                return NULL;
        str_printable(allowed ? "allowed" : v->why, why, sizeof(why));
        if (c->op == BROKER_OP_UMOUNT) {
                if (asprintf(&line, "umount %s: %s%s", target, allowed ? "" : "refused: ", why) < 0)
                        return NULL;
                return line;
        }
        flags = allowed ? v->flags : c->flags;
        if (c->source && !(masked = secret_mask_source(c->source)))
                return NULL;
        opts = options_mask(allowed ? v->data : c->data, false);
        words = opts ? mount_options_from_ms(flags & ~(MS_BIND | MS_REC), opts) : NULL;
        source = escape_dup(masked);
        shown = escape_dup(words);
        type = escape_dup(c->fstype);
        if (!words || !source || !shown || !type)
                return NULL;
        if (asprintf(&line, "mount %s%s %s on %s%s%s%s: %s%s",
                     !(flags & MS_BIND) ? "-t "
                     : flags & MS_REC   ? "--rbind"
                                        : "--bind",
                     !(flags & MS_BIND) ? type : "", source, target, *shown ? " (" : "", shown, *shown ? ")" : "",
                     allowed ? "" : "refused: ", why) < 0)
                return NULL;
        return line;
}
