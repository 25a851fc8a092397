/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Masking and scrubbing of secrets in command lines and environments (see secrets.h). */
#include <ctype.h>

#include "options.h"
#include "secrets.h"

/* A range [start, end) of secret bytes, reported in increasing order, never overlapping. */
typedef int (*span_fn)(size_t start, size_t end, void *userdata);

static bool is_key_char(char c) {
        return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Where a shell word ends: blanks and the operators that separate commands. */
static bool is_shell_break(char c) {
        return is_blank(c) || (c && strchr(";&|()`", c));
}

/* mount's -oKEY=VALUE: the key without "-o" is sensitive ("-opass=x"). */
static bool key_is_sensitive(const char *k, size_t n) {
        return option_key_is_sensitive(k, n) ||
               (n > 2 && k[0] == '-' && (k[1] == 'o' || k[1] == 'O') && option_key_is_sensitive(k + 2, n - 2));
}

/* NAME of NAME=VALUE as environment variables are named: [A-Z_][A-Z0-9_]*. */
static bool is_env_name(const char *k, size_t n) {
        if (n == 0 || isdigit((unsigned char)k[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isupper((unsigned char)k[i]) || isdigit((unsigned char)k[i]) || k[i] == '_'))
                        return false;
        return true;
}

enum context { OPTIONS, SHELL, QUOTED, WHOLE };

/* The end of a value that starts at s[i], read as CONTEXT says (q: the quote of QUOTED). */
static size_t value_end(const char *s, size_t i, enum context ctx, char q) {
        char quote = 0;

        switch (ctx) {
        case WHOLE:
                return i + strlen(s + i);
        case QUOTED:
                for (; s[i] && s[i] != q; i++)
                        if (q == '"' && s[i] == '\\' && s[i + 1])
                                i++;
                return i;
        case OPTIONS: /* libmount's rule: double quotes keep commas */
                for (; s[i]; i++) {
                        if (s[i] == '"')
                                quote = !quote;
                        else if (!quote && s[i] == ',')
                                break;
                }
                return i;
        case SHELL:
                for (; s[i]; i++) {
                        char c = s[i];

                        if (quote) {
                                if (c == quote)
                                        quote = 0;
                                else if (quote == '"' && c == '\\' && s[i + 1])
                                        i++;
                        } else if (c == '\\' && s[i + 1])
                                i++;
                        else if (c == '"' || c == '\'')
                                quote = c;
                        else if (is_shell_break(c))
                                break;
                }
                return i;
        }
        return i;
}

/* How the value of the key at s[k] (whose '=' is at s[eq]) is delimited. */
static enum context context_of(const char *s, size_t k, size_t eq, char *q) {
        char before = k > 0 ? s[k - 1] : 0;

        *q = 0;
        if (before == '\'' || before == '"') {
                *q = before;
                return QUOTED;
        }
        if (before && is_shell_break(before))
                return SHELL;
        if (k == 0 && is_env_name(s, eq))
                return WHOLE; /* "PASSWORD=a,b c": an assignment, commas and all */
        return OPTIONS;
}

/* scheme://user:PASSWORD@host at s[i] ("://"): the password's range, or false. */
static bool url_password(const char *s, size_t i, size_t *start, size_t *end) {
        size_t a = i + 3, e, at = 0, colon = 0;

        for (e = a; s[e] && !strchr("/?#,'\"", s[e]) && !is_blank(s[e]); e++)
                if (s[e] == '@')
                        at = e;
        for (size_t j = a; at && j < at; j++)
                if (s[j] == ':') {
                        colon = j;
                        break;
                }
        if (!colon || at <= colon + 1)
                return false;
        *start = colon + 1;
        *end = at;
        return true;
}

/*
 * A flag --KEY (or -KEY) at s[i], at the start of a shell word and followed
 * by blanks and a value: the value's range when KEY is sensitive.
 */
static bool flag_value(const char *s, size_t i, size_t *start, size_t *end) {
        size_t j = i, v;

        if (s[i] != '-' || (i > 0 && !is_shell_break(s[i - 1])))
                return false;
        while (is_key_char(s[j]))
                j++;
        if (!is_blank(s[j]) || !option_key_is_sensitive(s + i, j - i))
                return false;
        for (v = j; is_blank(s[v]); v++)
                ;
        if (!s[v] || s[v] == '-' || is_shell_break(s[v]))
                return false;
        *start = v;
        *end = value_end(s, v, SHELL, 0);
        return true;
}

/* Reports every secret value of s to fn, left to right; stops at fn's first error. */
static int scan(const char *s, span_fn fn, void *userdata) {
        size_t i = 0, last = 0; /* last: the end of the last range; keys do not reach back over it */
        int r;

        while (s[i]) {
                size_t start, end;

                if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/' && url_password(s, i, &start, &end)) {
                        if ((r = fn(start, end, userdata)) < 0)
                                return r;
                        last = i = end;
                        continue;
                }
                if (flag_value(s, i, &start, &end)) {
                        if ((r = fn(start, end, userdata)) < 0)
                                return r;
                        last = i = end;
                        continue;
                }
                if (s[i] == '=') {
                        size_t k = i;
                        enum context ctx;
                        char q;

                        while (k > last && is_key_char(s[k - 1]))
                                k--;
                        if (k < i && key_is_sensitive(s + k, i - k)) {
                                ctx = context_of(s, k, i, &q);
                                end = value_end(s, i + 1, ctx, q);
                                if (end > i + 1 && (r = fn(i + 1, end, userdata)) < 0)
                                        return r;
                                last = end;
                                i = end > i ? end : i + 1;
                                continue;
                        }
                }
                i++;
        }
        return 0;
}

/* ---- masked copies ---- */

struct masker {
        const char *s;
        size_t done; /* s[0..done) is in out */
        char *out;
        size_t len, size;
};

/* Grows out geometrically: a word of many secrets stays linear (ASan's realloc always copies). */
static int append(struct masker *m, const char *p, size_t n) {
        if (m->len + n + 1 > m->size) {
                size_t size = m->size * 2 > m->len + n + 1 ? m->size * 2 : m->len + n + 1;
                char *o = realloc(m->out, size);

                if (!o)
                        return -ENOMEM;
                m->out = o;
                m->size = size;
        }
        memcpy(m->out + m->len, p, n);
        m->len += n;
        m->out[m->len] = '\0';
        return 0;
}

static int mask_span(size_t start, size_t end, void *userdata) {
        struct masker *m = userdata;
        int r = append(m, m->s + m->done, start - m->done);

        if (r < 0)
                return r;
        m->done = end;
        return append(m, SECRET_MASK, strlen(SECRET_MASK));
}

char *secret_mask_word(const char *word) {
        struct masker m = { .s = word ? word : "" };

        if (scan(m.s, mask_span, &m) < 0 || append(&m, m.s + m.done, strlen(m.s + m.done)) < 0) {
                free(m.out);
                return NULL;
        }
        return m.out;
}

/* A scheme-less user:PASSWORD@host: from the first ':' (after "://" if any) to the last '@'. */
static bool userinfo_password(const char *s, size_t *start, size_t *end) {
        const char *at = strrchr(s, '@'), *from = strstr(s, "://"), *colon;

        if (!at)
                return false;
        from = from && from < at ? from + 3 : s;
        colon = memchr(from, ':', (size_t)(at - from));
        if (!colon || colon + 1 == at)
                return false;
        *start = (size_t)(colon + 1 - s);
        *end = (size_t)(at - s);
        return true;
}

static int mark_span(size_t start, size_t end, void *userdata) {
        memset((bool *)userdata + start, true, end - start);
        return 0;
}

char *secret_mask_source(const char *source) {
        const char *s = source ? source : "";
        size_t n = strlen(s), start, end;
        _cleanup_free_ bool *mask = calloc(n + 1, sizeof(bool));
        struct masker m = { .s = s };

        if (!mask || append(&m, "", 0) < 0)
                return NULL;
        /* Both readings on the original, their ranges united: one cannot hide the other's. */
        (void)scan(s, mark_span, mask);
        if (userinfo_password(s, &start, &end))
                memset(mask + start, true, end - start);
        for (size_t i = 0, j; i < n; i = j) {
                for (j = i; j < n && mask[j] == mask[i]; j++)
                        ;
                if (append(&m, mask[i] ? SECRET_MASK : s + i, mask[i] ? strlen(SECRET_MASK) : j - i) < 0) {
                        free(m.out);
                        return NULL;
                }
        }
        return m.out;
}

/* A whole argv word "--KEY" or "-KEY" (no value in it) with a sensitive KEY. */
static bool is_secret_flag(const char *w) {
        return w[0] == '-' && w[1] && !strchr(w, '=') && option_key_is_sensitive(w, strlen(w));
}

/* Word s of an argv after the word prev (NULL for the first). */
static char *mask_arg(const char *prev, const char *s) {
        if (prev && is_secret_flag(prev) && s[0] != '-')
                return strdup(SECRET_MASK);
        return secret_mask_word(s);
}

char **secret_mask_argv(char *const *argv) {
        size_t n = 0;
        char **v;

        while (argv && argv[n])
                n++;
        v = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; v && i < n; i++)
                if (!(v[i] = mask_arg(i > 0 ? argv[i - 1] : NULL, argv[i]))) {
                        km_strv_free(v);
                        return NULL;
                }
        return v;
}

