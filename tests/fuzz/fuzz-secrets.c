/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Masking and scrubbing of secrets (secrets.c) on arbitrary command lines:
 * the input is one word (secret_mask_word, secret_mask_env, secret_scrub_word)
 * and, split on NUL bytes, an argv (secret_mask_argv, secret_scrub_mount_argv).
 *
 * Invariants: masking a masked word changes nothing; a scrubbed word keeps
 * its length, changes bytes only to '*', masks like the original and scrubs
 * the same values again; scrubbing an argv changes bytes only to '*' and
 * moves no word.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz-check.h"
#include "secrets.h"

#define MAX_INPUT (16 * 1024)
#define MAX_ARGS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_word(const char *w) {
        char *m = secret_mask_word(w), *mm, *copy = strdup(w), *ms, *e = secret_mask_env(w);
        size_t n;

        check(m && copy && e);
        mm = secret_mask_word(m);
        check(mm && strcmp(m, mm) == 0);
        n = secret_scrub_word(copy);
        check(strlen(copy) == strlen(w));
        for (size_t i = 0; copy[i]; i++)
                check(copy[i] == w[i] || copy[i] == '*');
        check((n == 0) == (strcmp(copy, w) == 0 && strcmp(m, w) == 0));
        ms = secret_mask_word(copy);
        check(ms && strcmp(ms, m) == 0);
        check(secret_scrub_word(copy) == n);
        free(m);
        free(mm);
        free(ms);
        free(copy);
        free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *word, *buf, *orig, *argv[MAX_ARGS + 2], *saved[MAX_ARGS + 2], **m;
        int argc = 1;

        if (size > MAX_INPUT)
                return 0;
        word = malloc(size + 1);
        check(word);
        memcpy(word, data, size);
        word[size] = '\0';
        fuzz_word(word);
        free(word);

        buf = fuzz_argv(data, size, argv, MAX_ARGS, &argc);
        argv[0] = (char *)"mount";
        orig = malloc(size + 1);
        check(orig);
        memcpy(orig, buf, size);
        orig[size] = '\0';
        m = secret_mask_argv(argv);
        check(m);
        for (int i = 0; i < argc; i++)
                check(m[i]);
        check(!m[argc]);
        km_strv_free(m);
        memcpy(saved, argv, sizeof(argv));
        secret_scrub_mount_argv(argc, argv);
        check(memcmp(saved, argv, sizeof(argv)) == 0);
        for (size_t i = 0; i < size; i++)
                check(buf[i] == orig[i] || buf[i] == '*');
        free(orig);
        free(buf);
        return 0;
}
