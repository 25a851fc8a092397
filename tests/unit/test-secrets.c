/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The masking and scrubbing of VCS command lines, environments, JSON and
 * mount(8) argvs (secrets.c), with the vocabulary of options.c's
 * option_key_is_sensitive().
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "options.h"
#include "secrets.h"
#include "test-helpers.h"

#define SECRET "hunter2"

static void expect_word(const char *word, const char *expected) {
        char *masked = secret_mask_word(word);

        test_note("word '%s' -> '%s'", word, masked ? masked : "(null)");
        assert_non_null(masked);
        assert_string_equal(masked, expected);
        free(masked);
}

static void test_secret_word_option_strings(void **state) {
        expect_word("username=u,password=" SECRET, "username=u,password=<masked>");
        expect_word("password=" SECRET ",ro,vers=3", "password=<masked>,ro,vers=3");
        expect_word("-opassword=" SECRET ",ro", "-opassword=<masked>,ro");
        expect_word("-opass=" SECRET, "-opass=<masked>");
        expect_word("-ousername=u,pass=" SECRET, "-ousername=u,pass=<masked>");
        expect_word("--password=" SECRET, "--password=<masked>");
        expect_word("--options=user=u,secret=" SECRET, "--options=user=u,secret=<masked>");
        expect_word("secret=\"" SECRET ",x\",ro", "secret=<masked>,ro");
        expect_word("PassWord=" SECRET, "PassWord=<masked>");
        expect_word("mykey=" SECRET ",token=" SECRET "2", "mykey=<masked>,token=<masked>");
        /* Nested: an option string as the value of an innocent key. */
        expect_word("opts=user=u,password=" SECRET, "opts=user=u,password=<masked>");
        /* A value with blanks in an option string goes whole. */
        expect_word("password=" SECRET " two,ro", "password=<masked>,ro");
}

static void expect_source(const char *source, const char *expected) {
        char *masked = secret_mask_source(source);

        test_note("source '%s' -> '%s'", source ? source : "(null)", masked ? masked : "(null)");
        assert_non_null(masked);
        assert_string_equal(masked, expected);
        free(masked);
}

static void test_secret_mount_sources(void **state) {
        expect_source(NULL, "");
        expect_source("", "");
        expect_source("u@h:/srv", "u@h:/srv");
        expect_source("srv:/exports/a", "srv:/exports/a");
        expect_source("//fs.example.com/share", "//fs.example.com/share");
        expect_source("[fe80::1]:/x", "[fe80::1]:/x");
        expect_source("u:" SECRET "@h:/srv", "u:<masked>@h:/srv");
        expect_source("sshfs#u:" SECRET "@h:/", "sshfs#u:<masked>@h:/");
        expect_source("//u:" SECRET "@h/share", "//u:<masked>@h/share");
        expect_source("https://u:" SECRET "@h/x", "https://u:<masked>@h/x");
        expect_source("u:" SECRET "@still" SECRET "@h:/", "u:<masked>@h:/"); /* to the last '@' */
        expect_source("u:@h:/", "u:@h:/");
        expect_source("s3:pass=" SECRET, "s3:pass=<masked>");
        /* Either reading alone would show part of the other's secret. */
        expect_source("u:" SECRET "password=@h:/", "u:<masked>");
        expect_source("u:x,password=@" SECRET, "u:<masked>");
}

static void test_secret_word_keeps_the_rest(void **state) {
        expect_word("", "");
        expect_word("ro,vers=4,hard,,x=", "ro,vers=4,hard,,x=");
        expect_word("keyfile=/etc/ceph/key,secretfile=/etc/ceph/s", "keyfile=/etc/ceph/key,secretfile=/etc/ceph/s");
        expect_word("echo a,,b \"c\" 'd", "echo a,,b \"c\" 'd");
        expect_word("//fs.example.com/share", "//fs.example.com/share");
        expect_word("/mnt/x", "/mnt/x");
        expect_word("password", "password");
        expect_word("password=", "password=");
        expect_word("=" SECRET, "=" SECRET);
        expect_word("--password", "--password");
        expect_word("user@host:/path", "user@host:/path");
        expect_word("https://host/x?a=b", "https://host/x?a=b");
        expect_word(SECRET_MASK, SECRET_MASK);
}

static void test_secret_word_environment(void **state) {
        expect_word("AWS_SECRET_ACCESS_KEY=" SECRET ",with,commas and blanks", "AWS_SECRET_ACCESS_KEY=<masked>");
        expect_word("DB_PASSWORD=" SECRET, "DB_PASSWORD=<masked>");
        expect_word("PATH=/usr/bin:/bin", "PATH=/usr/bin:/bin");
        expect_word("OPTS=user=u,password=" SECRET ",ro", "OPTS=user=u,password=<masked>,ro");
}

