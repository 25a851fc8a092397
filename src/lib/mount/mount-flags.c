/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount vocabulary (see mount-flags.h). */
#include "mount-flags.h"

#define SETS(n, f)                                                                                                     \
        { .name = (n), .ms = (f) }
#define CLEARS(n, f)                                                                                                   \
        { .name = (n), .ms = (f), .clear = true }
/* A word that a KM_MOUNT_* flag (mount -B, -R, -r, -w) also stands for. */
#define SETS_KM(n, f, k)                                                                                               \
        { .name = (n), .ms = (f), .km_flag = (k) }
/* A word that is also a mount attribute: what it sets and clears there. */
#define ATTR_KM(n, f, c, set, clr, k)                                                                                  \
        { .name = (n), .ms = (f), .clear = (c), .attr = true, .attr_set = (set), .attr_clr = (clr), .km_flag = (k) }
#define ATTR(n, f, c, set, clr) ATTR_KM(n, f, c, set, clr, 0)
#define PROPAGATION(n, f, k)                                                                                           \
        { .name = (n), .ms = (f), .propagation = true, .kind = (k) }

/*
 * The attribute words that set a flag are in the order mount_options_from_ms()
 * writes them.  atime, norelatime and nostrictatime have no attribute: the
 * new mount API leaves them to libmount, as it did before this table.
 */
static const struct mount_flag table[] = {
        SETS("defaults", 0),
        SETS_KM("bind", MS_BIND, KM_MOUNT_BIND),
        SETS_KM("rbind", MS_BIND | MS_REC, KM_MOUNT_RBIND),
        SETS("remount", MS_REMOUNT),
        ATTR_KM("ro", MS_RDONLY, false, MOUNT_ATTR_RDONLY, 0, KM_MOUNT_READ_ONLY),
        ATTR_KM("rw", MS_RDONLY, true, 0, MOUNT_ATTR_RDONLY, KM_MOUNT_READ_WRITE),
        ATTR("nosuid", MS_NOSUID, false, MOUNT_ATTR_NOSUID, 0),
        ATTR("suid", MS_NOSUID, true, 0, MOUNT_ATTR_NOSUID),
        ATTR("nodev", MS_NODEV, false, MOUNT_ATTR_NODEV, 0),
        ATTR("dev", MS_NODEV, true, 0, MOUNT_ATTR_NODEV),
        ATTR("noexec", MS_NOEXEC, false, MOUNT_ATTR_NOEXEC, 0),
        ATTR("exec", MS_NOEXEC, true, 0, MOUNT_ATTR_NOEXEC),
        SETS("sync", MS_SYNCHRONOUS),
        CLEARS("async", MS_SYNCHRONOUS),
        SETS("dirsync", MS_DIRSYNC),
        SETS("mand", MS_MANDLOCK),
        CLEARS("nomand", MS_MANDLOCK),
        /* The three atime modes are one field of the attributes: each clears the others. */
        ATTR("noatime", MS_NOATIME, false, MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME),
        CLEARS("atime", MS_NOATIME),
        ATTR("nodiratime", MS_NODIRATIME, false, MOUNT_ATTR_NODIRATIME, 0),
        ATTR("diratime", MS_NODIRATIME, true, 0, MOUNT_ATTR_NODIRATIME),
        ATTR("relatime", MS_RELATIME, false, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME),
        CLEARS("norelatime", MS_RELATIME),
        ATTR("strictatime", MS_STRICTATIME, false, MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME),
        CLEARS("nostrictatime", MS_STRICTATIME),
        ATTR("nosymfollow", MS_NOSYMFOLLOW, false, MOUNT_ATTR_NOSYMFOLLOW, 0),
        ATTR("symfollow", MS_NOSYMFOLLOW, true, 0, MOUNT_ATTR_NOSYMFOLLOW),
        PROPAGATION("shared", MS_SHARED, KM_MAKE_SHARED),
        PROPAGATION("rshared", MS_SHARED | MS_REC, KM_MAKE_SHARED),
        PROPAGATION("slave", MS_SLAVE, KM_MAKE_SLAVE),
        PROPAGATION("rslave", MS_SLAVE | MS_REC, KM_MAKE_SLAVE),
        PROPAGATION("private", MS_PRIVATE, KM_MAKE_PRIVATE),
        PROPAGATION("rprivate", MS_PRIVATE | MS_REC, KM_MAKE_PRIVATE),
        PROPAGATION("unbindable", MS_UNBINDABLE, KM_MAKE_UNBINDABLE),
        PROPAGATION("runbindable", MS_UNBINDABLE | MS_REC, KM_MAKE_UNBINDABLE),
};

