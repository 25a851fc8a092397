/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Capability sets of a container process, through libcap. */
#include <ctype.h>
#include <pthread.h>
#include <strings.h>

#include "caps.h"
#include "libcap-dl.h"

DEFINE_DLOPEN(libcap, "libcap.so.2", KM_LIBCAP_SYMBOLS)

int caps_load(struct km_error *err) {
        if (dlopen_libcap() < 0)
                return error_set_plain(err, -EOPNOTSUPP, "capabilities: cannot load libcap (libcap.so.2)");
        return 0;
}

/* cap_t is a pointer typedef; cap_free() takes any libcap allocation. */
DEFINE_CLEANUP(struct _cap_struct, cap_free)

static void cap_free_strp(char **p) {
        if (*p)
                cap_free(*p);
}

/* Our sets are 64-bit masks. */
#define CAPS_MAX 64

/* The number of capabilities the running kernel knows (libcap probes it once). */
static int caps_kernel_count(void) {
        int n = cap_max_bits();

        return n < 0 ? 0 : n > CAPS_MAX ? CAPS_MAX : n;
}

/* Upper-case names, filled once: cap_to_name() allocates, callers want static strings. */
static char cap_names[CAPS_MAX][32];
static pthread_once_t cap_names_once = PTHREAD_ONCE_INIT;

static void cap_names_fill(void) {
        int last = CAP_LAST_CAP;

        if (caps_kernel_count() - 1 > last)
                last = caps_kernel_count() - 1;
        for (int i = 0; i <= last && i < CAPS_MAX; i++) {
                _cleanup_(cap_free_strp) char *s = cap_to_name(i);

                /* libcap spells caps it has no name for as a number. */
                if (!s || strncasecmp(s, "cap_", 4) != 0 || strlen(s) >= sizeof(cap_names[i]))
                        continue;
                for (size_t j = 0; s[j]; j++)
                        cap_names[i][j] = toupper((unsigned char)s[j]);
        }
}

const char *caps_to_name(int cap) {
        if (cap < 0 || cap >= CAPS_MAX || dlopen_libcap() < 0)
                return NULL;
        pthread_once(&cap_names_once, cap_names_fill);
        return cap_names[cap][0] ? cap_names[cap] : NULL;
}

int caps_from_name(const char *name) {
        const char *canonical;
        cap_value_t v;

        if (!name)
                return -EINVAL;
        if (dlopen_libcap() < 0)
                return -EOPNOTSUPP;
        if (cap_from_name(name, &v) < 0 || v < 0 || v >= CAPS_MAX)
                return -EINVAL;
        /* libcap also takes numbers ("12"), trailing junk ("cap_chown "), prefixes: names only here. */
        canonical = caps_to_name(v);
        if (!canonical || strcasecmp(canonical, name) != 0)
                return -EINVAL;
        return v;
}

/* "CAP_X", or the number for a capability libcap has no name for. */
static const char *cap_display(int cap, char *buf, size_t size) {
        const char *n = caps_to_name(cap);

        if (n)
                return n;
        snprintf(buf, size, "capability %d", cap);
        return buf;
}

static int caps_set_flags(cap_t c, cap_flag_t flag, uint64_t mask, int count) {
        for (int i = 0; i < count; i++) {
                cap_value_t v = i;

                if ((mask & (1ULL << i)) && cap_set_flag(c, flag, 1, &v, CAP_SET) < 0)
                        return -errno;
        }
        return 0;
}

int caps_apply(const struct caps_sets *sets, struct km_error *err) {
        _cleanup_(cap_freep) struct _cap_struct *c = NULL;
        int count;
        uint64_t known;
        char buf[32];
        int r;

        /* Checked, never loaded here: we are in the container (caps_load()). */
        if (!__atomic_load_n(&libcap_ready, __ATOMIC_ACQUIRE))
                return error_set_plain(err, -EOPNOTSUPP, "capabilities: libcap was not loaded before the fork");
        count = caps_kernel_count();
        known = count >= CAPS_MAX ? UINT64_MAX : (1ULL << count) - 1;

        /* The bounding set first: dropping needs CAP_SETPCAP, which the next step may remove. */
        for (int i = 0; i < count; i++) {
                if (sets->bounding & (1ULL << i))
                        continue;
                r = cap_get_bound(i);
                if (r == 0)
                        continue;
                /* errno first: naming the capability may call into libcap. */
                if (r < 0 || cap_drop_bound(i) < 0) {
                        r = -errno;
                        return error_set(err, r, "capabilities: drop %s from the bounding set",
                                         cap_display(i, buf, sizeof(buf)));
                }
        }

        c = cap_init();
        if (!c)
                return error_set(err, -ENOMEM, "capabilities: allocate a capability state");
        if ((r = caps_set_flags(c, CAP_EFFECTIVE, sets->effective & known, count)) < 0 ||
            (r = caps_set_flags(c, CAP_PERMITTED, sets->permitted & known, count)) < 0 ||
            (r = caps_set_flags(c, CAP_INHERITABLE, sets->inheritable & known, count)) < 0)
                return error_set(err, r, "capabilities: build the capability state");
        if (cap_set_proc(c) < 0)
                return error_set(err, -errno, "capabilities: set the effective, permitted and inheritable sets");

        if (cap_reset_ambient() < 0) {
                r = -errno;
                /* Kernels before 4.3 have no ambient set: fine unless one is asked for. */
                if (CAP_AMBIENT_SUPPORTED() || (sets->ambient & known) != 0)
                        return error_set(err, r, "capabilities: clear the ambient set");
        }
        for (int i = 0; i < count; i++)
                if ((sets->ambient & (1ULL << i)) && cap_set_ambient(i, CAP_SET) < 0) {
                        r = -errno;
                        return error_set(err, r, "capabilities: raise %s in the ambient set",
                                         cap_display(i, buf, sizeof(buf)));
                }
        return 0;
}

int caps_get_current(struct caps_sets *ret) {
        _cleanup_(cap_freep) struct _cap_struct *c = NULL;
        struct caps_sets s = {};
        int count;

        if (dlopen_libcap() < 0)
                return -EOPNOTSUPP;
        count = caps_kernel_count();
        c = cap_get_proc();
        if (!c)
                return -errno;
        for (int i = 0; i < count; i++) {
                uint64_t bit = 1ULL << i;
                cap_flag_value_t v;

                if (cap_get_flag(c, i, CAP_EFFECTIVE, &v) < 0)
                        return -errno;
                if (v == CAP_SET)
                        s.effective |= bit;
                if (cap_get_flag(c, i, CAP_PERMITTED, &v) < 0)
                        return -errno;
                if (v == CAP_SET)
                        s.permitted |= bit;
                if (cap_get_flag(c, i, CAP_INHERITABLE, &v) < 0)
                        return -errno;
                if (v == CAP_SET)
                        s.inheritable |= bit;
                if (cap_get_bound(i) > 0)
                        s.bounding |= bit;
                /* < 0 without ambient support: an empty set. */
                if (cap_get_ambient(i) > 0)
                        s.ambient |= bit;
        }
        *ret = s;
        return 0;
}