static void test_secret_word_shell_scripts(void **state) {
        expect_word("mount.cifs //s/x /m -o username=u,password=" SECRET " && sleep 9",
                    "mount.cifs //s/x /m -o username=u,password=<masked>");
        expect_word("echo a; password=" SECRET " b", "echo a; password=<masked> b");
        expect_word("x=1 TOKEN=" SECRET " prog", "x=1 TOKEN=<masked> prog");
        expect_word("x=1 TOKEN=\"" SECRET " with blank\" prog", "x=1 TOKEN=<masked> prog");
        expect_word("x=1 TOKEN=" SECRET "\\ escaped prog", "x=1 TOKEN=<masked> prog");
        expect_word("x=1 TOKEN='" SECRET " x'y prog", "x=1 TOKEN=<masked> prog");
        expect_word("echo 'password=" SECRET " two' done", "echo 'password=<masked>' done");
        expect_word("echo \"secret=" SECRET " \\\" two\" done", "echo \"secret=<masked>\" done");
        expect_word("mysql --password " SECRET " -h db", "mysql --password <masked> -h db");
        expect_word("tool --token\t" SECRET ";next", "tool --token\t<masked>;next");
        expect_word("tool --verbose " SECRET, "tool --verbose " SECRET);
        expect_word("tool --password -x", "tool --password -x");
        expect_word("a&&password=" SECRET "|b", "a&&password=<masked>|b");
}

static void test_secret_word_urls(void **state) {
        expect_word("https://user:" SECRET "@host/x", "https://user:<masked>@host/x");
        expect_word("url=s3://id:" SECRET "@bucket,ro", "url=s3://id:<masked>@bucket,ro");
        expect_word("smb://DOM;u:" SECRET "@srv/share", "smb://DOM;u:<masked>@srv/share");
        expect_word("git clone https://t:" SECRET "@h/r https://h/q", "git clone https://t:<masked>@h/r https://h/q");
        expect_word("https://user@host/x", "https://user@host/x");
        expect_word("https://user:@host/x", "https://user:@host/x");
        expect_word("a://", "a://");
        expect_word("://:" SECRET "@", "://:<masked>@");
}

static void test_secret_argv(void **state) {
        char *const argv[] = { (char *)"mount.cifs",
                               (char *)"//s/x",
                               (char *)"/m",
                               (char *)"-o",
                               (char *)"username=u,password=" SECRET,
                               (char *)"--password",
                               (char *)SECRET,
                               (char *)"--token",
                               (char *)"-v",
                               (char *)"--key=" SECRET,
                               (char *)"AWS_SECRET_ACCESS_KEY=" SECRET,
                               NULL };
        const char *expected[] = { "mount.cifs",
                                   "//s/x",
                                   "/m",
                                   "-o",
                                   "username=u,password=<masked>",
                                   "--password",
                                   "<masked>",
                                   "--token",
                                   "-v",
                                   "--key=<masked>",
                                   "AWS_SECRET_ACCESS_KEY=<masked>" };
        char **m = secret_mask_argv(argv);

        assert_non_null(m);
        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                test_note("argv[%zu] '%s' -> '%s'", i, argv[i], m[i]);
                assert_string_equal(m[i], expected[i]);
        }
        assert_null(m[ELEMENTSOF(expected)]);
        km_strv_free(m);

        m = secret_mask_argv(NULL);
        assert_non_null(m);
        assert_null(m[0]);
        km_strv_free(m);
}

