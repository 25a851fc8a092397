/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Validation and masking of mount arguments that come from outside. */
#include <ctype.h>

#include "options.h"

/*
 * The one vocabulary of secrets: keys whose values are secrets in the
 * filesystems kubelets mount, used for mount options (list, messages), VCS
 * command lines and environment variables (secrets.c).
 */
/* password2: cifs's alternate password, used while rotating. */
static const char *const sensitive_keys[] = {
        "password", "pass",  "passwd",      "passphrase", "secret", "secretkey",
        "key",      "token", "credentials", "cred",       "auth",   "password2",
};

/* One word of a key: in the list, or ending in one of the suffixes ("mykey", "sessiontoken"). */
static bool word_is_sensitive(const char *key, size_t n) {
        static const char *const suffixes[] = { "password", "passwd", "passphrase", "secret", "key", "token" };

        for (size_t i = 0; i < ELEMENTSOF(sensitive_keys); i++)
                if (strlen(sensitive_keys[i]) == n && strncasecmp(key, sensitive_keys[i], n) == 0)
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t m = strlen(suffixes[i]);
                if (n > m && strncasecmp(key + n - m, suffixes[i], m) == 0)
                        return true;
        }
        return false;
}

/*
 * The key as a whole, or any of its words split at '_', '-' and '.':
 * "AWS_SECRET_ACCESS_KEY", "SECRET_KEY_BASE", "--password", "x-passwd".
 * Names of files that hold secrets ("secretfile", "keyfile") are not secrets.
 */
bool option_key_is_sensitive(const char *key, size_t n) {
        size_t start = 0;

        if (word_is_sensitive(key, n))
                return true;
        for (size_t i = 0; i <= n; i++)
                if (i == n || key[i] == '_' || key[i] == '-' || key[i] == '.') {
                        if (i > start && (start > 0 || i < n) && word_is_sensitive(key + start, i - start))
                                return true;
                        start = i + 1;
                }
        return false;
}

static int validate(const char *options, bool allow_backslash, const char **ret_why) {
        bool quoted = false;

        for (const unsigned char *p = (const unsigned char *)options; p && *p; p++) {
                if (*p < 0x20 || *p == 0x7f) {
                        *ret_why = "contains a control character";
                        return -EINVAL;
                }
                if (*p == '\\' && !allow_backslash) {
                        *ret_why = "contains a backslash";
                        return -EINVAL;
                }
                if (*p == '"')
                        quoted = !quoted;
        }
        if (quoted) {
                *ret_why = "has an unbalanced quote";
                return -EINVAL;
        }
        return 0;
}

int options_validate(const char *options, const char **ret_why) {
        return validate(options, false, ret_why);
}

/*
 * cifs and smb3 take a backslash: mount.cifs passes unc=\\HOST\SHARE, and a
 * backslash means nothing to the kernel's option parser nor to ours (only
 * quotes do).
 */
int options_validate_data(const char *fstype, const char *options, const char **ret_why) {
        return validate(options, streq(fstype, "cifs") || streq(fstype, "smb3"), ret_why);
}

int argument_validate(const char *what, const char *value, const char **ret_why) {
        (void)what;
        if (!value || !*value) {
                *ret_why = "is empty";
                return -EINVAL;
        }
        if (value[0] == '-') {
                *ret_why = "starts with '-'";
                return -EINVAL;
        }
        for (const unsigned char *p = (const unsigned char *)value; *p; p++)
                if (*p < 0x20 || *p == 0x7f) {
                        *ret_why = "contains a control character";
                        return -EINVAL;
                }
        return 0;
}

int fstype_validate(const char *fstype, const char **ret_why) {
        if (!fstype || !*fstype || fstype[0] == '-' || fstype[0] == '.' || strlen(fstype) > 64) {
                *ret_why = "is not a filesystem type name";
                return -EINVAL;
        }
        for (const char *p = fstype; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("._+-", *p)) {
                        *ret_why = "is not a filesystem type name";
                        return -EINVAL;
                }
        return 0;
}

