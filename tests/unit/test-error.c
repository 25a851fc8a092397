/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error_set, error_set_plain and error_wrap: the message each builds, the
 * code, a NULL err, and a message that does not fit the fixed buffer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test-helpers.h"
#include "util.h"

static void test_set(void **state) {
        struct km_error err = {};

        assert_int_equal(error_set(&err, -ENOENT, "open %s", "/x"), -ENOENT);
        assert_int_equal(err.code, -ENOENT);
        assert_string_equal(err.message, "open /x: No such file or directory");
        assert_int_equal(error_set_plain(&err, -EINVAL, "bad %s", "word"), -EINVAL);
        assert_int_equal(err.code, -EINVAL);
        assert_string_equal(err.message, "bad word");
        /* Not an error: no strerror to add. */
        assert_int_equal(error_set(&err, 0, "fine"), 0);
        assert_string_equal(err.message, "fine");
        assert_int_equal(error_set(NULL, -EIO, "nobody asked"), -EIO);
        assert_int_equal(error_set_plain(NULL, -EIO, "nobody asked"), -EIO);
}

static void test_wrap(void **state) {
        struct km_error err = {};

        error_set(&err, -ENOENT, "open %s", "/x");
        assert_int_equal(error_wrap(&err, -ENOENT, "image %s", "busybox"), -ENOENT);
        assert_int_equal(err.code, -ENOENT);
        assert_string_equal(err.message, "image busybox: open /x: No such file or directory");
        /* Layer after layer; the code is the caller's. */
        assert_int_equal(error_wrap(&err, -EIO, "vcs %s", "nfs"), -EIO);
        assert_int_equal(err.code, -EIO);
        assert_string_equal(err.message, "vcs nfs: image busybox: open /x: No such file or directory");
        /* The inner message as it was, not run through printf again. */
        error_set_plain(&err, -EINVAL, "a %s in it", "%s");
        error_wrap(&err, -EINVAL, "outer");
        assert_string_equal(err.message, "outer: a %s in it");
        assert_int_equal(error_wrap(NULL, -EIO, "nobody asked"), -EIO);
}

/* A callee that failed without a message: what error_set() would say. */
static void test_wrap_unset(void **state) {
        struct km_error err = {};

        assert_int_equal(error_wrap(&err, -ENOMEM, "image %s", "busybox"), -ENOMEM);
        assert_int_equal(err.code, -ENOMEM);
        assert_string_equal(err.message, "image busybox: Cannot allocate memory");
}

static void test_wrap_truncates(void **state) {
        struct km_error err = {};
        char inner[KM_ERROR_MAX + 100];

        memset(inner, 'i', sizeof(inner) - 1);
        inner[sizeof(inner) - 1] = '\0';
        error_set_plain(&err, -EIO, "%s", inner);
        assert_int_equal(strlen(err.message), KM_ERROR_MAX - 1);
        error_wrap(&err, -EIO, "outer");
        assert_int_equal(strlen(err.message), KM_ERROR_MAX - 1);
        assert_memory_equal(err.message, "outer: iii", 10);
        /* A prefix that fills the buffer leaves no room for the rest, and no overflow. */
        memset(inner, 'p', KM_ERROR_MAX + 10);
        inner[KM_ERROR_MAX + 10] = '\0';
        error_wrap(&err, -EIO, "%s", inner);
        assert_int_equal(strlen(err.message), KM_ERROR_MAX - 1);
        assert_int_equal(err.message[0], 'p');
        assert_int_equal(err.code, -EIO);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_set),
                cmocka_unit_test(test_wrap),
                cmocka_unit_test(test_wrap_unset),
                cmocka_unit_test(test_wrap_truncates),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
