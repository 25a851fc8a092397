/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker's policy on arbitrary calls: broker_decide,
 * broker_describe and broker_verdict_done.  The input is a header (call
 * flags, switches, the mount limit) and then NUL-separated words: source,
 * target, fstype, data, and the targets already mounted.
 *
 * Invariants: a verdict other than DENY has a target strictly below the
 * kubelet dir (or the served target) with no '.', '..' or empty component,
 * a bind source under the same rules, nosuid,nodev unless the policy keeps
 * them, no flag that remounts, moves or changes propagation, FUSE options
 * without fd= and with ids inside the container's range; a refusal has an
 * errno and a one-line reason; the log line is one line; neither shows a
 * sensitive option value or the password of a user:PASSWORD@host source.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>

#include "broker-policy.h"
#include "fuzz-check.h"
#include "options.h"

#define MAX_SIZE (16 * 1024)
#define MAX_WORDS 40
#define HEADER 11
#define KUBELET "/var/lib/kubelet"
#define SERVES KUBELET "/pods/p/volumes/v/mount"
#define OTHER_TARGET KUBELET "/plugins/x/y"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Header byte 8. */
enum {
        CTL_UMOUNT = 1 << 0,
        CTL_NO_SOURCE = 1 << 1,
        CTL_NO_TARGET = 1 << 2,
        CTL_NO_FSTYPE = 1 << 3,
        CTL_NO_DATA = 1 << 4,
        CTL_KEEP_SUID_DEV = 1 << 5,
        CTL_NO_SERVES = 1 << 6, /* one target (a routed container's), not two */
        CTL_MORE_TYPES = 1 << 7,
};