char *secret_mask_env(const char *assignment) {
        const char *eq = assignment ? strchr(assignment, '=') : NULL;
        char *r;

        if (eq && option_key_is_sensitive(assignment, eq - assignment))
                return asprintf(&r, "%.*s=%s", (int)(eq - assignment), assignment, SECRET_MASK) < 0 ? NULL : r;
        return secret_mask_word(assignment);
}

static json_t *mask_json(json_t *a, bool env) {
        json_t *out, *v;
        size_t i;

        if (!json_is_array(a) || !(out = json_array()))
                return NULL;
        json_array_foreach(a, i, v) {
                const char *s = json_string_value(v);
                const char *prev = i > 0 ? json_string_value(json_array_get(a, i - 1)) : NULL;
                _cleanup_free_ char *m = !s ? NULL : env ? secret_mask_env(s) : mask_arg(prev, s);
                json_t *e = !s ? json_deep_copy(v) : m ? json_string(m) : NULL;

                if (!e || json_array_append_new(out, e) < 0) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

json_t *secret_mask_json_argv(json_t *args) {
        return mask_json(args, false);
}

json_t *secret_mask_json_env(json_t *env) {
        return mask_json(env, true);
}

/* ---- scrubbing in place ---- */

static int scrub_span(size_t start, size_t end, void *userdata) {
        char *s = userdata;

        memset(s + start, '*', end - start);
        return 0;
}

static int count_span(size_t start, size_t end, void *userdata) {
        (void)start;
        (void)end;
        ++*(size_t *)userdata;
        return 0;
}

size_t secret_scrub_word(char *word) {
        size_t n = 0;

        if (!word)
                return 0;
        (void)scan(word, count_span, &n);
        if (n > 0)
                (void)scan(word, scrub_span, word);
        return n;
}

void secret_scrub_argv(char **argv) {
        for (size_t i = 0; argv && argv[i]; i++)
                if (i > 0 && is_secret_flag(argv[i - 1]) && argv[i][0] != '-')
                        memset(argv[i], '*', strlen(argv[i]));
                else
                        (void)secret_scrub_word(argv[i]);
}

/* --NAME: an abbreviation getopt_long would take for --options or --test-opts. */
static bool long_option_takes_options(const char *name, size_t n) {
        return (n >= 1 && n <= strlen("options") && strncmp(name, "options", n) == 0) ||
               (n >= 2 && n <= strlen("test-opts") && strncmp(name, "test-opts", n) == 0);
}

void secret_scrub_mount_argv(int argc, char **argv) {
        for (int i = 1; i < argc && argv[i]; i++) {
                char *w = argv[i];

                if (streq(w, "--"))
                        break;
                if (w[0] != '-' || !w[1])
                        continue;
                if (w[1] == '-') {
                        char *eq = strchr(w, '=');

                        if (!long_option_takes_options(w + 2, (eq ? (size_t)(eq - w) : strlen(w)) - 2))
                                continue;
                        if (eq)
                                (void)secret_scrub_word(eq + 1);
                        else if (i + 1 < argc)
                                (void)secret_scrub_word(argv[++i]);
                        continue;
                }
                /* A cluster of short options: -o and -O take the rest or the next word. */
                for (char *p = w + 1; *p; p++) {
                        if (*p == 'o' || *p == 'O') {
                                if (p[1])
                                        (void)secret_scrub_word(p + 1);
                                else if (i + 1 < argc)
                                        (void)secret_scrub_word(argv[++i]);
                                break;
                        }
                        if (strchr("tLUNT", *p)) { /* options with another argument */
                                if (!p[1])
                                        i++;
                                break;
                        }
                }
        }
}
