/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON shape checker (json-shape.c) shared by the OCI spec, manifest and
 * seccomp parsers: places are named as "doc: a.b[3].c", each document says
 * how its refusals read (code, the word for absent, whether null is absent,
 * a string limit), and nothing is returned from a refused value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "json-shape.h"
#include "test-helpers.h"

/* Like the spec: null is a wrong type, absent "is required", strings up to 8 bytes. */
static const struct json_doc STRICT = { { NULL, "config.json", 0 }, -EINVAL, "is required", false, 8 };
/* Like a registry's manifest: null is absent (Go's nil), refusals are -EBADMSG. */
static const struct json_doc GO = { { NULL, "manifest", 0 }, -EBADMSG, "missing", true, 0 };

static json_t *load(const char *text) {
        json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);

        assert_non_null(j);
        return j;
}

static void expect(int r, const struct km_error *err, int code, const char *message) {
        test_note("%d '%s'", r, err->message);
        assert_int_equal(r, code);
        assert_int_equal(err->code, code);
        assert_string_equal(err->message, message);
}

static void test_places(void **state) {
        const struct json_at *mounts = JSON_AT(&STRICT.at, "mounts");
        char buf[64];

        assert_int_equal(json_at_format(&STRICT.at, buf, sizeof(buf)), strlen("config.json"));
        assert_string_equal(buf, "config.json");
        json_at_format(mounts, buf, sizeof(buf));
        assert_string_equal(buf, "config.json: mounts");
        json_at_format(JSON_AT(JSON_AT_I(mounts, 3), "destination"), buf, sizeof(buf));
        assert_string_equal(buf, "config.json: mounts[3].destination");
        json_at_format(JSON_AT_I(JSON_AT(JSON_AT_I(mounts, 0), "options"), 12), buf, sizeof(buf));
        assert_string_equal(buf, "config.json: mounts[0].options[12]");
        /* Cut to the buffer, never past it. */
        assert_true(json_at_format(JSON_AT(JSON_AT_I(mounts, 3), "destination"), buf, 16) >= 15);
        assert_string_equal(buf, "config.json: mo");
}

static void test_fail_names_the_place(void **state) {
        struct km_error err = {};

        expect(json_fail(&err, -EINVAL, JSON_AT(JSON_AT(&GO.at, "config"), "Env"), "not %s", "NAME=VALUE"), &err,
               -EINVAL, "manifest: config.Env: not NAME=VALUE");
        expect(json_fail(&err, -E2BIG, &GO.at, "too big"), &err, -E2BIG, "manifest: too big");
        assert_int_equal(json_fail(NULL, -EIO, &GO.at, "no error object"), -EIO);
}

