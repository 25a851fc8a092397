/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount(8)/umount(8) argv parsers on arbitrary command lines: the input
 * is split on NUL bytes into argv[1..] (argv[0] is "mount"/"umount"), then
 * mount_args_parse + km_mount_spec_describe + mount_args_done, and
 * umount_args_parse, and parse_timeout_ms on every word.  Nothing is ever
 * mounted.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-check.h"
#include "mountargs.h"

#define MAX_INPUT (16 * 1024)
#define MAX_ARGS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_one_of(const char *p, char *const *argv, int argc) {
        for (int i = 0; i < argc; i++)
                if (p == argv[i])
                        return true;
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf, *argv[MAX_ARGS + 2];
        int argc = 1, r;

        if (size > MAX_INPUT)
                return 0;
        buf = fuzz_argv(data, size, argv, MAX_ARGS, &argc);

        {
                struct mount_args a;
                argv[0] = (char *)"mount";
                r = mount_args_parse(argc, argv, &a);
                check(r == 0 || r == -EINVAL);
                check(memchr(a.error, '\0', sizeof(a.error)));
                check((r == 0) == (a.error[0] == '\0'));
                if (r == 0 && a.spec) {
                        char *d = km_mount_spec_describe(a.spec);
                        check(d);
                        free(d);
                }
                check(a.sensitive_fd >= -1);
                mount_args_done(&a);
                check(!a.spec && !a.sensitive_file);
        }

        {
                struct umount_args u;
                argv[0] = (char *)"umount";
                r = umount_args_parse(argc, argv, &u);
                check(r == 0 || r == -EINVAL);
                check(memchr(u.error, '\0', sizeof(u.error)));
                check((r == 0) == (u.error[0] == '\0'));
                if (r == 0 && !u.help && !u.version) {
                        check(u.target && is_one_of(u.target, argv, argc));
                        check(u.timeout_ms >= 0 && u.timeout_ms <= 24 * 3600 * 1000);
                }
        }

        for (int i = 1; i < argc; i++) {
                int ms = -1;
                r = parse_timeout_ms(argv[i], &ms);
                check(r == -EINVAL || (r == 0 && ms >= 0 && ms <= 24 * 3600 * 1000));
        }

        free(buf);
        return 0;
}
