/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Root filesystems of the store and their records (THREATS 29): a tree
 * changed after it was put in place - a file added, rewritten, replaced,
 * removed, chmod'ed, linked, its time set back - is no longer handed out;
 * committing a new unpack replaces it, concurrent writers included; gc
 * removes a record with its tree.  No privileges needed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>

#include <cmocka.h>

#include "digest.h"
#include "store.h"
#include "test-helpers.h"
#include "store-fixture.h"
#include "tree-watch.h"

static char D[DIGEST_STRING_MAX]; /* the manifest digest the trees are committed under */

static int setup(void **state) {
        store_fixture_setup();
        digest_buffer("manifest", 8, D);
        return 0;
}

/* STORE/rootfs/HEX/REL */
#define T(rel) P("rootfs/%s/%s", D + 7, rel)

static void put(const char *path, const char *data) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
        close(fd);
}

static void assert_content(const char *path, const char *want) {
        char buf[256] = "";
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, want);
}

static void putat(int dfd, const char *name, const char *data) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
        close(fd);
}

static bool link_outside; /* commit_tree: bin/tool also linked as STORE/tool-elsewhere */

/* Commits a small image tree under D: bin/tool, etc/conf, etc/link -> conf, a 0555 dir, a hard link. */
static int commit_tree(struct store *s, struct km_error *err) {
        char *tmp = NULL;
        int fd, r;

        assert_int_equal(store_rootfs_begin(s, &tmp, &fd, err), 0);
        assert_int_equal(mkdirat(fd, "bin", 0755), 0);
        assert_int_equal(mkdirat(fd, "etc", 0755), 0);
        assert_int_equal(mkdirat(fd, "ro", 0555), 0);
        putat(fd, "bin/tool", "tool v1\n");
        putat(fd, "etc/conf", "conf\n");
        assert_int_equal(symlinkat("conf", fd, "etc/link"), 0);
        assert_int_equal(linkat(fd, "bin/tool", fd, "bin/tool2", 0), 0);
        if (link_outside)
                assert_int_equal(linkat(fd, "bin/tool", AT_FDCWD, P("tool-elsewhere"), 0), 0);
        r = store_rootfs_commit(s, tmp, D, err);
        close(fd);
        free(tmp);
        return r;
}

static void committed_tree(void) {
        struct km_error err = {};
        struct store *s = open_store();

        if (commit_tree(s, &err) < 0)
                fail_msg("commit: %s", err.message);
        store_close(s);
}

/* A fresh handle's check (a handle remembers what it checked): 1 matches, 0 not (message noted). */
static int check(void) {
        struct km_error err = {};
        struct store *s = open_store();
        char *p = store_rootfs_path(s, D);
        int r = store_rootfs_check(s, D, &err);

        if (r == 0)
                test_note("%s", err.message);
        assert_true(r >= 0);
        assert_int_equal(r, p != NULL);
        free(p);
        store_close(s);
        return r;
}

/* The clock moves on before a change (kernels before 6.13 keep times at the tick). */
static void tick(void) {
        nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
}

static void test_record_written_and_checked(void **state) {
        struct km_error err = {};
        struct store *s;
        json_t *rec;

        s = open_store();
        assert_int_equal(store_rootfs_check(s, D, &err), 0);
        assert_non_null(strstr(err.message, "not unpacked"));
        store_close(s);
        committed_tree();
        rec = json_load_file(P("sums/%s", D + 7), 0, NULL);
        assert_non_null(rec);
        assert_int_equal(json_integer_value(json_object_get(rec, "format")), 1);
        assert_true(digest_is_valid(json_string_value(json_object_get(rec, "tree"))));
        assert_int_equal(json_integer_value(json_object_get(rec, "entries")), 8); /* the root and 7 below */
        json_decref(rec);
        assert_int_equal(check(), 1);
        assert_int_equal(check(), 1); /* checking changes nothing */
        assert_int_equal(count("tmp"), 0);
}