static void test_types(void **state) {
        static const struct {
                const char *value;
                json_type want;
                const char *message; /* NULL: accepted */
        } cases[] = {
                { "{}", JSON_OBJECT, NULL },
                { "[]", JSON_OBJECT, "config.json: x: must be an object, not an array" },
                { "[]", JSON_ARRAY, NULL },
                { "\"s\"", JSON_ARRAY, "config.json: x: must be an array, not a string" },
                { "1", JSON_INTEGER, NULL },
                { "1.0", JSON_INTEGER, "config.json: x: must be an integer, not a number" },
                { "true", JSON_TRUE, NULL },
                { "false", JSON_TRUE, NULL },
                { "0", JSON_TRUE, "config.json: x: must be a boolean, not an integer" },
                { "null", JSON_STRING, "config.json: x: must be a string, not null" },
                { "\"12345678\"", JSON_STRING, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_t *v = load(cases[i].value);
                struct km_error err = {};
                int r = json_want(v, JSON_AT(&STRICT.at, "x"), cases[i].want, true, &err);

                if (cases[i].message)
                        expect(r, &err, -EINVAL, cases[i].message);
                else
                        assert_int_equal(r, 0);
                json_decref(v);
        }
}

static void test_absent(void **state) {
        json_t *obj = load("{\"n\": null}"), *arr = load("[null]"), *v = (json_t *)1;
        struct km_error err = {};

        /* Absent: fine unless required, in the document's words. */
        assert_int_equal(json_want(NULL, JSON_AT(&STRICT.at, "x"), JSON_STRING, false, &err), 0);
        expect(json_want(NULL, JSON_AT(&STRICT.at, "x"), JSON_STRING, true, &err), &err, -EINVAL,
               "config.json: x: is required");
        expect(json_want_member(obj, &GO.at, "x", JSON_ARRAY, true, &v, &err), &err, -EBADMSG, "manifest: x: missing");
        assert_null(v);
        /* A null member is absent where the document says so, a wrong type elsewhere. */
        v = (json_t *)1;
        assert_int_equal(json_want_member(obj, &GO.at, "n", JSON_ARRAY, false, &v, &err), 0);
        assert_null(v);
        expect(json_want_member(obj, &GO.at, "n", JSON_ARRAY, true, &v, &err), &err, -EBADMSG, "manifest: n: missing");
        expect(json_want_member(obj, &STRICT.at, "n", JSON_ARRAY, false, &v, &err), &err, -EINVAL,
               "config.json: n: must be an array, not null");
        assert_null(v);
        /* An element is never absent: null there is a wrong type. */
        expect(json_want(json_array_get(arr, 0), JSON_AT_I(JSON_AT(&GO.at, "layers"), 0), JSON_OBJECT, true, &err),
               &err, -EBADMSG, "manifest: layers[0]: must be an object, not null");
        json_decref(obj);
        json_decref(arr);
}

static void test_strings(void **state) {
        json_t *nul = json_stringn("ab\0cd", 5), *long_one = json_string("123456789"), *ok = json_string("12345678");
        const char *s = "unset";
        struct km_error err = {};

        expect(json_want_str(nul, JSON_AT(&GO.at, "s"), true, &s, &err), &err, -EBADMSG,
               "manifest: s: contains a NUL byte");
        assert_null(s);
        expect(json_want_str(long_one, JSON_AT(&STRICT.at, "s"), true, &s, &err), &err, -E2BIG,
               "config.json: s: longer than 8 bytes");
        assert_int_equal(json_want_str(long_one, JSON_AT(&GO.at, "s"), true, &s, &err), 0); /* no limit there */
        assert_string_equal(s, "123456789");
        assert_int_equal(json_want_str(ok, JSON_AT(&STRICT.at, "s"), true, &s, &err), 0);
        assert_string_equal(s, "12345678");
        assert_int_equal(json_want_str(NULL, JSON_AT(&STRICT.at, "s"), false, &s, &err), 0);
        assert_null(s);
        json_decref(nul);
        json_decref(long_one);
        json_decref(ok);
}

static void test_numbers_booleans_arrays(void **state) {
        json_t *five = json_integer(5), *minus = json_integer(-1), *t = json_true(), *arr = load("[1, 2, 3]");
        long long n = 42;
        bool b = false;
        struct km_error err = {};

        assert_int_equal(json_want_int(five, JSON_AT(&STRICT.at, "n"), true, 5, &n, &err), 0);
        assert_int_equal(n, 5);
        expect(json_want_int(five, JSON_AT(&STRICT.at, "n"), true, 4, &n, &err), &err, -ERANGE,
               "config.json: n: must be between 0 and 4");
        expect(json_want_int(minus, JSON_AT(&STRICT.at, "n"), true, 4, &n, &err), &err, -ERANGE,
               "config.json: n: must be between 0 and 4");
        assert_int_equal(n, 5); /* left alone */
        assert_int_equal(json_want_int(NULL, JSON_AT(&STRICT.at, "n"), false, 4, &n, &err), 0);
        assert_int_equal(n, 5);
        assert_int_equal(json_want_bool(t, JSON_AT(&STRICT.at, "b"), &b, &err), 0);
        assert_true(b);
        expect(json_want_bool(five, JSON_AT(&STRICT.at, "b"), &b, &err), &err, -EINVAL,
               "config.json: b: must be a boolean, not an integer");
        assert_int_equal(json_want_array(arr, JSON_AT(&STRICT.at, "a"), 3, true, &err), 0);
        expect(json_want_array(arr, JSON_AT(&STRICT.at, "a"), 2, true, &err), &err, -E2BIG,
               "config.json: a: more than 2 entries");
        expect(json_want_array(t, JSON_AT(&STRICT.at, "a"), 2, true, &err), &err, -EINVAL,
               "config.json: a: must be an array, not a boolean");
        json_decref(five);
        json_decref(minus);
        json_decref(t);
        json_decref(arr);
}

static void test_type_names(void **state) {
        assert_string_equal(json_type_name(JSON_OBJECT), "an object");
        assert_string_equal(json_type_name(JSON_REAL), "a number");
        assert_string_equal(json_type_name(JSON_FALSE), "a boolean");
        assert_string_equal(json_type_name(JSON_NULL), "null");
        assert_string_equal(json_type_name((json_type)99), "a JSON value");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_places),     cmocka_unit_test(test_fail_names_the_place),
                cmocka_unit_test(test_types),      cmocka_unit_test(test_absent),
                cmocka_unit_test(test_strings),    cmocka_unit_test(test_numbers_booleans_arrays),
                cmocka_unit_test(test_type_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
