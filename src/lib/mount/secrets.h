/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Secrets in command lines and environments, with the vocabulary of
 * options.c (option_key_is_sensitive): masked copies for what is shown or
 * stored (ps, ps --json, state.json), and scrubbing in place of a process's
 * own argv memory, which /proc/PID/cmdline shows to everyone.
 *
 * What counts as a secret in a word (each form has a unit test):
 *   KEY=VALUE with a sensitive KEY, anywhere in the word: in an option string
 *     ("user=u,password=p", "-opassword=p"), an assignment
 *     ("AWS_SECRET_ACCESS_KEY=..."), a shell script ("sh -c 'x; token=t y'");
 *   --KEY VALUE inside a script, and a whole argv word after a word --KEY;
 *   the password of a URL (scheme://user:PASSWORD@host).
 * Where VALUE ends depends on what precedes KEY: after whitespace (a shell
 * script) at the next unquoted blank; after a quote at the matching quote;
 * at the start of the word with an environment-style KEY ([A-Z_][A-Z0-9_]*)
 * at the end of the word; otherwise (option strings) at the next ',' outside
 * double quotes.  In doubt more is masked, never less.
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>

#include "util.h"

#define SECRET_MASK "<masked>"

/* WORD with every secret value replaced by "<masked>" (malloc'ed; NULL: out of memory). */
char *secret_mask_word(const char *word);
/*
 * A mount source for display: what secret_mask_word() masks, and also the
 * password of a user:PASSWORD@host without a scheme (sshfs "u:p@h:/",
 * "sshfs#u:p@h:/", cifs "//u:p@h/s"): from the first ':' to the last '@'.
 */
char *secret_mask_source(const char *source);
/*
 * An argv for display: each word masked, and a word after a bare --KEY (or
 * -KEY) with a sensitive KEY replaced whole.  km_strv_free() it.
 */
char **secret_mask_argv(char *const *argv);
/* NAME=VALUE: VALUE replaced whole when NAME is sensitive, else masked as a word. */
char *secret_mask_env(const char *assignment);
/* New JSON arrays of masked strings (other elements copied); NULL for a non-array. */
json_t *secret_mask_json_argv(json_t *args);
json_t *secret_mask_json_env(json_t *env);

/* Overwrites in place every byte of every secret value of WORD with '*'; returns how many values. */
size_t secret_scrub_word(char *word);
/* An argv (a VCS command) scrubbed in place as secret_mask_argv() masks it, with '*'s. */
void secret_scrub_argv(char **argv);
/*
 * mount(8)'s argv (argv[0] the command): the option strings given with
 * -o/-O/--options/--test-opts in any spelling ("-o X", "-oX", "-rwoX",
 * "--options=X", "--opt X") scrubbed in place.  Call it once they are
 * parsed (and copied): the keys stay visible, the values become "****".
 */
void secret_scrub_mount_argv(int argc, char **argv);