/* Each change, on a fresh tree: then the tree is no longer handed out. */
static void change(int which) {
        struct timespec ts[2];
        struct stat st;

        switch (which) {
        case 0: /* a file added at the top (what a container writing /bin/mount.nfs into / does) */
                put(T("mount.nfs"), "#!/bin/sh\n");
                break;
        case 1: /* a file added deeper */
                put(T("bin/mount.nfs"), "#!/bin/sh\n");
                break;
        case 2: /* rewritten in place, same size, its times set back */
                assert_int_equal(stat(T("bin/tool"), &st), 0);
                put(T("bin/tool"), "tool v2\n");
                ts[0] = st.st_atim;
                ts[1] = st.st_mtim;
                assert_int_equal(utimensat(AT_FDCWD, T("bin/tool"), ts, 0), 0);
                break;
        case 3: /* replaced by another file (rename over it) */
                put(T("etc/new"), "conf\n");
                assert_int_equal(rename(T("etc/new"), T("etc/conf")), 0);
                break;
        case 4: /* removed */
                assert_int_equal(unlink(T("etc/conf")), 0);
                break;
        case 5: /* mode changed */
                assert_int_equal(chmod(T("bin/tool"), 04755), 0);
                break;
        case 6: /* a symlink replaced */
                assert_int_equal(unlink(T("etc/link")), 0);
                assert_int_equal(symlink("/etc/shadow", T("etc/link")), 0);
                break;
        case 7: /* a hard link added elsewhere */
                assert_int_equal(link(T("bin/tool"), P("tool-elsewhere")), 0);
                break;
        case 8: /* a directory made writable */
                assert_int_equal(chmod(T("ro"), 0777), 0);
                break;
        case 9: /* the record removed */
                assert_int_equal(unlink(P("sums/%s", D + 7)), 0);
                break;
        case 10: /* the record made junk */
                put(P("sums/%s", D + 7), "{\"format\": 1, \"tree\": \"sha256:nope\"}");
                break;
        case 11: /* the tree replaced by a copy made by hand (same names and contents, other inodes) */
                assert_int_equal(rename(T(""), P("old")), 0);
                assert_int_equal(mkdir(T(""), 0755), 0);
                break;
        case 12: /* rewritten through a hard link made outside the tree before it was checked */
                put(P("tool-elsewhere"), "tool v2\n");
                break;
        case 13: /* an xattr set */
                assert_int_equal(setxattr(T("etc/conf"), "user.km", "1", 1, 0), 0);
                break;
        }
}

/* The one rootfs/HEX.old-XXXXXX (a replaced tree), or NULL. */
static char *old_tree(void) {
        DIR *d = opendir(P("rootfs"));
        char *found = NULL;

        assert_non_null(d);
        for (struct dirent *de; (de = readdir(d));)
                if (strncmp(de->d_name, D + 7, 64) == 0 && strncmp(de->d_name + 64, ".old-", 5) == 0) {
                        assert_null(found);
                        found = strdup(P("rootfs/%s", de->d_name));
                }
        closedir(d);
        return found;
}

/* A reference to the image: gc keeps its tree and record, and removes a replaced tree no container holds. */
static void set_ref(void) {
        struct km_error err = {};
        struct store *s = open_store();
        json_t *rec = json_pack("{s:s}", "manifest", D);

        assert_int_equal(store_ref_set(s, "local/img:1", rec, &err), 0);
        json_decref(rec);
        store_close(s);
}

static void gc(char *const *keep) {
        struct km_error err = {};
        struct store *s = open_store();
        uint64_t freed = 0;

        if (store_gc(s, keep, &freed, &err) < 0)
                fail_msg("gc: %s", err.message);
        store_close(s);
}