/*
 * The option splitter of libmount's mnt_optstr_next_option(), item for item
 * (a unit test and the fuzzer compare the two): commas end an item except
 * inside double quotes, the first '=' after the first byte separates the
 * value, leading commas are skipped, and an item still inside an open quote
 * at the end is dropped.  Kept here so that the mount path does not load
 * libmount (0.5 ms per exec, see docs/benchmarks.md).
 */
int options_next(const char **optstr, const char **name, size_t *namesz, const char **value, size_t *valuesz) {
        const char *p = *optstr, *start = NULL, *sep = NULL, *stop = NULL;
        bool quoted = false;

        *name = *value = NULL;
        *namesz = *valuesz = 0;
        while (p && *p == ',')
                p++;
        for (; p && *p; p++) {
                if (!start)
                        start = p;
                if (*p == '"')
                        quoted = !quoted;
                if (quoted)
                        continue;
                if (!sep && p > start && *p == '=')
                        sep = p;
                if (*p == ',')
                        stop = p;
                else if (p[1] == '\0')
                        stop = p + 1;
                if (!stop)
                        continue;
                if (stop <= start)
                        return -EINVAL;
                *name = start;
                *namesz = (size_t)((sep ? sep : stop) - start);
                if (sep) {
                        *value = sep + 1;
                        *valuesz = (size_t)(stop - sep - 1);
                }
                *optstr = *stop ? stop + 1 : stop;
                return 0;
        }
        return 1;
}

bool options_has(const char *options, const char *key) {
        const char *p = options, *n, *v;
        size_t nsz, vsz;

        while (options_next(&p, &n, &nsz, &v, &vsz) == 0)
                if (nsz == strlen(key) && strncmp(n, key, nsz) == 0)
                        return true;
        return false;
}

int options_take(char *options, const char *const *keys, char **ret_value) {
        const char *p = options, *name, *value;
        size_t namesz, valuesz, len = strlen(options);
        char *w = options;
        int r = 0;

        *ret_value = NULL;
        for (;;) {
                const char *item = p;
                bool take = false;
                int end = options_next(&p, &name, &namesz, &value, &valuesz);

                if (end) {
                        /* What options_next() does not split (an open quote) is kept as it is. */
                        item += strspn(item, ",");
                        name = item;
                        namesz = strlen(item);
                        value = NULL;
                        if (!namesz)
                                break;
                }
                for (const char *const *k = keys; value && *k && !take; k++)
                        take = strlen(*k) == namesz && strncmp(*k, name, namesz) == 0;
                if (take) {
                        free(*ret_value);
                        if (!(*ret_value = strndup(value, valuesz))) {
                                r = -ENOMEM;
                                break;
                        }
                        r++;
                        continue;
                }
                size_t n = (size_t)((value ? value + valuesz : name + namesz) - name);
                if (w > options)
                        *w++ = ',';
                memmove(w, name, n);
                w += n;
                if (end)
                        break;
        }
        /* Nothing of what was taken stays behind the end. */
        explicit_bzero(w, (size_t)(options + len - w));
        return r;
}

/* Appends "name[=value]" to *out with value masked when the key is sensitive. */
static int append_masked(char **out, const char *name, size_t namesz, const char *value, size_t valuesz,
                         bool force_mask) {
        char *n;
        bool mask = value && (force_mask || option_key_is_sensitive(name, namesz));

        if (force_mask && !value) { /* a bare item may be the secret itself */
                name = "<masked>";
                namesz = 8;
        }

        if (asprintf(&n, "%s%s%.*s%s%.*s", *out && **out ? *out : "", *out && **out ? "," : "", (int)namesz, name,
                     value ? "=" : "", mask ? 8 : (int)valuesz, mask ? "<masked>" : (value ? value : "")) < 0)
                return -ENOMEM;
        free(*out);
        *out = n;
        return 0;
}

char *options_mask(const char *options, bool mask_all_values) {
        const char *p = options ? options : "", *name, *value;
        char *out = strdup("");
        size_t namesz, valuesz;

        if (!out)
                return NULL;
        while (options_next(&p, &name, &namesz, &value, &valuesz) == 0)
                if (append_masked(&out, name, namesz, value, valuesz, mask_all_values) < 0) {
                        free(out);
                        return NULL;
                }
        return out;
}

KM_EXPORT char *km_options_mask(const char *options) {
        return options_mask(options, false);
}