const struct mount_flag *mount_flag_lookupn(const char *word, size_t n) {
        for (size_t i = 0; word && i < ELEMENTSOF(table); i++)
                if (strlen(table[i].name) == n && strncmp(word, table[i].name, n) == 0)
                        return &table[i];
        return NULL;
}

const struct mount_flag *mount_flag_lookup(const char *word) {
        return word ? mount_flag_lookupn(word, strlen(word)) : NULL;
}

const struct mount_flag *mount_flags_all(size_t *ret_n) {
        *ret_n = ELEMENTSOF(table);
        return table;
}

void mount_attr_apply(struct mount_attr *attr, const struct mount_flag *f) {
        attr->attr_clr = (attr->attr_clr & ~f->attr_set) | f->attr_clr;
        attr->attr_set = (attr->attr_set & ~f->attr_clr) | f->attr_set;
}

/* An attribute word that the flags ask for: one that sets a flag present in ms. */
static bool asked_for(const struct mount_flag *f, unsigned long ms) {
        return f->attr && !f->clear && f->ms && (ms & f->ms) == f->ms;
}

struct mount_attr mount_attr_from_ms(unsigned long ms) {
        struct mount_attr attr = {};

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (asked_for(&table[i], ms))
                        mount_attr_apply(&attr, &table[i]);
        return attr;
}

char *mount_options_from_ms(unsigned long ms, const char *extra) {
        _cleanup_free_ char *s = strdup("");

        for (size_t i = 0; s && i < ELEMENTSOF(table); i++)
                if (asked_for(&table[i], ms)) {
                        char *n = strjoin_opts(s, table[i].name);
                        free(s);
                        s = n;
                }
        return s ? strjoin_opts(s, extra) : NULL;
}

char *mount_options_from_km_flags(const char *options, unsigned km_flags) {
        size_t n = (options ? strlen(options) : 0) + 1;
        char *s;

        /* One allocation: options may hold secrets, which no freed copy should keep. */
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].km_flag & km_flags)
                        n += strlen(table[i].name) + 1;
        s = malloc(n);
        if (!s)
                return NULL;
        strcpy(s, options ? options : "");
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].km_flag & km_flags) {
                        if (*s)
                                strcat(s, ",");
                        strcat(s, table[i].name);
                }
        return s;
}

unsigned long mount_propagation_ms(enum km_propagation_kind kind) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].propagation && table[i].kind == kind)
                        return table[i].ms & ~MS_REC;
        return 0;
}

const char *mount_propagation_word(unsigned long ms) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].propagation && table[i].ms == ms)
                        return table[i].name;
        return NULL;
}

unsigned propagation_from_ms(uint64_t ms) {
        return (ms & MS_SHARED ? KM_PROPAGATION_SHARED : 0) | (ms & MS_SLAVE ? KM_PROPAGATION_SLAVE : 0) |
               (ms & MS_UNBINDABLE ? KM_PROPAGATION_UNBINDABLE : 0);
}

KM_EXPORT const char *km_propagation_name(unsigned p) {
        /* Spelled as findmnt -o PROPAGATION prints it. */
        switch (p & (KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE | KM_PROPAGATION_UNBINDABLE)) {
        case KM_PROPAGATION_SHARED:
                return "shared";
        case KM_PROPAGATION_SLAVE:
                return "private,slave";
        case KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE:
                return "shared,slave";
        case KM_PROPAGATION_UNBINDABLE:
                return "private,unbindable";
        case KM_PROPAGATION_SLAVE | KM_PROPAGATION_UNBINDABLE:
                return "private,slave,unbindable";
        case KM_PROPAGATION_SHARED | KM_PROPAGATION_UNBINDABLE:
                return "shared,unbindable";
        case KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE | KM_PROPAGATION_UNBINDABLE:
                return "shared,slave,unbindable";
        default:
                return "private";
        }
}