static void test_secret_env(void **state) {
        static const char *const cases[][2] = {
                { "AWS_SECRET_ACCESS_KEY=" SECRET, "AWS_SECRET_ACCESS_KEY=<masked>" },
                { "password=" SECRET ",x y", "password=<masked>" },
                { "MY_TOKEN=a b,c", "MY_TOKEN=<masked>" },
                { "SECRET_KEY_BASE=" SECRET, "SECRET_KEY_BASE=<masked>" },
                { "PATH=/bin", "PATH=/bin" },
                { "MOUNT_OPTS=user=u,password=" SECRET, "MOUNT_OPTS=user=u,password=<masked>" },
                { "EMPTY=", "EMPTY=" },
                { "NOEQUALS", "NOEQUALS" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *m = secret_mask_env(cases[i][0]);
                test_note("env '%s' -> '%s'", cases[i][0], m ? m : "(null)");
                assert_non_null(m);
                assert_string_equal(m, cases[i][1]);
                free(m);
        }
}

static void test_secret_json(void **state) {
        json_t *args = json_pack("[s, s, s, i, s]", "sh", "-c", "mount -o password=" SECRET " /m", 5, "--secret"),
               *env = json_pack("[s, s]", "PATH=/bin", "API_TOKEN=" SECRET), *m;
        char *text;

        json_array_append_new(args, json_string(SECRET));
        m = secret_mask_json_argv(args);
        text = json_dumps(m, JSON_COMPACT);
        test_note("args: %s", text);
        assert_string_equal(text, "[\"sh\",\"-c\",\"mount -o password=<masked> /m\",5,\"--secret\",\"<masked>\"]");
        free(text);
        json_decref(m);
        m = secret_mask_json_env(env);
        text = json_dumps(m, JSON_COMPACT);
        assert_string_equal(text, "[\"PATH=/bin\",\"API_TOKEN=<masked>\"]");
        free(text);
        json_decref(m);
        assert_null(secret_mask_json_argv(json_null()));
        assert_null(secret_mask_json_env(NULL));
        json_decref(args);
        json_decref(env);
}

/* Masking a masked word changes nothing; a scrubbed word masks like the original. */
static void test_secret_mask_and_scrub_agree(void **state) {
        static const char *const words[] = {
                "username=u,password=" SECRET,
                "-opass=" SECRET,
                "echo 'password=" SECRET " two' done",
                "https://user:" SECRET "@host/x",
                "mysql --password " SECRET " -h db",
                "x=1 TOKEN=\"a b\" c",
                "AWS_SECRET_ACCESS_KEY=a,b c",
                "secret=\"a,b\",ro",
                "password=\"unterminated,ro",
                "==,=,=a=b",
                "key=a=b=c,key=,key",
                "--token\t\t",
                "'\"password=x",
                "a://b:c@d://e:f@g",
        };

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                char *m = secret_mask_word(words[i]), *mm = m ? secret_mask_word(m) : NULL;
                char *copy = strdup(words[i]), *ms;
                size_t n = secret_scrub_word(copy);

                test_note("'%s': masked '%s', scrubbed '%s' (%zu)", words[i], m, copy, n);
                assert_non_null(mm);
                assert_string_equal(m, mm);
                assert_int_equal(strlen(copy), strlen(words[i]));
                for (size_t j = 0; copy[j]; j++)
                        assert_true(copy[j] == words[i][j] || copy[j] == '*');
                ms = secret_mask_word(copy);
                assert_string_equal(ms, m);
                assert_null(strstr(m, SECRET));
                assert_null(strstr(copy, SECRET));
                assert_int_equal(secret_scrub_word(copy), n); /* the same values, now "***" */
                free(m);
                free(mm);
                free(ms);
                free(copy);
        }
        assert_int_equal(secret_scrub_word(NULL), 0);
}

/* Hostile words: long, binary, unbalanced; no crash, no secret byte left in the masked copy. */
static void test_secret_hostile_words(void **state) {
        size_t big = 1 << 20;
        char *w = malloc(big + 1), *m;

        assert_non_null(w);
        /* A megabyte of "password=x," items. */
        for (size_t i = 0; i < big; i++)
                w[i] = "password=x,"[i % 11];
        w[big] = '\0';
        m = secret_mask_word(w);
        assert_non_null(m);
        assert_null(strstr(m, "=x"));
        free(m);
        /* Only '=' and key characters: every value masked, linear time. */
        memset(w, '=', big);
        m = secret_mask_word(w);
        assert_non_null(m);
        assert_string_equal(m, w);
        free(m);
        for (size_t i = 0; i < big; i++)
                w[i] = "key="[i % 4];
        m = secret_mask_word(w);
        assert_non_null(m);
        free(m);
        /* Every byte value. */
        for (size_t i = 0; i < 255; i++)
                w[i] = (char)(i + 1);
        w[255] = '\0';
        m = secret_mask_word(w);
        assert_non_null(m);
        free(m);
        (void)secret_scrub_word(w);
        free(w);
        expect_word("password=\"" SECRET, "password=<masked>");
        expect_word("x 'password=" SECRET, "x 'password=<masked>");
        expect_word("x password=\"" SECRET " y", "x password=<masked>");
        expect_word("x password=" SECRET "\\", "x password=<masked>");
}

/* ---- scrubbing mount(8)'s argv in place ---- */

