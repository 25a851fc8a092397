/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * After the namespaces are entered: mount/umount (bare, by path, or wrapped
 * in systemd-run --scope --) go through libkubemount, the kubelet's probes
 * are answered in-process.  Returns the exit status, or -1 when argv is not
 * ours to handle and must be executed as nsenter would.
 */
int route_program(int argc, char **argv, bool mount_ns_entered);

/*
 * Overwrites the secret values of a mount command's -o options in argv (the
 * process's own memory, which /proc/PID/cmdline shows): for the parent that
 * only waits for a forked child, which has its own copy to run or route.
 */
void route_scrub(int argc, char **argv);
