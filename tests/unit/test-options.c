/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Validation and masking of mount arguments from outside: options_validate,
 * argument_validate, fstype_validate, options_mask/km_options_mask and
 * km_mount_spec_describe (which must never show a sensitive value), plus
 * km_mount's refusal of invalid specs before it touches anything.  The same
 * vocabulary on command lines and environments: test-secrets.c.
 */
#include <errno.h>
#include <libmount.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "options.h"
#include "test-helpers.h"

#define SECRET "hunter2"

/* ---- options_validate ---- */

static void expect_options_ok(const char *options) {
        const char *why = NULL;

        test_note("options '%s'", options ? options : "(null)");
        assert_int_equal(options_validate(options, &why), 0);
}

static void expect_options_bad(const char *options, const char *reason) {
        const char *why = NULL;

        assert_int_equal(options_validate(options, &why), -EINVAL);
        assert_non_null(why);
        assert_string_equal(why, reason);
}

static void test_options_validate_accepts_ordinary_options(void **state) {
        expect_options_ok(NULL);
        expect_options_ok("");
        expect_options_ok("ro");
        expect_options_ok("ro,vers=4,hard,timeo=600");
        expect_options_ok("uid=1000,gid=1000,file_mode=0644,dir_mode=0755");
        expect_options_ok("username=svc,password=p@ss:w0rd!,domain=CORP");
        expect_options_ok("subvol=/@home,compress=zstd:3");
        expect_options_ok("x-kubemount.label=caf\xc3\xa9"); /* UTF-8 */
}

static void test_options_validate_accepts_quoted_selinux_context(void **state) {
        expect_options_ok("context=\"system_u:object_r:x:s0:c460,c902\"");
        expect_options_ok("ro,context=\"system_u:object_r:container_file_t:s0:c460,c902\",nosuid");
        expect_options_ok("a=\"\",b=\"x\"");
}

static void test_options_validate_rejects_control_characters(void **state) {
        expect_options_bad("ro\n", "contains a control character");
        expect_options_bad("ro,\nrw", "contains a control character");
        expect_options_bad("ro\r", "contains a control character");
        expect_options_bad("a\tb", "contains a control character");
        expect_options_bad("\x01", "contains a control character");
        expect_options_bad("ro,\x1b[31m", "contains a control character");
        expect_options_bad("del\x7f", "contains a control character");
        /* Even inside quotes. */
        expect_options_bad("context=\"a\nb\"", "contains a control character");
}

static void test_options_validate_rejects_backslash(void **state) {
        expect_options_bad("a\\b", "contains a backslash");
        expect_options_bad("path=C:\\share", "contains a backslash");
        expect_options_bad("context=\"a\\\",b\"", "contains a backslash");
        expect_options_bad("\\", "contains a backslash");
}

static void test_options_validate_rejects_unbalanced_quotes(void **state) {
        expect_options_bad("\"", "has an unbalanced quote");
        expect_options_bad("context=\"system_u:object_r:x:s0:c460,c902", "has an unbalanced quote");
        expect_options_bad("a=\"b\",c=\"d", "has an unbalanced quote");
        expect_options_bad("a\"b\"c\"", "has an unbalanced quote");
}

/* ---- argument_validate ---- */

static void expect_argument(const char *value, const char *reason) {
        const char *why = NULL;
        int r = argument_validate("source", value, &why);

        if (!reason) {
                assert_int_equal(r, 0);
                return;
        }
        assert_int_equal(r, -EINVAL);
        assert_string_equal(why, reason);
}