static void test_changed_tree_not_handed_out(void **state) {
        set_ref();
        for (int which = 0; which <= 11; which++) {
                _cleanup_free_ char *old = NULL;
                struct km_error err = {};
                struct store *s;

                test_note("change %d", which);
                committed_tree();
                assert_int_equal(check(), 1);
                tick();
                change(which);
                assert_int_equal(check(), 0);
                /* The next unpack replaces it: the image's own contents are back. */
                tick();
                s = open_store();
                if (commit_tree(s, &err) < 0)
                        fail_msg("commit over a changed tree: %s", err.message);
                store_close(s);
                assert_int_equal(check(), 1);
                assert_content(T("bin/tool"), "tool v1\n");
                assert_content(T("etc/conf"), "conf\n");
                assert_int_equal(access(T("mount.nfs"), F_OK), -1);
                assert_int_equal(access(T("bin/mount.nfs"), F_OK), -1);
                assert_int_equal(count("tmp"), 0);
                /* The old tree is set aside for containers that may run from it; gc removes it when none does. */
                old = old_tree();
                assert_non_null(old);
                assert_int_equal(count("rootfs"), 2);
                if (which == 0)
                        assert_content(P("%s/mount.nfs", old + strlen(store_dir) + 1), "#!/bin/sh\n");
                gc(NULL);
                assert_int_equal(count("rootfs"), 1);
                assert_int_equal(check(), 1);
                unlink(P("tool-elsewhere"));
                if (which == 11) {
                        nftw(P("old"), store_fixture_rm_entry, 16, FTW_PHYS);
                        nftw(P("old"), store_fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                }
        }
}

/* The agent's kept check: a tree is walked once, and any change of it is seen at the next use. */
static void test_watched_tree(void **state) {
        struct km_error err = {};
        struct tree_watch *w = NULL;
        struct tree_watch_stats st;
        uint64_t kept = 0, last_kept = 0;
        struct store *s;

        assert_int_equal(tree_watch_new(&w), 0);
        assert_int_equal(tree_watch_check(w, store_dir, D, NULL, NULL, &err), 0);
        assert_non_null(strstr(err.message, "not unpacked"));
        /* A container to run from another path than the tree's is refused before any check. */
        assert_int_equal(tree_watch_check(w, store_dir, D, "/elsewhere", NULL, &err), -EINVAL);
        assert_non_null(strstr(err.message, "is not the tree"));
        for (int which = 0; which <= 13; which++) {
                test_note("change %d", which);
                link_outside = which == 12;
                committed_tree();
                link_outside = false;
                assert_int_equal(tree_watch_check(w, store_dir, D, NULL, &kept, &err), 1);
                st = tree_watch_stats(w);
                assert_int_equal(st.kept, 1);
                /* Each kept check is one of its own: a spare made from an earlier one is never taken for it. */
                assert_true(kept > last_kept);
                last_kept = kept;
                assert_int_equal(tree_watch_check(w, store_dir, D, NULL, &kept, &err), 1);
                assert_int_equal(kept, last_kept);
                assert_int_equal(tree_watch_stats(w).walks, st.walks); /* the second use: no walk */
                change(which);
                assert_int_equal(tree_watch_stats(w).kept, which == 9 || which == 10 ? 1 : 0);
                assert_int_equal(tree_watch_check(w, store_dir, D, NULL, NULL, &err), 0);
                test_note("... %s", err.message);
                assert_int_equal(tree_watch_stats(w).kept, 0);
                /* Unpacked again: checked in full once more, then kept. */
                s = open_store();
                if (commit_tree(s, &err) < 0)
                        fail_msg("commit over a changed tree: %s", err.message);
                store_close(s);
                assert_int_equal(tree_watch_check(w, store_dir, D, NULL, &kept, &err), 1);
                assert_int_equal(tree_watch_stats(w).kept, 1);
                assert_true(kept > last_kept);
                last_kept = kept;
                gc(NULL);
                unlink(P("tool-elsewhere"));
                if (which == 11) {
                        nftw(P("old"), store_fixture_rm_entry, 16, FTW_PHYS);
                        nftw(P("old"), store_fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                }
        }
        tree_watch_free(w);
}

/* A tree that matches its record is kept: a second commit drops its own copy. */
static void test_matching_tree_kept(void **state) {
        struct km_error err = {};
        struct stat a, b;
        struct store *s;

        committed_tree();
        assert_int_equal(stat(T(""), &a), 0);
        s = open_store();
        assert_int_equal(commit_tree(s, &err), 0);
        store_close(s);
        assert_int_equal(stat(T(""), &b), 0);
        assert_int_equal(a.st_ino, b.st_ino);
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(check(), 1);
}

static void child_commit(void) {
        struct km_error err = {};
        struct store *s = NULL;

        if (store_open(store_dir, &s, &err) < 0 || commit_tree(s, &err) < 0) {
                fprintf(stderr, "child: %s\n", err.message);
                _exit(3);
        }
        store_close(s);
}

/* Eight writers over a changed tree at once: all succeed, one whole tree stays, and it matches its record. */
static void test_concurrent_replacement(void **state) {
        pid_t pids[8];
        int gate[2], status;
        char c;

        committed_tree();
        tick();
        change(1);
        assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0) {
                        close(gate[1]);
                        (void)read(gate[0], &c, 1);
                        child_commit();
                        _exit(0);
                }
        }
        close(gate[0]);
        close(gate[1]);
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
        assert_int_equal(check(), 1);
        assert_int_equal(access(T("bin/mount.nfs"), F_OK), -1);
        assert_int_equal(count("rootfs"), 2); /* replaced once: the new tree and the old one set aside */
        assert_int_equal(count("sums"), 1);
        assert_int_equal(count("tmp"), 0);
}

/*
 * gc: a record goes with its tree and stays with a tree a live container
 * keeps; a replaced tree stays while a container of the image lives (it may
 * have started from it), also when the image's reference is gone.
 */
static void test_gc_removes_record_with_tree(void **state) {
        char *keep[] = { (char *)T(""), NULL };
        struct km_error err = {};
        struct store *s;

        committed_tree();
        tick();
        change(0);
        s = open_store();
        assert_int_equal(commit_tree(s, &err), 0);
        store_close(s);
        assert_int_equal(count("rootfs"), 2);
        gc(keep);
        assert_int_equal(count("rootfs"), 2);
        assert_int_equal(count("sums"), 1);
        assert_int_equal(check(), 1);
        gc(NULL);
        assert_int_equal(count("rootfs"), 0);
        assert_int_equal(count("sums"), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_record_written_and_checked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_tree_not_handed_out, setup, teardown),
                cmocka_unit_test_setup_teardown(test_watched_tree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_matching_tree_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_replacement, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gc_removes_record_with_tree, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
