/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * start_pins (a spare's root and bind sources, start-pins.h), without
 * privileges: a spec's paths hold until something a start would see
 * differently happens: a name added, removed or moved in the root or a
 * directory a mount passes, the root or a source replaced (also by another
 * of the same name), a source deleted; a change elsewhere in the root, or
 * inside a source, keeps them.  A destination through a symlink is not
 * watched (-ENOTDIR).  One inotify instance serves pins one after another,
 * and the events of earlier ones are not taken for a later one's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/mount.h>

#include <cmocka.h>

#include "start-pins.h"
#include "test-helpers.h"

struct fixture {
        char *tmp, *root, *src;
        int inotify_fd;
        struct spec_mount mounts[4];
        char *masked[2];
        struct container_spec spec;
        struct start_pins pins;
};

static void mkdir_at(const char *base, const char *rel) {
        char *p = test_join(base, rel);

        assert_int_equal(mkdir(p, 0755), 0);
        free(p);
}

static void touch_at(const char *base, const char *rel) {
        char *p = test_join(base, rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        close(fd);
        free(p);
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->tmp = test_mkdtemp();
        f->root = test_join(f->tmp, "root");
        f->src = test_join(f->tmp, "src");
        assert_int_equal(mkdir(f->root, 0755), 0);
        assert_int_equal(mkdir(f->src, 0755), 0);
        mkdir_at(f->root, "proc");
        mkdir_at(f->root, "dev");
        mkdir_at(f->root, "etc");
        mkdir_at(f->root, "etc/deep");
        mkdir_at(f->root, "tmp");
        touch_at(f->root, "etc/hosts");
        f->mounts[0] = (struct spec_mount){ .destination = (char *)"/proc", .type = (char *)"proc" };
        f->mounts[1] = (struct spec_mount){ .destination = (char *)"/dev", .type = (char *)"tmpfs" };
        /* Below /dev: in the tmpfs, not the root; the root's dev/pts need not exist. */
        f->mounts[2] = (struct spec_mount){ .destination = (char *)"/dev/pts", .type = (char *)"devpts" };
        f->mounts[3] = (struct spec_mount){
                .destination = (char *)"/etc/deep/data", .type = (char *)"bind", .source = f->src, .flags = MS_BIND
        };
        f->spec.root_path = f->root;
        f->spec.mounts = f->mounts;
        f->spec.n_mounts = 4;
        f->spec.masked_paths = f->masked;
        f->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        assert_true(f->inotify_fd >= 0);
        f->pins = START_PINS_INIT;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        start_pins_done(&f->pins);
        close(f->inotify_fd);
        test_rm_rf(f->tmp);
        free(f->root);
        free(f->src);
        free(f);
        return 0;
}

static void pins_open(struct fixture *f) {
        struct km_error err = {};

        start_pins_done(&f->pins);
        assert_int_equal(start_pins_open(&f->pins, &f->spec, NULL, f->inotify_fd, &err), 0);
        assert_true(f->pins.fds[0] >= 0);
        assert_true(f->pins.fds[4] >= 0);
        start_pins_release(&f->pins);
        assert_int_equal(f->pins.fds[0], -EBADF);
}

static int hold(struct fixture *f) {
        return start_pins_hold(&f->pins, &f->spec, NULL);
}

__attribute__((format(printf, 1, 2))) static void sh(const char *fmt, ...) {
        char cmd[4096];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        assert_int_equal(system(cmd), 0);
}

/* A command of two %s, both path. */
static void sh_twice(const char *two, const char *path) {
        char cmd[4096];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(cmd, sizeof(cmd), two, path, path);
#pragma GCC diagnostic pop
        assert_int_equal(system(cmd), 0);
}

static void test_unchanged_holds(void **state) {
        struct fixture *f = *state;

        pins_open(f);
        assert_int_equal(hold(f), 1);
        assert_int_equal(hold(f), 1);
}

static void test_elsewhere_keeps(void **state) {
        struct fixture *f = *state;

        pins_open(f);
        touch_at(f->root, "tmp/file");
        touch_at(f->src, "new");
        sh("echo x >'%s/etc/hosts'", f->root); /* a write, not a name: binds of it see the same file */
        assert_int_equal(hold(f), 1);
}

static void test_root_names(void **state) {
        struct fixture *f = *state;
        const char *changes[] = {
                "rm -rf '%s/proc' && ln -s /etc '%s/proc'", /* THREATS 19 */
                "mv '%s/proc' '%s/proc.old'",
                "touch '%s/newfile' # %s",
                "rmdir '%s/tmp' # %s",
                "touch '%s/etc/hosts2' # %s", /* /etc/deep/data's mount passes /etc */
        };

        for (size_t i = 0; i < ELEMENTSOF(changes); i++) {
                sh("rm -rf '%s' && mkdir -p '%s/proc' '%s/dev' '%s/etc/deep' '%s/tmp'", f->root, f->root, f->root,
                   f->root, f->root);
                pins_open(f);
                assert_int_equal(hold(f), 1);
                sh_twice(changes[i], f->root);
                test_note("%s", changes[i]);
                assert_int_equal(hold(f), 0);
                /* And stays so: the event is not lost once read. */
                assert_int_equal(hold(f), 0);
        }
}

static void test_deep_and_sources(void **state) {
        struct fixture *f = *state;

        pins_open(f);
        sh("mv '%s/etc/deep' '%s/etc/deep2' && mkdir '%s/etc/deep'", f->root, f->root, f->root);
        assert_int_equal(hold(f), 0);

        pins_open(f);
        assert_int_equal(hold(f), 1);
        /* A source replaced by another of its name; then deleted and made again (its inode number free). */
        sh("mv '%s' '%s.old' && mkdir '%s'", f->src, f->src, f->src);
        assert_int_equal(hold(f), 0);
        sh("rm -rf '%s.old'", f->src);
        pins_open(f);
        sh("rmdir '%s' && mkdir '%s'", f->src, f->src);
        assert_int_equal(hold(f), 0);

        /* The root replaced at its path. */
        pins_open(f);
        sh("mv '%s' '%s.old' && cp -a '%s.old' '%s'", f->root, f->root, f->root, f->root);
        assert_int_equal(hold(f), 0);
        sh("rm -rf '%s.old'", f->root);
}

static void test_symlink_on_the_way(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};

        sh("mv '%s/etc/deep' '%s/etc/real' && ln -s real '%s/etc/deep'", f->root, f->root, f->root);
        start_pins_done(&f->pins);
        assert_int_equal(start_pins_open(&f->pins, &f->spec, NULL, f->inotify_fd, &err), -ENOTDIR);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "/etc/deep"));
}