static void test_argument_validate(void **state) {
        expect_argument("/mnt/x", NULL);
        expect_argument("srv.example.com:/export", NULL);
        expect_argument("//fs.example.com/share", NULL);
        expect_argument("/mnt/with space", NULL);
        expect_argument("/a-b/-c", NULL);
        expect_argument("tmpfs", NULL);

        expect_argument(NULL, "is empty");
        expect_argument("", "is empty");
        expect_argument("-oro,--target=/etc", "starts with '-'");
        expect_argument("-", "starts with '-'");
        expect_argument("--bind", "starts with '-'");
        expect_argument("/a\nb", "contains a control character");
        expect_argument("/a\tb", "contains a control character");
        expect_argument("/a\x7f", "contains a control character");
        expect_argument("\x01/a", "contains a control character");
}

/* ---- fstype_validate ---- */

static void expect_fstype(const char *fstype, bool ok) {
        const char *why = NULL;
        int r = fstype_validate(fstype, &why);

        test_note("fstype '%s'", fstype ? fstype : "(null)");
        if (ok) {
                assert_int_equal(r, 0);
        } else {
                assert_int_equal(r, -EINVAL);
                assert_string_equal(why, "is not a filesystem type name");
        }
}

static void test_fstype_validate(void **state) {
        char long_name[66];

        expect_fstype("nfs", true);
        expect_fstype("nfs4", true);
        expect_fstype("ext4", true);
        expect_fstype("fuse.sshfs", true);
        expect_fstype("fuse.rclone", true);
        expect_fstype("9p", true);
        expect_fstype("ceph", true);
        expect_fstype("cifs", true);
        expect_fstype("fuse3+x_y-z", true);

        expect_fstype(NULL, false);
        expect_fstype("", false);
        expect_fstype("nfs,ro", false);
        expect_fstype("nfs ro", false);
        expect_fstype("-nfs", false);
        expect_fstype("--types=ext4", false);
        expect_fstype(".fuse", false);
        expect_fstype("nfs\n", false);
        expect_fstype("fuse/../x", false);
        expect_fstype("nfs=4", false);
        expect_fstype("caf\xc3\xa9", false);

        memset(long_name, 'x', sizeof(long_name));
        long_name[64] = '\0';
        expect_fstype(long_name, true);
        long_name[64] = 'x';
        long_name[65] = '\0';
        expect_fstype(long_name, false);
}

/* ---- masking ---- */

static void expect_mask(const char *options, bool all, const char *expected) {
        char *masked = options_mask(options, all);

        test_note("mask%s '%s' -> '%s'", all ? " all" : "", options ? options : "(null)", masked);
        assert_non_null(masked);
        assert_string_equal(masked, expected);
        free(masked);
}

static void test_option_key_is_sensitive(void **state) {
        static const char *const sensitive[] = {
                "password",
                "pass",
                "passwd",
                "secret",
                "secretkey",
                "key",
                "token",
                "credentials",
                "cred",
                "auth",
                "password2",
                "PASSWORD",
                "Secret",
                "mykey",
                "accesskey",
                "SessionToken",
                "dbpassword",
                "x-passwd",
                "mysecret",
                "apikey",
                "passphrase",
                "sshpassphrase",
                /* words of environment names and long options */
                "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN",
                "SECRET_KEY_BASE",
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "MYSQL_ROOT_PASSWORD",
                "--password",
                "-opassword",
                "secret-file",
                "key.pem",
                "SSH_AUTH_SOCK",
        };
        static const char *const plain[] = {
                "username",
                "user",
                "domain",
                "sec",
                "vers",
                "ro",
                "keyfile",
                "secretfile",
                "tokenfile",
                "passthrough",
                "authority",
                "credentialsfile",
                "context",
                "uid",
                "",
                "PATH",
                "HOME",
                "LANG",
                "KUBEMOUNT_STATE_DIR",
                "--verbose",
                "-o",
                "_",
                "--",
                "keys",
                "keying",
                "x-kubemount.label",
                "_file",
                "file_mode",
        };

        for (size_t i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++) {
                test_note("sensitive '%s'", sensitive[i]);
                assert_true(option_key_is_sensitive(sensitive[i], strlen(sensitive[i])));
        }
        for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
                test_note("plain '%s'", plain[i]);
                assert_false(option_key_is_sensitive(plain[i], strlen(plain[i])));
        }
        /* Only the first n bytes are the key. */
        assert_true(option_key_is_sensitive("password=x", 8));
        assert_false(option_key_is_sensitive("password", 5));
}

