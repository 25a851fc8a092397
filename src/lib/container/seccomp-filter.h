/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Seccomp filters for container processes, built with libseccomp. */
#pragma once

#include "jansson-dl.h"
#include <linux/filter.h>

#include "util.h"

/* A compiled filter, ready for seccomp_filter_load() after fork. */
struct seccomp_program {
        struct sock_fprog prog; /* prog.filter is malloc'ed */
};

/*
 * Compiles an OCI "linux.seccomp" object (defaultAction, defaultErrnoRet,
 * architectures, syscalls[] with names, action, errnoRet and args) for the
 * native architecture.  Names libseccomp does not know are skipped (a newer
 * profile on an older library); unsupported actions or malformed entries
 * are errors.  Compiling is slow (milliseconds): do it once, load many times.
 */
int seccomp_compile(json_t *seccomp, struct seccomp_program *ret, struct km_error *err);
void seccomp_program_done(struct seccomp_program *p);
DEFINE_CLEANUP(struct seccomp_program, seccomp_program_done)

/*
 * Installs the program in the calling thread with the seccomp syscall
 * (prctl fallback); needs no_new_privs or CAP_SYS_ADMIN.  Async-signal-safe:
 * usable in a forked child.  Returns 0 or -errno.
 */
int seccomp_filter_load(const struct seccomp_program *p);

/*
 * kubemount's default profile for VCS containers, as an OCI "linux.seccomp"
 * object (new reference): an allow list of the syscalls volume clients use,
 * mount, umount2, the new mount API and what FUSE daemons need included;
 * anything not listed fails with ENOSYS (so programs fall back as on an older
 * kernel), and the known-dangerous calls (kexec_load, init_module, bpf,
 * ptrace, reboot, swapon, keyctl, open_by_handle_at, userfaultfd, ...) with EPERM.
 */
json_t *seccomp_default_profile(void);
/*
 * What a client puts in "linux.seccomp" of a run request for that profile
 * (the agent has it built): 10 of a config's 13 KB, parsed by no one.  A
 * string where a profile object belongs, so that an agent that does not
 * know it refuses the config rather than run it without a filter.
 */
#define SECCOMP_DEFAULT_NAME "kubemount:default"
