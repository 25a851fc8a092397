/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "util.h"

struct vcs_entry;

/*
 * iscsiadm ARGS from the iscsi entry's image (policy auto or container),
 * with iscsid kept in a container while sessions exist (multicall-iscsi.c):
 * iscsiadm's exit status, or EXIT_TOOL_FAILED with one line on stderr.
 */
int multicall_iscsiadm(struct km_host *host, const struct vcs_entry *e, char **argv);