static void test_mask_sensitive_keys(void **state) {
        expect_mask("password=" SECRET, false, "password=<masked>");
        expect_mask("secret=" SECRET ",ro", false, "secret=<masked>,ro");
        expect_mask("key=" SECRET, false, "key=<masked>");
        expect_mask("token=" SECRET, false, "token=<masked>");
        expect_mask("secretkey=" SECRET, false, "secretkey=<masked>");
        expect_mask("mykey=" SECRET, false, "mykey=<masked>");
        expect_mask("password2=" SECRET, false, "password2=<masked>");
        expect_mask("username=svc,password=" SECRET ",domain=CORP", false,
                    "username=svc,password=<masked>,domain=CORP");
}

static void test_mask_is_case_insensitive(void **state) {
        expect_mask("PASSWORD=" SECRET, false, "PASSWORD=<masked>");
        expect_mask("PassWord=" SECRET, false, "PassWord=<masked>");
        expect_mask("SecretKey=" SECRET, false, "SecretKey=<masked>");
        expect_mask("AccessKEY=" SECRET, false, "AccessKEY=<masked>");
        expect_mask("sessionToken=" SECRET, false, "sessionToken=<masked>");
}

static void test_mask_keeps_non_sensitive_values(void **state) {
        expect_mask(NULL, false, "");
        expect_mask("", false, "");
        expect_mask("ro", false, "ro");
        expect_mask("ro,vers=4,hard,timeo=600", false, "ro,vers=4,hard,timeo=600");
        expect_mask("uid=1000,gid=1000,username=svc", false, "uid=1000,gid=1000,username=svc");
        expect_mask("keyfile=/etc/ceph/key,secretfile=/etc/ceph/secret", false,
                    "keyfile=/etc/ceph/key,secretfile=/etc/ceph/secret");
        /* A sensitive key without a value has nothing to hide. */
        expect_mask("password,ro", false, "password,ro");
        expect_mask("password=", false, "password=<masked>");
        /* Empty items are dropped. */
        expect_mask(",,ro,,rw,", false, "ro,rw");
}

static void test_mask_quoted_values_stay_one_option(void **state) {
        expect_mask("context=\"system_u:object_r:x:s0:c460,c902\",ro", false,
                    "context=\"system_u:object_r:x:s0:c460,c902\",ro");
        expect_mask("password=\"" SECRET ",ro,also-secret\",rw", false, "password=<masked>,rw");
        expect_mask("ro,secret=\"a,b\",token=\"c,d\"", false, "ro,secret=<masked>,token=<masked>");
        expect_mask("password=\"x\"" SECRET ",z", false, "password=<masked>,z");
}

static void test_mask_unterminated_quote_shows_no_secret(void **state) {
        char *masked = options_mask("ro,password=\"" SECRET ",rw", false);

        assert_non_null(masked);
        assert_null(strstr(masked, SECRET));
        assert_string_equal(masked, "ro");
        free(masked);
}

static void test_mask_all_values(void **state) {
        expect_mask("username=svc,password=" SECRET ",domain=CORP", true,
                    "username=<masked>,password=<masked>,domain=<masked>");
        expect_mask("ro,vers=4", true, "<masked>,vers=<masked>");
        /* Bare items are masked whole: among sensitive options they may be the secret. */
        expect_mask("context=\"a,b\",flag", true, "context=<masked>,<masked>");
        expect_mask("opaque-" SECRET ",ro", true, "<masked>,<masked>");
        expect_mask("", true, "");
        expect_mask(NULL, true, "");
}