static void expect_scrubbed(const char *const *in, const char *const *out, int argc) {
        char *argv[16], *copies[16];

        for (int i = 0; i < argc; i++)
                argv[i] = copies[i] = strdup(in[i]);
        argv[argc] = NULL;
        secret_scrub_mount_argv(argc, argv);
        for (int i = 0; i < argc; i++) {
                test_note("argv[%d] '%s' -> '%s'", i, in[i], argv[i]);
                assert_ptr_equal(argv[i], copies[i]); /* in place: the same memory */
                assert_string_equal(argv[i], out[i]);
                free(copies[i]);
        }
}

#define SCRUB(...) ((const char *const[]){ __VA_ARGS__ })
#define STARS "*******" /* strlen(SECRET) */

static void test_scrub_mount_argv(void **state) {
        expect_scrubbed(SCRUB("mount", "-t", "cifs", "-o", "username=u,password=" SECRET, "//s/x", "/m"),
                        SCRUB("mount", "-t", "cifs", "-o", "username=u,password=" STARS, "//s/x", "/m"), 7);
        expect_scrubbed(SCRUB("mount", "-opassword=" SECRET ",ro", "s", "/m"),
                        SCRUB("mount", "-opassword=" STARS ",ro", "s", "/m"), 4);
        expect_scrubbed(SCRUB("mount", "-rwo", "secret=" SECRET, "s", "/m"),
                        SCRUB("mount", "-rwo", "secret=" STARS, "s", "/m"), 5);
        expect_scrubbed(SCRUB("mount", "-vokey=" SECRET, "s", "/m"), SCRUB("mount", "-vokey=" STARS, "s", "/m"), 4);
        expect_scrubbed(SCRUB("mount", "--options=token=" SECRET, "--opt", "pass=" SECRET, "--test-opts",
                              "key=" SECRET),
                        SCRUB("mount", "--options=token=" STARS, "--opt", "pass=" STARS, "--test-opts", "key=" STARS),
                        6);
        expect_scrubbed(SCRUB("mount", "-O", "password=" SECRET), SCRUB("mount", "-O", "password=" STARS), 3);
        /* Arguments of other options and positional words are not options: left alone. */
        expect_scrubbed(SCRUB("mount", "-t", "password=" SECRET, "-tkey=x", "/a/key=" SECRET, "--types=token=x"),
                        SCRUB("mount", "-t", "password=" SECRET, "-tkey=x", "/a/key=" SECRET, "--types=token=x"), 6);
        expect_scrubbed(SCRUB("mount", "--", "-o", "password=" SECRET), SCRUB("mount", "--", "-o", "password=" SECRET),
                        4);
        /* A trailing -o without its argument, and an empty argv. */
        expect_scrubbed(SCRUB("mount", "-o"), SCRUB("mount", "-o"), 2);
        expect_scrubbed(SCRUB("mount"), SCRUB("mount"), 1);
        secret_scrub_mount_argv(0, NULL);
}

/* A VCS command scrubbed in place hides what secret_mask_argv() masks: a word after --KEY too. */
static void test_scrub_argv(void **state) {
        const char *in[] = {
                "mount.x", "--password", SECRET, "--token", "-v", "AWS_SECRET_KEY=" SECRET, "https://u:" SECRET "@h/",
                "plain",   NULL
        };
        const char *out[] = {
                "mount.x", "--password", STARS, "--token", "-v", "AWS_SECRET_KEY=" STARS, "https://u:" STARS "@h/",
                "plain",   NULL
        };
        char *argv[ELEMENTSOF(in)];

        for (size_t i = 0; in[i]; i++)
                argv[i] = strdup(in[i]);
        argv[ELEMENTSOF(in) - 1] = NULL;
        secret_scrub_argv(argv);
        for (size_t i = 0; in[i]; i++) {
                test_note("argv[%zu] '%s' -> '%s'", i, in[i], argv[i]);
                assert_string_equal(argv[i], out[i]);
                free(argv[i]);
        }
        secret_scrub_argv(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_secret_word_option_strings),
                cmocka_unit_test(test_secret_word_keeps_the_rest),
                cmocka_unit_test(test_secret_mount_sources),
                cmocka_unit_test(test_secret_word_environment),
                cmocka_unit_test(test_secret_word_shell_scripts),
                cmocka_unit_test(test_secret_word_urls),
                cmocka_unit_test(test_secret_argv),
                cmocka_unit_test(test_secret_env),
                cmocka_unit_test(test_secret_json),
                cmocka_unit_test(test_secret_mask_and_scrub_agree),
                cmocka_unit_test(test_secret_hostile_words),
                cmocka_unit_test(test_scrub_mount_argv),
                cmocka_unit_test(test_scrub_argv),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
