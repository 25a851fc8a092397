/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one decoding of a child's end into a shell's exit code (util.c), from
 * waitpid()'s status and from waitid()'s siginfo: the exit status, or 128+N
 * for death by signal N.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test-helpers.h"
#include "util.h"

/* A child that exits with code, or kills itself with sig when sig > 0. */
static pid_t child(int code, int sig) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                if (sig > 0) {
                        signal(sig, SIG_DFL);
                        raise(sig);
                }
                _exit(code);
        }
        return pid;
}

static void test_from_status(void **state) {
        static const struct {
                int code, sig, want;
        } cases[] = {
                { 0, 0, 0 }, { 3, 0, 3 }, { 255, 0, 255 }, { 0, SIGTERM, 128 + SIGTERM }, { 0, SIGKILL, 128 + SIGKILL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int status, sig = -1;

                assert_int_equal(waitpid(child(cases[i].code, cases[i].sig), &status, 0) > 0, 1);
                assert_int_equal(exit_code_from_status(status, &sig), cases[i].want);
                assert_int_equal(sig, cases[i].sig);
                assert_int_equal(exit_code_from_status(status, NULL), cases[i].want);
        }
        /* An exit status above 128 is the child's own, not a signal. */
        assert_int_equal(exit_code_from_status(143 << 8, NULL), 143);
}

static void test_from_siginfo(void **state) {
        siginfo_t si = {};

        assert_int_equal(waitid(P_PID, (id_t)child(7, 0), &si, WEXITED), 0);
        assert_int_equal(exit_code_from_siginfo(&si), 7);
        assert_int_equal(waitid(P_PID, (id_t)child(0, SIGTERM), &si, WEXITED), 0);
        assert_int_equal(exit_code_from_siginfo(&si), 128 + SIGTERM);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_status),
                cmocka_unit_test(test_from_siginfo),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
