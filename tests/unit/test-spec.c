/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder until the module's tests are written. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

static void nothing(void **state) { (void)state; }

int main(void) {
        const struct CMUnitTest tests[] = { cmocka_unit_test(nothing) };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
