/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount vocabulary in one table: option words (ro, nosuid, relatime,
 * bind, rbind ...), their MS_* flags, their MOUNT_ATTR_* meaning in the new
 * mount API, and the propagation words (shared, rslave ...) with their
 * KM_MAKE_* kinds.  The OCI spec, the new mount API, the launcher, the
 * mount(8) grammar, the VCS API and the CLI all read it here.
 */
#pragma once

#include <sys/mount.h>

#include "syscalls.h"
#include "util.h"

struct mount_flag {
        const char *name;
        /* MS_* bits the word sets (or clears, with .clear); for a propagation word MS_SHARED ..., maybe | MS_REC */
        unsigned long ms;
        bool clear;
        bool propagation; /* one of the eight propagation words, of .kind */
        enum km_propagation_kind kind;
        bool attr; /* also a mount attribute (mount_setattr, fsmount): attr_set and attr_clr */
        uint64_t attr_set, attr_clr;
        unsigned km_flag; /* the KM_MOUNT_* flag that stands for the word (mount -B, -R, -r, -w), or 0 */
};

/* The entry for a word (exact, case-sensitive), or NULL; lookupn takes the first n bytes of word. */
const struct mount_flag *mount_flag_lookup(const char *word);
const struct mount_flag *mount_flag_lookupn(const char *word, size_t n);
/* The whole table (*ret_n entries), for listings and tests. */
const struct mount_flag *mount_flags_all(size_t *ret_n);

/* Applies an attribute word to *attr as an option string does: a later word wins over an earlier one. */
void mount_attr_apply(struct mount_attr *attr, const struct mount_flag *f);
/* The mount attributes that MS_* flags ask for (MS_RDONLY -> MOUNT_ATTR_RDONLY, MS_NOATIME ...). */
struct mount_attr mount_attr_from_ms(unsigned long ms);
/* Those attributes as words, then extra ("ro,nosuid,relatime,mode=755"); NULL on ENOMEM.  free(). */
char *mount_options_from_ms(unsigned long ms, const char *extra);

/* options, then the words that KM_MOUNT_* flags stand for ("bind", "ro" ...); NULL on ENOMEM.  free(). */
char *mount_options_from_km_flags(const char *options, unsigned km_flags);

/* MS_SHARED, MS_SLAVE, MS_PRIVATE or MS_UNBINDABLE for a KM_MAKE_* kind; 0 for anything else. */
unsigned long mount_propagation_ms(enum km_propagation_kind kind);
/* The word for a propagation ("rshared" for MS_SHARED | MS_REC), or NULL. */
const char *mount_propagation_word(unsigned long ms);
/* MS_SHARED/MS_SLAVE/MS_UNBINDABLE (mountinfo, statmount) as KM_PROPAGATION_* flags. */
unsigned propagation_from_ms(uint64_t ms);
