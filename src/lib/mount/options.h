/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "util.h"

/*
 * Whether the first n bytes of key name a secret (password, secret, key,
 * token, credentials, ...; any case; also as a word of "AWS_SECRET_ACCESS_KEY"
 * or "--password").  The one vocabulary for mount options, VCS arguments and
 * environment variables.
 */
bool option_key_is_sensitive(const char *key, size_t n);
/* 0 or -EINVAL with *ret_why naming the problem ("contains a backslash"). */
int options_validate(const char *options, const char **ret_why);
/* The same for the data of a mount(2) of fstype: cifs and smb3 data may hold backslashes. */
int options_validate_data(const char *fstype, const char *options, const char **ret_why);
/* Sources and targets: non-empty, no leading '-', no control characters. */
int argument_validate(const char *what, const char *value, const char **ret_why);
int fstype_validate(const char *fstype, const char **ret_why);
/* "a,password=<masked>"; with mask_all_values every value and every bare item is masked. */
char *options_mask(const char *options, bool mask_all_values);

/*
 * Next item of a comma-separated option string, split as libmount splits it
 * (quotes keep commas): 0 and name/value (value NULL without '='), 1 at the
 * end, -EINVAL for an empty item.  *optstr advances.
 */
int options_next(const char **optstr, const char **name, size_t *namesz, const char **value, size_t *valuesz);
bool options_has(const char *options, const char *key);
/*
 * Removes every key=value item whose key is one of keys (NULL-terminated)
 * from options, in place, the bytes freed zeroed; *ret_value gets the last
 * value taken (NULL for none).  The number taken, or -ENOMEM (options is then
 * cut short).
 */
int options_take(char *options, const char *const *keys, char **ret_value);
