/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * In-process answers to the kubelet's hottest host probes, byte for byte what
 * util-linux findmnt and coreutils realpath/stat print.  Each answers only the
 * plain case; anything unusual returns -EAGAIN and the caller runs the real
 * tool, which then prints exactly what it prints.
 */
#pragma once

#include "util.h"

enum probe_kind { PROBE_NONE, PROBE_FINDMNT_TARGET, PROBE_REALPATH, PROBE_STAT_TYPE };

/* Which probe argv is (argv[0] by any path), or PROBE_NONE. */
enum probe_kind probe_match(int argc, char *const *argv);
/* The probe's stdout (malloc'ed) for an exit status of 0, or -EAGAIN. */
int probe_answer(enum probe_kind kind, int argc, char *const *argv, char **ret);