static void test_km_options_mask_is_options_mask(void **state) {
        const char *inputs[] = { "password=" SECRET ",ro", "ro,vers=4", "", "secret=\"a,b\",x=1" };

        for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
                char *a = km_options_mask(inputs[i]), *b = options_mask(inputs[i], false);
                assert_string_equal(a, b);
                free(a);
                free(b);
        }
        char *n = km_options_mask(NULL);
        assert_string_equal(n, "");
        free(n);
}

/* ---- km_mount_spec_describe ---- */

static char *describe(struct km_mount_spec *s) {
        char *d = km_mount_spec_describe(s);

        assert_non_null(d);
        test_note("describe: '%s'", d);
        return d;
}

static void test_describe_masks_sensitive_keys_given_with_o(void **state) {
        struct km_mount_spec *s = km_mount_spec_new();
        char *d;

        assert_int_equal(km_mount_spec_set_fstype(s, "cifs"), 0);
        assert_int_equal(km_mount_spec_set_source(s, "//fs.example.com/share"), 0);
        assert_int_equal(km_mount_spec_set_target(s, "/mnt/share"), 0);
        assert_int_equal(km_mount_spec_add_options(s, "username=svc,password=" SECRET), 0);
        assert_int_equal(km_mount_spec_add_options(s, "vers=3.1.1,mykey=" SECRET "2"), 0);
        d = describe(s);
        assert_null(strstr(d, SECRET));
        assert_string_equal(d,
                            "-t cifs -o username=svc,password=<masked>,vers=3.1.1,mykey=<masked> "
                            "//fs.example.com/share");
        free(d);
        km_mount_spec_free(s);
}

static void test_describe_masks_every_sensitive_option_value(void **state) {
        struct km_mount_spec *s = km_mount_spec_new();
        char *d;

        assert_int_equal(km_mount_spec_set_fstype(s, "cifs"), 0);
        assert_int_equal(km_mount_spec_set_source(s, "//fs/share"), 0);
        assert_int_equal(km_mount_spec_add_options(s, "ro"), 0);
        assert_int_equal(km_mount_spec_add_sensitive_options(s, "username=" SECRET "-user,password=" SECRET), 0);
        assert_int_equal(km_mount_spec_add_sensitive_options(s, "domain=\"" SECRET ",x\""), 0);
        d = describe(s);
        assert_null(strstr(d, SECRET));
        assert_string_equal(d, "-t cifs -o ro,username=<masked>,password=<masked>,domain=<masked> //fs/share");
        free(d);
        km_mount_spec_free(s);
}

static void test_describe_with_only_sensitive_options(void **state) {
        struct km_mount_spec *s = km_mount_spec_new();
        char *d;

        assert_int_equal(km_mount_spec_add_sensitive_options(s, "opaque-" SECRET ",k=" SECRET), 0);
        d = describe(s);
        assert_null(strstr(d, SECRET));
        assert_true(strncmp(d, "-o <masked>,k=<masked>", strlen("-o <masked>,k=<masked>")) == 0);
        free(d);
        km_mount_spec_free(s);
}

static void test_describe_plain_specs(void **state) {
        struct km_mount_spec *s = km_mount_spec_new();
        char *d;

        d = describe(s);
        assert_string_equal(d, "");
        free(d);

        assert_int_equal(km_mount_spec_set_source(s, "/a"), 0);
        assert_int_equal(km_mount_spec_add_options(s, "bind"), 0);
        d = describe(s);
        assert_string_equal(d, "-o bind /a");
        free(d);

        assert_int_equal(km_mount_spec_set_fstype(s, "nfs"), 0);
        assert_int_equal(km_mount_spec_set_fstype(s, "nfs4"), 0);
        assert_int_equal(km_mount_spec_set_source(s, "srv:/x"), 0);
        assert_int_equal(km_mount_spec_add_options(s, "ro,vers=4"), 0);
        d = describe(s);
        assert_string_equal(d, "-t nfs4 -o bind,ro,vers=4 srv:/x");
        free(d);
        km_mount_spec_free(s);
        km_mount_spec_free(NULL);
}

