/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount's default seccomp profile for VCS containers, in OCI form.
 *
 * An allow list like Docker's default profile, plus what Docker leaves to
 * CAP_SYS_ADMIN: volume clients mount (mount, umount2, the new mount API),
 * chroot, unshare and setns.  Everything else fails with ENOSYS rather than
 * EPERM: programs then take the path they take on an older kernel (glibc's
 * clone3 falls back to clone, statx to fstatat, ...), which is why clone3
 * and io_uring are left out instead of denied.  The calls that reach
 * past the container (modules, kexec, keys, ptrace, clock, swap) fail with
 * EPERM, the answer of a kernel that knows them but says no.
 *
 * ioctl(2) is allowed for every request but TIOCSTI and TIOCLINUX, which
 * fail with EPERM: a process that holds a terminal (and CAP_SYS_ADMIN, which
 * passes TIOCSTI on any terminal) would type into it (THREATS 28).
 *
 * Names unknown to the running libseccomp or absent on this architecture
 * are skipped by seccomp_compile(), so the lists cover all architectures.
 * Keep them sorted, one per line, and disjoint.
 */
#include <stdint.h>
#include <sys/ioctl.h>

#include "seccomp-filter.h"

static const char *const allowed[] = {
        "_llseek",
        "_newselect",
        "accept",
        "accept4",
        "access",
        "alarm",
        "arch_prctl",
        "arm_fadvise64_64",
        "arm_sync_file_range",
        "bind",
        "breakpoint",
        "brk",
        "cacheflush",
        "capget",
        "capset",
        "chdir",
        "chmod",
        "chown",
        "chown32",
        "chroot",
        "clock_getres",
        "clock_getres_time64",
        "clock_gettime",
        "clock_gettime64",
        "clock_nanosleep",
        "clock_nanosleep_time64",
        "clone",
        "close",
        "close_range",
        "connect",
        "copy_file_range",
        "creat",
        "dup",
        "dup2",
        "dup3",
        "epoll_create",
        "epoll_create1",
        "epoll_ctl",
        "epoll_ctl_old",
        "epoll_pwait",
        "epoll_pwait2",
        "epoll_wait",
        "epoll_wait_old",
        "eventfd",
        "eventfd2",
        "execve",
        "execveat",
        "exit",
        "exit_group",
        "faccessat",
        "faccessat2",
        "fadvise64",
        "fadvise64_64",
        "fallocate",
        "fchdir",
        "fchmod",
        "fchmodat",
        "fchmodat2",
        "fchown",
        "fchown32",
        "fchownat",
        "fcntl",
        "fcntl64",
        "fdatasync",
        "fgetxattr",
        "flistxattr",
        "flock",
        "fork",
        "fremovexattr",
        "fsconfig",
        "fsetxattr",
        "fsmount",
        "fsopen",
        "fspick",
        "fstat",
        "fstat64",
        "fstatat64",
        "fstatfs",
        "fstatfs64",
        "fsync",
        "ftruncate",
        "ftruncate64",
        "futex",
        "futex_requeue",
        "futex_time64",
        "futex_wait",
        "futex_waitv",
        "futex_wake",
        "futimesat",
        "get_mempolicy",
        "get_robust_list",
        "get_thread_area",
        "getcpu",
        "getcwd",
        "getdents",
        "getdents64",
        "getegid",
        "getegid32",
        "geteuid",
        "geteuid32",
        "getgid",
        "getgid32",
        "getgroups",
        "getgroups32",
        "getitimer",
        "getpeername",
        "getpgid",
        "getpgrp",
        "getpid",
        "getppid",
        "getpriority",
        "getrandom",
        "getresgid",
        "getresgid32",
        "getresuid",
        "getresuid32",
        "getrlimit",
        "getrusage",
        "getsid",
        "getsockname",
        "getsockopt",
        "gettid",
        "gettimeofday",
        "getuid",
        "getuid32",
        "getxattr",
        "getxattrat",
        "inotify_add_watch",
        "inotify_init",
        "inotify_init1",
        "inotify_rm_watch",
        "io_cancel",
        "io_destroy",
        "io_getevents",
        "io_pgetevents",
        "io_pgetevents_time64",
        "io_setup",
        "io_submit",
        "ioprio_get",
        "ioprio_set",
        "ipc",
        "kill",
        "landlock_add_rule",
        "landlock_create_ruleset",
        "landlock_restrict_self",
        "lchown",
        "lchown32",
        "lgetxattr",
        "link",
        "linkat",
        "listen",
        "listmount",
        "listxattr",
        "listxattrat",
        "llistxattr",
        "lremovexattr",
        "lseek",
        "lsetxattr",
        "lstat",
        "lstat64",
        "madvise",
        "map_shadow_stack",
        "mbind",
        "membarrier",
        "memfd_create",
        "mincore",
        "mkdir",
        "mkdirat",
        "mknod",
        "mknodat",
        "mlock",
        "mlock2",
        "mlockall",
        "mmap",
        "mmap2",
        "mount",
        "mount_setattr",
        "move_mount",
        "mprotect",
        "mq_getsetattr",
        "mq_notify",
        "mq_open",
        "mq_timedreceive",
        "mq_timedreceive_time64",
        "mq_timedsend",
        "mq_timedsend_time64",
        "mq_unlink",
        "mremap",
        "mseal",
        "msgctl",
        "msgget",
        "msgrcv",
        "msgsnd",
        "msync",
        "munlock",
        "munlockall",
        "munmap",
        "nanosleep",
        "newfstatat",
        "open",
        "open_tree",
        "open_tree_attr",
        "openat",
        "openat2",
        "pause",
        "pidfd_open",
        "pidfd_send_signal",
        "pipe",
        "pipe2",
        "pivot_root",
        "pkey_alloc",
        "pkey_free",
        "pkey_mprotect",
        "poll",
        "ppoll",
        "ppoll_time64",
        "prctl",
        "pread64",
        "preadv",
        "preadv2",
        "prlimit64",
        "pselect6",
        "pselect6_time64",
        "pwrite64",
        "pwritev",
        "pwritev2",
        "read",
        "readahead",
        "readlink",
        "readlinkat",
        "readv",
        "recv",
        "recvfrom",
        "recvmmsg",
        "recvmmsg_time64",
        "recvmsg",
        "remap_file_pages",
        "removexattr",
        "removexattrat",
        "rename",
        "renameat",
        "renameat2",
        "restart_syscall",
        "riscv_flush_icache",
        "rmdir",
        "rseq",
        "rt_sigaction",
        "rt_sigpending",
        "rt_sigprocmask",
        "rt_sigqueueinfo",
        "rt_sigreturn",
        "rt_sigsuspend",
        "rt_sigtimedwait",
        "rt_sigtimedwait_time64",
        "rt_tgsigqueueinfo",
        "sched_get_priority_max",
        "sched_get_priority_min",
        "sched_getaffinity",
        "sched_getattr",
        "sched_getparam",
        "sched_getscheduler",
        "sched_rr_get_interval",
        "sched_rr_get_interval_time64",
        "sched_setaffinity",
        "sched_setattr",
        "sched_setparam",
        "sched_setscheduler",
        "sched_yield",
        "seccomp",
        "select",
        "semctl",
        "semget",
        "semop",
        "semtimedop",
        "semtimedop_time64",
        "send",
        "sendfile",
        "sendfile64",
        "sendmmsg",
        "sendmsg",
        "sendto",
        "set_mempolicy",
        "set_robust_list",
        "set_thread_area",
        "set_tid_address",
        "set_tls",
        "setdomainname",
        "setfsgid",
        "setfsgid32",
        "setfsuid",
        "setfsuid32",
        "setgid",
        "setgid32",
        "setgroups",
        "setgroups32",
        "sethostname",
        "setitimer",
        "setns",
        "setpgid",
        "setpriority",
        "setregid",
        "setregid32",
        "setresgid",
        "setresgid32",
        "setresuid",
        "setresuid32",
        "setreuid",
        "setreuid32",
        "setrlimit",
        "setsid",
        "setsockopt",
        "setuid",
        "setuid32",
        "setxattr",
        "setxattrat",
        "shmat",
        "shmctl",
        "shmdt",
        "shmget",
        "shutdown",
        "sigaltstack",
        "signalfd",
        "signalfd4",
        "sigprocmask",
        "sigreturn",
        "socket",
        "socketcall",
        "socketpair",
        "splice",
        "stat",
        "stat64",
        "statfs",
        "statfs64",
        "statmount",
        "statx",
        "swapcontext",
        "symlink",
        "symlinkat",
        "sync",
        "sync_file_range",
        "sync_file_range2",
        "syncfs",
        "sysinfo",
        "tee",
        "tgkill",
        "time",
        "timer_create",
        "timer_delete",
        "timer_getoverrun",
        "timer_gettime",
        "timer_gettime64",
        "timer_settime",
        "timer_settime64",
        "timerfd_create",
        "timerfd_gettime",
        "timerfd_gettime64",
        "timerfd_settime",
        "timerfd_settime64",
        "times",
        "tkill",
        "truncate",
        "truncate64",
        "ugetrlimit",
        "umask",
        "umount",
        "umount2",
        "uname",
        "unlink",
        "unlinkat",
        "unshare",
        "utime",
        "utimensat",
        "utimensat_time64",
        "utimes",
        "vfork",
        "vmsplice",
        "wait4",
        "waitid",
        "waitpid",
        "write",
        "writev",
};