static char *narrow[] = { (char *)"fuse.sshfs", (char *)"tmpfs", (char *)"cifs", (char *)"nfs", NULL };
static char *wide[] = { (char *)"fuse.sshfs", (char *)"tmpfs", (char *)"fuse", (char *)"fuseblk", NULL };

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* Our own reading of the path rules, apart from broker-policy.c's: at or below one of the targets. */
static bool path_allowed(const char *path, char *const *targets) {
        if (!path || strlen(path) >= PATH_MAX || path[0] != '/')
                return false;
        if (strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../"))
                return false;
        if (path[strlen(path) - 1] == '/' || strcmp(path + strlen(path) - 2, "/.") == 0 ||
            (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
                return false;
        for (char *const *t = targets; *t; t++)
                if (strncmp(path, *t, strlen(*t)) == 0 && (path[strlen(*t)] == '\0' || path[strlen(*t)] == '/'))
                        return true;
        return false;
}

/* Our own reading of broker_target_check's rules, for a target it took. */
static void check_target_rules(const char *t) {
        static const char *const own[] = { "pki/", "plugins_registry/", "device-plugins/", "pod-resources/",
                                           "checkpoints/" };
        const char *rel = t + strlen(KUBELET "/");
        size_t slashes = 0;

        check(strncmp(t, KUBELET "/", strlen(KUBELET "/")) == 0 && *rel);
        check(!strstr(t, "//") && !strstr(t, "/./") && !strstr(t, "/../") && t[strlen(t) - 1] != '/');
        check(strcmp(t + strlen(t) - 2, "/.") != 0 && strcmp(t + strlen(t) - 3, "/..") != 0);
        for (const char *c = rel; *c; c++)
                slashes += *c == '/';
        check(slashes >= 1);
        for (size_t i = 0; i < sizeof(own) / sizeof(*own); i++)
                check(strncmp(rel, own[i], strlen(own[i])) != 0);
        if (strncmp(rel, "pods/", 5) == 0) {
                const char *v = strchr(rel + 5, '/');

                check(v && strncmp(v, "/volumes/", 9) == 0 && slashes >= 4);
        }
        if (strncmp(rel, "plugins/", 8) == 0)
                check(slashes >= 2);
}

/* A value worth looking for in the output: long, with a character no reason or path of ours has. */
static bool telling(const char *value, size_t n) {
        if (n < 4 || memchr(value, '<', n) || memchr(value, '>', n) || memchr(value, '"', n))
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f || value[i] == '\\')
                        return false;
        for (size_t i = 0; i < n; i++)
                if (strchr("!$~%^", value[i]))
                        return true;
        return false;
}

static size_t occurrences(const char *s, const char *needle) {
        size_t k = 0;

        for (const char *p = s; p && (p = strstr(p, needle)); p++)
                k++;
        return k;
}

/* Whether needle shows up in a field of the call that is logged as it is. */
static bool in_call_elsewhere(const struct broker_call *c, const char *needle) {
        return (c->target && strstr(c->target, needle)) || (c->fstype && strstr(c->fstype, needle)) ||
               (c->source && strstr(c->source, needle));
}

/* No sensitive option value in the reason or the line (unless the call shows it elsewhere). */
static void check_no_secret(const struct broker_call *c, const char *why, const char *line) {
        const char *o = c->data, *name, *value;
        size_t namesz, valuesz;
        char v[256];

        while (o && options_next(&o, &name, &namesz, &value, &valuesz) == 0) {
                if (!value || valuesz >= sizeof(v) || !telling(value, valuesz))
                        continue;
                memcpy(v, value, valuesz);
                v[valuesz] = '\0';
                if (in_call_elsewhere(c, v) || occurrences(c->data, v) > 1)
                        continue;
                check(!strstr(why, v)); /* no option value at all */
                if (option_key_is_sensitive(name, namesz))
                        check(!strstr(line, v));
        }
        /* user:PASSWORD@host */
        if (c->source && strchr(c->source, '@') && !strstr(c->source, "://")) {
                const char *at = strrchr(c->source, '@'), *colon = memchr(c->source, ':', (size_t)(at - c->source));

                if (colon && telling(colon + 1, (size_t)(at - colon - 1)) && (size_t)(at - colon - 1) < sizeof(v)) {
                        memcpy(v, colon + 1, (size_t)(at - colon - 1));
                        v[at - colon - 1] = '\0';
                        if (!(c->target && strstr(c->target, v)) && !(c->fstype && strstr(c->fstype, v)) &&
                            !(c->data && strstr(c->data, v)) && occurrences(c->source, v) == 1)
                                check(!strstr(line, v));
                }
        }
}

static void check_fuse_data(const struct broker_policy *p, const char *out) {
        const char *o = out, *name, *value;
        size_t namesz, valuesz;
        bool other = false, uid = false, gid = false;

        check(out);
        check(strlen(out) + strlen("fd=2147483647,") < 4096);
        while (options_next(&o, &name, &namesz, &value, &valuesz) == 0) {
                bool is_uid = namesz == 7 && memcmp(name, "user_id", 7) == 0;
                bool is_gid = namesz == 8 && memcmp(name, "group_id", 8) == 0;

                check(!(namesz == 2 && memcmp(name, "fd", 2) == 0));
                other = other || (namesz == 11 && memcmp(name, "allow_other", 11) == 0);
                if (is_uid || is_gid) {
                        uint64_t id = 0, base = is_uid ? p->host_uid : p->host_gid;

                        check(value && valuesz > 0 && valuesz <= 10);
                        for (size_t i = 0; i < valuesz; i++) {
                                check(value[i] >= '0' && value[i] <= '9');
                                id = id * 10 + (uint64_t)(value[i] - '0');
                        }
                        check(id >= base && (id - base < p->id_count || id == base));
                        uid = uid || is_uid;
                        gid = gid || is_gid;
                }
        }
        check(other && uid && gid);
}

static void check_verdict(const struct broker_policy *p, const struct broker_call *c, const struct broker_verdict *v,
                          size_t n_mounted) {
        const unsigned long never =
                MS_REMOUNT | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE | MS_MANDLOCK | ~0xffffffffUL;

        check(memchr(v->why, '\0', sizeof(v->why)));
        if (v->action == BROKER_DENY) {
                check(v->error == EPERM || v->error == EINVAL || v->error == EFAULT || v->error == ENAMETOOLONG);
                check(v->why[0] && !has_control(v->why));
                check(!v->data && v->fuse_fd == -1);
                return;
        }
        check(path_allowed(c->target, p->targets));
        if (v->action == BROKER_DO_UMOUNT) {
                bool found = false;

                check(c->op == BROKER_OP_UMOUNT);
                check((v->flags & ~(unsigned long)(MNT_FORCE | MNT_DETACH | UMOUNT_NOFOLLOW)) == 0);
                check(v->flags & UMOUNT_NOFOLLOW);
                for (char *const *m = p->mounted; m && *m; m++)
                        found = found || strcmp(*m, c->target) == 0;
                check(found);
                return;
        }
        check(c->op == BROKER_OP_MOUNT);
        check(n_mounted < (p->max_mounts ? p->max_mounts : BROKER_MAX_MOUNTS_DEFAULT));
        check((v->flags & never) == 0);
        if (!p->keep_suid_dev)
                check((v->flags & (MS_NOSUID | MS_NODEV)) == (MS_NOSUID | MS_NODEV));
        switch (v->action) {
        case BROKER_DO_BIND:
                check(v->flags & MS_BIND);
                check(path_allowed(c->source, p->targets));
                check(!v->data);
                break;
        case BROKER_DO_FUSE:
                check(!(v->flags & (MS_BIND | MS_REC)));
                check(v->fuse_fd >= 0);
                check_fuse_data(p, v->data);
                check(c->fstype && strncmp(c->fstype, "fuse", 4) == 0);
                break;
        case BROKER_DO_MOUNT:
                check(!(v->flags & (MS_BIND | MS_REC)));
                check(v->fuse_fd == -1);
                check((!v->data && !c->data) || (v->data && c->data && strcmp(v->data, c->data) == 0));
                check(c->fstype && strncmp(c->fstype, "fuse", 4) != 0);
                break;
        default:
                check(false);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf, *words[MAX_WORDS + 2], *line;
        struct broker_policy p = { .kubelet_dir = KUBELET, .host_uid = 0x70000000, .host_gid = 0x70000000 };
        struct broker_call c = { 0 };
        struct broker_verdict v;
        uint64_t flags = 0;
        size_t n_mounted = 0;
        int argc;
        uint8_t ctl;

        if (size < HEADER || size > MAX_SIZE)
                return 0;
        for (int i = 7; i >= 0; i--)
                flags = flags << 8 | data[i];
        ctl = data[8];
        p.max_mounts = data[9] % 20;
        p.id_count = data[10] < 200 ? 65536 : data[10] - 200u;
        if (data[10] == 255) /* ids near the top of the range */
                p.host_uid = p.host_gid = UINT32_MAX - 100;
        p.keep_suid_dev = ctl & CTL_KEEP_SUID_DEV;
        p.targets = ctl & CTL_NO_SERVES ? (char *[]){ (char *)SERVES, NULL }
                                        : (char *[]){ (char *)SERVES, (char *)OTHER_TARGET, NULL };
        p.types = ctl & CTL_MORE_TYPES ? wide : narrow;

        buf = fuzz_argv(data + HEADER, size - HEADER, words, MAX_WORDS, &argc);
        c.op = ctl & CTL_UMOUNT ? BROKER_OP_UMOUNT : BROKER_OP_MOUNT;
        c.flags = (unsigned long)flags;
        c.source = ctl & CTL_NO_SOURCE || argc <= 1 ? NULL : words[1];
        c.target = ctl & CTL_NO_TARGET || argc <= 2 ? NULL : words[2];
        c.fstype = ctl & CTL_NO_FSTYPE || argc <= 3 ? NULL : words[3];
        c.data = ctl & CTL_NO_DATA || argc <= 4 ? NULL : words[4];
        p.mounted = argc > 5 ? words + 5 : NULL;
        for (char *const *m = p.mounted; m && *m; m++)
                n_mounted++;

        const char *why;
        if (broker_target_check(KUBELET, c.target, &why) == 0)
                check_target_rules(c.target);
        else
                check(why && !has_control(why));
        check(broker_decide(&p, &c, &v) == 0);
        check_verdict(&p, &c, &v, n_mounted);
        line = broker_describe(&c, &v);
        check(line);
        check(!has_control(line));
        check(strstr(line, v.action == BROKER_DENY ? ": refused: " : ": allowed"));
        check_no_secret(&c, v.why, line);
        free(line);
        broker_verdict_done(&v);
        check(!v.data);
        free(buf);
        return 0;
}
