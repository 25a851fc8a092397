/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount vocabulary (mount-flags.c): every word means what the OCI spec
 * parser, the new mount API, the launcher, the mount(8) grammar and the CLI
 * took it to mean before they shared one table; every word round-trips
 * through the lookups; unknown words are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mount-flags.h"
#include "test-helpers.h"

/* The option words and their MS_* meaning, as the OCI spec parser had them. */
static const struct {
        const char *name;
        unsigned long ms;
        bool clear;
} option_words[] = {
        { "defaults", 0 },
        { "bind", MS_BIND },
        { "rbind", MS_BIND | MS_REC },
        { "ro", MS_RDONLY },
        { "rw", MS_RDONLY, true },
        { "nosuid", MS_NOSUID },
        { "suid", MS_NOSUID, true },
        { "nodev", MS_NODEV },
        { "dev", MS_NODEV, true },
        { "noexec", MS_NOEXEC },
        { "exec", MS_NOEXEC, true },
        { "sync", MS_SYNCHRONOUS },
        { "async", MS_SYNCHRONOUS, true },
        { "dirsync", MS_DIRSYNC },
        { "remount", MS_REMOUNT },
        { "mand", MS_MANDLOCK },
        { "nomand", MS_MANDLOCK, true },
        { "atime", MS_NOATIME, true },
        { "noatime", MS_NOATIME },
        { "relatime", MS_RELATIME },
        { "norelatime", MS_RELATIME, true },
        { "strictatime", MS_STRICTATIME },
        { "nostrictatime", MS_STRICTATIME, true },
        { "diratime", MS_NODIRATIME, true },
        { "nodiratime", MS_NODIRATIME },
        { "nosymfollow", MS_NOSYMFOLLOW },
        { "symfollow", MS_NOSYMFOLLOW, true },
};