/* ---- km_mount refuses invalid specs before doing anything ---- */

static void expect_mount_refused(struct km_mount_spec *s, const char *needle) {
        struct km_error err = {};
        int excode = -1;

        assert_int_equal(km_mount(NULL, s, &excode, &err), -EINVAL);
        test_note("km_mount: %s", err.message);
        assert_int_equal(excode, MNT_EX_USAGE);
        assert_int_equal(err.code, -EINVAL);
        assert_non_null(strstr(err.message, needle));
        assert_null(strstr(err.message, SECRET));
}

static void test_mount_refuses_invalid_specs(void **state) {
        struct km_mount_spec *s;

        s = km_mount_spec_new();
        expect_mount_refused(s, "no target");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "-x");
        km_mount_spec_add_sensitive_options(s, "password=" SECRET);
        expect_mount_refused(s, "starts with '-'");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "/nonexistent/kubemount-unit");
        km_mount_spec_set_source(s, "-oro,--target=/etc");
        expect_mount_refused(s, "source '-oro,--target=/etc' starts with '-'");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "/nonexistent/kubemount-unit");
        km_mount_spec_set_source(s, "tmpfs");
        km_mount_spec_set_fstype(s, "tmpfs,ro");
        expect_mount_refused(s, "is not a filesystem type name");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "/nonexistent/kubemount-unit");
        km_mount_spec_set_source(s, "tmpfs");
        km_mount_spec_add_options(s, "size=1m\nro");
        expect_mount_refused(s, "options contains a control character");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "/nonexistent/kubemount-unit");
        km_mount_spec_set_source(s, "//fs/share");
        km_mount_spec_add_sensitive_options(s, "password=" SECRET "\\,x");
        expect_mount_refused(s, "sensitive options contains a backslash");
        km_mount_spec_free(s);

        s = km_mount_spec_new();
        km_mount_spec_set_target(s, "/nonexistent/kubemount-unit");
        km_mount_spec_set_source(s, "//fs/share");
        km_mount_spec_add_sensitive_options(s, "password=\"" SECRET);
        expect_mount_refused(s, "sensitive options has an unbalanced quote");
        km_mount_spec_free(s);
}

/* options_next() must split exactly as libmount's mnt_optstr_next_option(). */
static void test_options_next_splits_like_libmount(void **state) {
        static const char *const cases[] = {
                "",
                "rw",
                "a,b,c",
                ",,a",
                "a,,b",
                "a,",
                "=x",
                "a=",
                "a==b",
                "size=1m,mode=0755",
                "x=\"1,2\",y",
                "context=\"system_u:object_r:x:s0:c460,c902\",ro",
                "\"a,b",
                "a\"b\"c=d,e",
                "k=v=w,z",
        };
        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *copy = strdup(cases[i]), *theirs = copy, *n2, *v2;
                const char *ours = copy, *n1, *v1;
                size_t n1sz, v1sz, n2sz, v2sz;
                int a, b;

                do {
                        a = options_next(&ours, &n1, &n1sz, &v1, &v1sz);
                        b = mnt_optstr_next_option(&theirs, &n2, &n2sz, &v2, &v2sz);
                        assert_int_equal(a, b);
                        if (a == 0) {
                                assert_ptr_equal(n1, n2);
                                assert_int_equal(n1sz, n2sz);
                                assert_ptr_equal(v1, v2);
                                if (v1)
                                        assert_int_equal(v1sz, v2sz);
                                assert_ptr_equal(ours, theirs);
                        }
                } while (a == 0);
                free(copy);
        }
        assert_true(options_has("ro,bind,x=1", "bind"));
        assert_false(options_has("ro,rbind", "bind"));
        assert_false(options_has(NULL, "bind"));
}

