/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal's native record (sd-protocol.c): KEY=VALUE lines, the binary
 * form for a value with a newline, PRIORITY and SYSLOG_IDENTIFIER always,
 * fields the journal would refuse left out; sd_notify without a socket.
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sd-protocol.h"

static void test_plain_fields(void **state) {
        const char *fields[] = { "MESSAGE_ID=" MESSAGE_ID_MOUNT, "KUBEMOUNT_TARGET=/var/lib/kubelet/x", NULL };
        size_t size = 0;
        char *rec = journal_record(5, "mount: done", fields, &size);
        const char want[] =
                "MESSAGE=mount: done\nPRIORITY=5\nSYSLOG_IDENTIFIER=kubemount\n"
                "MESSAGE_ID=" MESSAGE_ID_MOUNT "\nKUBEMOUNT_TARGET=/var/lib/kubelet/x\n";

        assert_non_null(rec);
        assert_int_equal(size, strlen(want));
        assert_memory_equal(rec, want, size);
        free(rec);
}

static void test_newline_value_is_binary(void **state) {
        const char *fields[] = { "KUBEMOUNT_SOURCE=a\nFAKE_FIELD=injected", NULL };
        size_t size = 0;
        char *rec = journal_record(3, "two\nlines", fields, &size);
        const char *p = rec;
        uint64_t len;

        assert_non_null(rec);
        /* MESSAGE\n, 9 as le64, the value, \n */
        assert_memory_equal(p, "MESSAGE\n", 8);
        memcpy(&len, p + 8, 8);
        assert_int_equal(le64toh(len), 9);
        assert_memory_equal(p + 16, "two\nlines\n", 10);
        p += 26;
        const char fixed[] = "PRIORITY=3\nSYSLOG_IDENTIFIER=kubemount\n";
        assert_memory_equal(p, fixed, strlen(fixed));
        p += strlen(fixed);
        assert_memory_equal(p, "KUBEMOUNT_SOURCE\n", 17);
        memcpy(&len, p + 17, 8);
        assert_int_equal(le64toh(len), strlen("a\nFAKE_FIELD=injected"));
        /* The injected line is inside a value, not a field of its own. */
        assert_int_equal((size_t)(p + 25 + le64toh(len) + 1 - rec), size);
        free(rec);
}

static void test_bad_names_left_out(void **state) {
        const char *fields[] = { "lower=x",   "_TRUSTED=x",
                                 "9LIVES=x",  "=x",
                                 "NO_EQUALS", "A_NAME_OF_SIXTY_FIVE_CHARACTERS_IS_ONE_TOO_MANY_FOR_THE_JOURNAL_XX=x",
                                 "GOOD_1=y",  NULL };
        size_t size = 0;
        char *rec = journal_record(6, "m", fields, &size);

        assert_non_null(rec);
        assert_int_equal(size, strlen("MESSAGE=m\nPRIORITY=6\nSYSLOG_IDENTIFIER=kubemount\nGOOD_1=y\n"));
        assert_memory_equal(rec + size - 9, "GOOD_1=y\n", 9);
        free(rec);
}

static void test_priority_clamped(void **state) {
        size_t size = 0;
        char *rec = journal_record(15, "m", NULL, &size);

        assert_non_null(strstr(rec, "PRIORITY=7\n"));
        free(rec);
}

static void test_notify_without_socket(void **state) {
        unsetenv("NOTIFY_SOCKET");
        sd_notify_take();
        assert_int_equal(sd_notify_send("READY=1"), 0);
        /* Taken from the environment: what we start does not see it. */
        setenv("NOTIFY_SOCKET", "@km-unit-none", 1);
        sd_notify_take();
        assert_null(getenv("NOTIFY_SOCKET"));
        /* Nobody listens on that name: an error, never a crash or a block. */
        assert_true(sd_notify_send("READY=1") < 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plain_fields),          cmocka_unit_test(test_newline_value_is_binary),
                cmocka_unit_test(test_bad_names_left_out),    cmocka_unit_test(test_priority_clamped),
                cmocka_unit_test(test_notify_without_socket),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