static const char *const denied[] = {
        "acct",
        "add_key",
        "adjtimex",
        "bpf",
        "clock_adjtime",
        "clock_adjtime64",
        "clock_settime",
        "clock_settime64",
        "delete_module",
        "finit_module",
        "init_module",
        "ioperm",
        "iopl",
        "kexec_file_load",
        "kexec_load",
        "keyctl",
        "lookup_dcookie",
        "name_to_handle_at",
        "nfsservctl",
        "open_by_handle_at",
        "perf_event_open",
        "process_vm_readv",
        "process_vm_writev",
        "ptrace",
        "quotactl",
        "quotactl_fd",
        "reboot",
        "request_key",
        "settimeofday",
        "stime",
        "swapoff",
        "swapon",
        "syslog",
        "uselib",
        "userfaultfd",
        "vm86",
        "vm86old",
};

/*
 * personality(2) only for Linux, 32-bit Linux and uname26 (with and without
 * PER_LINUX32) and the query; others would turn on odd ABI behaviour.
 */
static const json_int_t personality_allowed[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };

/*
 * The ioctl requests refused.  The kernel takes the request as an unsigned
 * int and ignores the upper half of the register, so every condition on it
 * compares the lower 32 bits only (SCMP_CMP_MASKED_EQ): 0x100005412 is
 * TIOCSTI too.
 */