static void test_instance_reused(void **state) {
        struct fixture *f = *state;

        pins_open(f);
        touch_at(f->root, "first"); /* the first pins' event, not read */
        pins_open(f);               /* the first done, a second on the same instance */
        assert_int_equal(hold(f), 1);
        touch_at(f->root, "second");
        assert_int_equal(hold(f), 0);
}

static void test_overlay_root_not_watched(void **state) {
        struct fixture *f = *state;
        struct km_error err = {};

        f->spec.root_overlay = true;
        start_pins_done(&f->pins);
        assert_int_equal(start_pins_open(&f->pins, &f->spec, NULL, f->inotify_fd, &err), 0);
        assert_int_equal(f->pins.fds[0], -EBADF);
        touch_at(f->root, "newfile"); /* an overlay's lower tree: its own watch (tree-watch.h) checks it */
        assert_int_equal(hold(f), 1);
        sh("mv '%s' '%s.old' && mkdir '%s'", f->src, f->src, f->src); /* its sources still are */
        assert_int_equal(hold(f), 0);
        f->spec.root_overlay = false;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_unchanged_holds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_elsewhere_keeps, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_names, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep_and_sources, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_on_the_way, setup, teardown),
                cmocka_unit_test_setup_teardown(test_instance_reused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_overlay_root_not_watched, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