static void expect_take(const char *options, const char *kept, const char *value, int taken) {
        static const char *const keys[] = { "password", "pass", NULL };
        size_t len = strlen(options);
        char *copy = strdup(options), *v = NULL;

        assert_non_null(copy);
        test_note("take from '%s'", options);
        assert_int_equal(options_take(copy, keys, &v), taken);
        assert_string_equal(copy, kept);
        if (value)
                assert_string_equal(v, value);
        else
                assert_null(v);
        /* What was freed is zeroed: no byte of a taken value stays behind the end. */
        for (size_t i = strlen(copy); i < len; i++)
                assert_int_equal(copy[i], 0);
        free(copy);
        free(v);
}

static void test_options_take(void **state) {
        expect_take("username=u,password=s3,vers=3.0", "username=u,vers=3.0", "s3", 1);
        expect_take("password=s3", "", "s3", 1);
        expect_take("vers=3.0,pass=p", "vers=3.0", "p", 1);
        /* The last one wins, as in mount.cifs; both go. */
        expect_take("password=a,ro,password=b", "ro", "b", 2);
        /* Only key=value items of exactly those keys. */
        expect_take("password,passwd=x,password2=y,mypassword=z", "password,passwd=x,password2=y,mypassword=z", NULL,
                    0);
        /* A quoted value keeps its commas, a quoted comma is no separator. */
        expect_take("password=\"a,b\",ro", "ro", "\"a,b\"", 1);
        expect_take("context=\"x,y\",password=q", "context=\"x,y\"", "q", 1);
        /* Empty items go, what options_next() cannot split (an open quote) stays. */
        expect_take(",,ro,,password=q,", "ro", "q", 1);
        expect_take("password=q,\"open", "\"open", "q", 1);
        expect_take("", "", NULL, 0);
}

static void test_options_validate_data(void **state) {
        const char *why = NULL;

        assert_int_equal(options_validate_data("cifs", "unc=\\\\h\\s,vers=3.0", &why), 0);
        assert_int_equal(options_validate_data("smb3", "unc=\\\\h\\s", &why), 0);
        assert_int_equal(options_validate_data("nfs", "unc=\\\\h\\s", &why), -EINVAL);
        assert_string_equal(why, "contains a backslash");
        /* Everything else is still refused for cifs. */
        assert_int_equal(options_validate_data("cifs", "a\nb", &why), -EINVAL);
        assert_string_equal(why, "contains a control character");
        assert_int_equal(options_validate_data("cifs", "\"\\", &why), -EINVAL);
        assert_string_equal(why, "has an unbalanced quote");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_options_next_splits_like_libmount),
                cmocka_unit_test(test_options_validate_accepts_ordinary_options),
                cmocka_unit_test(test_options_validate_accepts_quoted_selinux_context),
                cmocka_unit_test(test_options_validate_rejects_control_characters),
                cmocka_unit_test(test_options_validate_rejects_backslash),
                cmocka_unit_test(test_options_validate_data),
                cmocka_unit_test(test_options_take),
                cmocka_unit_test(test_options_validate_rejects_unbalanced_quotes),
                cmocka_unit_test(test_argument_validate),
                cmocka_unit_test(test_fstype_validate),
                cmocka_unit_test(test_option_key_is_sensitive),
                cmocka_unit_test(test_mask_sensitive_keys),
                cmocka_unit_test(test_mask_is_case_insensitive),
                cmocka_unit_test(test_mask_keeps_non_sensitive_values),
                cmocka_unit_test(test_mask_quoted_values_stay_one_option),
                cmocka_unit_test(test_mask_unterminated_quote_shows_no_secret),
                cmocka_unit_test(test_mask_all_values),
                cmocka_unit_test(test_km_options_mask_is_options_mask),
                cmocka_unit_test(test_describe_masks_sensitive_keys_given_with_o),
                cmocka_unit_test(test_describe_masks_every_sensitive_option_value),
                cmocka_unit_test(test_describe_with_only_sensitive_options),
                cmocka_unit_test(test_describe_plain_specs),
                cmocka_unit_test(test_mount_refuses_invalid_specs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