static const uint32_t ioctl_denied[] = { TIOCSTI, TIOCLINUX };

static json_t *names_array(const char *const *names, size_t n) {
        json_t *a = json_array();

        for (size_t i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_string(names[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *personality_args(void) {
        json_t *a = json_array();

        /* Several conditions on one argument: any of them allows the call. */
        for (size_t i = 0; a && i < ELEMENTSOF(personality_allowed); i++) {
                json_t *cond =
                        json_pack("{s:i, s:I, s:s}", "index", 0, "value", personality_allowed[i], "op", "SCMP_CMP_EQ");

                if (json_array_append_new(a, cond) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static int append_ioctl_rule(json_t *rules, const char *action, uint32_t mask, uint32_t value) {
        json_t *rule =
                json_pack("{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}", "names", "ioctl", "action", action, "args", "index",
                          1, "value", (json_int_t)mask, "valueTwo", (json_int_t)value, "op", "SCMP_CMP_MASKED_EQ");

        if (rule && streq(action, "SCMP_ACT_ERRNO"))
                json_object_set_new(rule, "errnoRet", json_integer(EPERM));
        return json_array_append_new(rules, rule);
}

/*
 * Allows ioctl for the requests below the prefix (mask, value) that are not
 * denied, as rules with one condition each, none of them matching a denied
 * request.  libseccomp lets an unconditional rule win over conditional ones
 * of the same call, so "allow, but EPERM for these" cannot be said directly:
 * the complement is covered instead, by splitting on one bit after another
 * from the top (32 rules or so per denied request).
 */
static int ioctl_allow_cover(json_t *rules, uint32_t mask, uint32_t value, int bit) {
        bool hit = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(ioctl_denied); i++)
                hit |= (ioctl_denied[i] & mask) == value;
        if (!hit)
                return append_ioctl_rule(rules, "SCMP_ACT_ALLOW", mask, value);
        if (bit < 0)
                return 0; /* a denied request itself */
        r = ioctl_allow_cover(rules, mask | 1U << bit, value, bit - 1);
        return r < 0 ? r : ioctl_allow_cover(rules, mask | 1U << bit, value | 1U << bit, bit - 1);
}

/* Appended to the profile's syscalls. */
static int ioctl_rules(json_t *rules) {
        int r = rules ? ioctl_allow_cover(rules, 0, 0, 31) : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(ioctl_denied); i++)
                r = append_ioctl_rule(rules, "SCMP_ACT_ERRNO", UINT32_MAX, ioctl_denied[i]);
        return r < 0 ? -ENOMEM : 0;
}

json_t *seccomp_default_profile(void) {
        /* "o" steals each reference, also when json_pack fails. */
        /* clang-format off */
        json_t *p = json_pack("{s:s, s:i, s:[{s:o, s:s}, {s:o, s:s, s:i}, {s:[s], s:s, s:o}]}",
                         "defaultAction", "SCMP_ACT_ERRNO",
                         "defaultErrnoRet", ENOSYS,
                         "syscalls",
                         "names", names_array(allowed, ELEMENTSOF(allowed)), "action", "SCMP_ACT_ALLOW",
                         "names", names_array(denied, ELEMENTSOF(denied)), "action", "SCMP_ACT_ERRNO",
                         "errnoRet", EPERM,
                         "names", "personality", "action", "SCMP_ACT_ALLOW", "args", personality_args());
        /* clang-format on */

        if (p && ioctl_rules(json_object_get(p, "syscalls")) < 0) {
                json_decref(p);
                return NULL;
        }
        return p;
}