/* The mount attributes, as the new mount API had them (the rest went to the filesystem or libmount). */
static const struct {
        const char *name;
        uint64_t set, clr;
} attr_words[] = {
        { "ro", MOUNT_ATTR_RDONLY, 0 },
        { "rw", 0, MOUNT_ATTR_RDONLY },
        { "nosuid", MOUNT_ATTR_NOSUID, 0 },
        { "suid", 0, MOUNT_ATTR_NOSUID },
        { "nodev", MOUNT_ATTR_NODEV, 0 },
        { "dev", 0, MOUNT_ATTR_NODEV },
        { "noexec", MOUNT_ATTR_NOEXEC, 0 },
        { "exec", 0, MOUNT_ATTR_NOEXEC },
        { "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0 },
        { "symfollow", 0, MOUNT_ATTR_NOSYMFOLLOW },
        { "nodiratime", MOUNT_ATTR_NODIRATIME, 0 },
        { "diratime", 0, MOUNT_ATTR_NODIRATIME },
        { "relatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
        { "noatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
        { "strictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
};

static const struct {
        const char *name;
        unsigned long ms;
        enum km_propagation_kind kind;
} propagation_words[] = {
        { "shared", MS_SHARED, KM_MAKE_SHARED },
        { "rshared", MS_SHARED | MS_REC, KM_MAKE_SHARED },
        { "slave", MS_SLAVE, KM_MAKE_SLAVE },
        { "rslave", MS_SLAVE | MS_REC, KM_MAKE_SLAVE },
        { "private", MS_PRIVATE, KM_MAKE_PRIVATE },
        { "rprivate", MS_PRIVATE | MS_REC, KM_MAKE_PRIVATE },
        { "unbindable", MS_UNBINDABLE, KM_MAKE_UNBINDABLE },
        { "runbindable", MS_UNBINDABLE | MS_REC, KM_MAKE_UNBINDABLE },
};

static void test_option_words_mean_what_they_meant(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(option_words); i++) {
                const struct mount_flag *f = mount_flag_lookup(option_words[i].name);

                test_note("%s", option_words[i].name);
                assert_non_null(f);
                assert_false(f->propagation);
                assert_int_equal(f->ms, option_words[i].ms);
                assert_int_equal(f->clear, option_words[i].clear);
        }
}

static void test_attribute_words_mean_what_they_meant(void **state) {
        size_t n, attrs = 0;
        const struct mount_flag *all = mount_flags_all(&n);

        for (size_t i = 0; i < ELEMENTSOF(attr_words); i++) {
                const struct mount_flag *f = mount_flag_lookup(attr_words[i].name);

                test_note("%s", attr_words[i].name);
                assert_non_null(f);
                assert_true(f->attr);
                assert_int_equal(f->attr_set, attr_words[i].set);
                assert_int_equal(f->attr_clr, attr_words[i].clr);
        }
        /* And no other word is one (atime, norelatime, nostrictatime go to libmount). */
        for (size_t i = 0; i < n; i++)
                attrs += all[i].attr;
        assert_int_equal(attrs, ELEMENTSOF(attr_words));
        assert_false(mount_flag_lookup("atime")->attr);
        assert_false(mount_flag_lookup("norelatime")->attr);
}

static void test_propagation_words(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(propagation_words); i++) {
                const struct mount_flag *f = mount_flag_lookup(propagation_words[i].name);

                test_note("%s", propagation_words[i].name);
                assert_non_null(f);
                assert_true(f->propagation);
                assert_false(f->attr);
                assert_int_equal(f->ms, propagation_words[i].ms);
                assert_int_equal(f->kind, propagation_words[i].kind);
                assert_string_equal(mount_propagation_word(f->ms), f->name);
                assert_int_equal(mount_propagation_ms(f->kind), f->ms & ~MS_REC);
        }
        assert_null(mount_propagation_word(0));
        assert_null(mount_propagation_word(MS_REC));
        assert_null(mount_propagation_word(MS_SHARED | MS_SLAVE));
        assert_int_equal(mount_propagation_ms((enum km_propagation_kind)4), 0);
        assert_int_equal(mount_propagation_ms((enum km_propagation_kind) - 1), 0);
}

/* The table holds these words and no others, each once, and each is found again by its name. */
static void test_every_word_round_trips(void **state) {
        size_t n;
        const struct mount_flag *all = mount_flags_all(&n);

        assert_int_equal(n, ELEMENTSOF(option_words) + ELEMENTSOF(propagation_words));
        for (size_t i = 0; i < n; i++) {
                char longer[64];

                assert_ptr_equal(mount_flag_lookup(all[i].name), &all[i]);
                snprintf(longer, sizeof(longer), "%s,x=1", all[i].name);
                assert_ptr_equal(mount_flag_lookupn(longer, strlen(all[i].name)), &all[i]);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(all[i].name, all[j].name);
                /* An attribute word that sets a flag is what that flag is written as. */
                if (all[i].attr && !all[i].clear && all[i].ms) {
                        _cleanup_free_ char *words = mount_options_from_ms(all[i].ms, NULL);
                        struct mount_attr attr = mount_attr_from_ms(all[i].ms);

                        assert_string_equal(words, all[i].name);
                        assert_int_equal(attr.attr_set, all[i].attr_set);
                        assert_int_equal(attr.attr_clr, all[i].attr_clr);
                }
        }
}

static void test_unknown_words_refused(void **state) {
        static const char *const words[] = {
                "",         "RO",        "Nosuid", "ro ",      " ro",           "rro",          "rnosuid", "ridmap",
                "idmap",    "tmpcopyup", "r",      "norw",     "nodefaults",    "make-shared",  "--bind",  "rrshared",
                "lazytime", "silent",    "loud",   "iversion", "x-mount.mkdir", "nosuid,nodev", "ro=1",    "shared:1",
        };

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                test_note("'%s'", words[i]);
                assert_null(mount_flag_lookup(words[i]));
        }
        assert_null(mount_flag_lookup(NULL));
        assert_null(mount_flag_lookupn(NULL, 2));
        assert_null(mount_flag_lookupn("nosuid", 2)); /* "no" */
        assert_null(mount_flag_lookupn("ro", 0));
        assert_non_null(mount_flag_lookupn("rox", 2));
}

static void test_flags_as_words_and_attributes(void **state) {
        _cleanup_free_ char *all = mount_options_from_ms(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME |
                                                                 MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME,
                                                         "mode=755");
        _cleanup_free_ char *none = mount_options_from_ms(MS_BIND | MS_REC | MS_SYNCHRONOUS | MS_REMOUNT, NULL);
        _cleanup_free_ char *extra = mount_options_from_ms(0, "size=1m");
        struct mount_attr attr;

        /* The order the launcher wrote them in: a later atime mode wins, as in mount(8). */
        assert_string_equal(all, "ro,nosuid,nodev,noexec,noatime,nodiratime,relatime,strictatime,mode=755");
        assert_string_equal(none, "");
        assert_string_equal(extra, "size=1m");

        attr = mount_attr_from_ms(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
        assert_int_equal(attr.attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        assert_int_equal(attr.attr_clr, 0);
        attr = mount_attr_from_ms(MS_NOATIME | MS_RELATIME);
        assert_int_equal(attr.attr_set, MOUNT_ATTR_RELATIME);
        assert_int_equal(attr.attr_clr, MOUNT_ATTR__ATIME);
        attr = mount_attr_from_ms(MS_BIND | MS_REC | MS_SHARED);
        assert_int_equal(attr.attr_set, 0);
        assert_int_equal(attr.attr_clr, 0);

        /* Words applied in order: the last of ro/rw wins. */
        attr = (struct mount_attr){};
        mount_attr_apply(&attr, mount_flag_lookup("ro"));
        mount_attr_apply(&attr, mount_flag_lookup("rw"));
        assert_int_equal(attr.attr_set, 0);
        assert_int_equal(attr.attr_clr, MOUNT_ATTR_RDONLY);
        mount_attr_apply(&attr, mount_flag_lookup("ro"));
        assert_int_equal(attr.attr_set, MOUNT_ATTR_RDONLY);
        assert_int_equal(attr.attr_clr, 0);
}

/* mount(8)'s -B, -R, -r, -w after the -o options, in the order km_mount() always wrote them. */
static void test_km_flags_as_words(void **state) {
        static const struct {
                const char *options;
                unsigned flags;
                const char *want;
        } cases[] = {
                { "a=1", KM_MOUNT_BIND | KM_MOUNT_READ_ONLY, "a=1,bind,ro" },
                { NULL, KM_MOUNT_RBIND | KM_MOUNT_READ_WRITE, "rbind,rw" },
                { "", KM_MOUNT_READ_WRITE | KM_MOUNT_READ_ONLY | KM_MOUNT_RBIND | KM_MOUNT_BIND, "bind,rbind,ro,rw" },
                { "x", KM_MOUNT_FAKE | KM_MOUNT_VERBOSE | KM_MOUNT_NO_CANONICALIZE, "x" },
                { NULL, 0, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = mount_options_from_km_flags(cases[i].options, cases[i].flags);

                assert_string_equal(s, cases[i].want);
        }
}

static void test_propagation_from_mountinfo(void **state) {
        assert_int_equal(propagation_from_ms(0), KM_PROPAGATION_PRIVATE);
        assert_int_equal(propagation_from_ms(MS_SHARED | MS_SLAVE), KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE);
        assert_int_equal(propagation_from_ms(MS_UNBINDABLE | MS_REC), KM_PROPAGATION_UNBINDABLE);
        assert_string_equal(km_propagation_name(KM_PROPAGATION_PRIVATE), "private");
        assert_string_equal(km_propagation_name(KM_PROPAGATION_SHARED), "shared");
        assert_string_equal(km_propagation_name(KM_PROPAGATION_SLAVE), "private,slave");
        assert_string_equal(km_propagation_name(KM_PROPAGATION_SHARED | KM_PROPAGATION_SLAVE), "shared,slave");
        assert_string_equal(km_propagation_name(KM_PROPAGATION_UNBINDABLE), "private,unbindable");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_option_words_mean_what_they_meant),
                cmocka_unit_test(test_attribute_words_mean_what_they_meant),
                cmocka_unit_test(test_propagation_words),
                cmocka_unit_test(test_every_word_round_trips),
                cmocka_unit_test(test_unknown_words_refused),
                cmocka_unit_test(test_flags_as_words_and_attributes),
                cmocka_unit_test(test_km_flags_as_words),
                cmocka_unit_test(test_propagation_from_mountinfo),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
