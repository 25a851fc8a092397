/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount option validation and masking on arbitrary strings:
 * options_validate, options_mask (both modes), km_options_mask,
 * argument_validate, fstype_validate, option_key_is_sensitive, and
 * options_next against libmount's mnt_optstr_next_option (same split),
 * options_take (what it takes is gone and zeroed, the count is right).
 *
 * Invariant checked on input that passes options_validate and has no
 * quotes: in the output every item whose key is sensitive has the value
 * "<masked>", and with mask_all_values no value and no bare item survives.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <libmount.h>

#include "fuzz-check.h"
#include "options.h"

#define MAX_INPUT (64 * 1024)
#define MASKED "<masked>"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every item of a masked, quote-free option string obeys the masking rules. */
static void check_masked(const char *out, bool all) {
        const char *p = out;

        while (*p) {
                size_t n = strcspn(p, ",");
                /* libmount's split: the first '=' after the first character. */
                const char *eq = n > 1 ? memchr(p + 1, '=', n - 1) : NULL;

                check(n > 0); /* no empty items */
                if (eq) {
                        size_t keysz = eq - p, valuesz = n - keysz - 1;
                        if (all || option_key_is_sensitive(p, keysz))
                                check(valuesz == strlen(MASKED) && memcmp(eq + 1, MASKED, valuesz) == 0);
                } else if (all) {
                        check(n == strlen(MASKED) && memcmp(p, MASKED, n) == 0);
                }
                p += n;
                if (*p == ',')
                        p++;
        }
}

static void fuzz_mask(const char *s, bool checkable) {
        char *shown = options_mask(s, false), *all = options_mask(s, true), *pub = km_options_mask(s);

        check(shown && all && pub);
        check(strcmp(shown, pub) == 0);
        if (checkable) {
                check_masked(shown, false);
                check_masked(all, true);
        }
        free(shown);
        free(all);
        free(pub);
}

/*
 * options_take(): it takes as many items as options_next() finds with the
 * keys, none is left after, and the bytes it freed are zero.
 */
static void check_take(const char *s) {
        static const char *const keys[] = { "password", "pass", NULL };
        size_t len = strlen(s), namesz, valuesz;
        const char *p = s, *name, *value;
        char *copy = strdup(s), *taken = NULL;
        int n = 0, r;

        check(copy);
        while (options_next(&p, &name, &namesz, &value, &valuesz) == 0)
                n += value &&
                     ((namesz == 8 && !strncmp(name, "password", 8)) || (namesz == 4 && !strncmp(name, "pass", 4)));
        r = options_take(copy, keys, &taken);
        check(r == -ENOMEM || (r == n && !taken == !n));
        check(strlen(copy) <= len);
        for (size_t i = strlen(copy); i < len; i++)
                check(copy[i] == '\0');
        if (r > 0) {
                char *again = NULL;
                check(options_take(copy, keys, &again) == 0 && !again);
        }
        free(taken);
        free(copy);
}

/* options_next() splits exactly as libmount's mnt_optstr_next_option(). */
static void check_same_split(char *s) {
        const char *ours = s, *n1, *v1;
        char *theirs = s, *n2, *v2;
        size_t n1sz, v1sz, n2sz, v2sz;

        for (;;) {
                int a = options_next(&ours, &n1, &n1sz, &v1, &v1sz);
                int b = mnt_optstr_next_option(&theirs, &n2, &n2sz, &v2, &v2sz);
                check(a == b);
                if (a != 0)
                        return;
                check(n1 == n2 && n1sz == n2sz);
                check((!v1 && !v2) || (v1 == v2 && v1sz == v2sz));
                check(ours == theirs);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *why = NULL;
        char *s;
        int r;

        if (size > MAX_INPUT)
                return 0;
        (void)option_key_is_sensitive((const char *)data, size);

        s = malloc(size + 1);
        check(s);
        memcpy(s, data, size);
        s[size] = '\0';

        check_take(s);
        check_same_split(s);
        r = options_validate(s, &why);
        check(r == 0 || (r == -EINVAL && why));
        /* The validated form is quote-free and control-free: masking must hold exactly. */
        fuzz_mask(s, r == 0 && !strchr(s, '"') && !strchr(s, '\\'));

        why = NULL;
        r = argument_validate("source", s, &why);
        check(r == 0 || (r == -EINVAL && why));
        if (r == 0)
                check(s[0] != '-' && s[0] != '\0');

        why = NULL;
        r = fstype_validate(s, &why);
        check(r == 0 || (r == -EINVAL && why));
        if (r == 0)
                check(!strchr(s, ',') && !strchr(s, ' ') && s[0] != '-');

        free(s);
        return 0;
}
