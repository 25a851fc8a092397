/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image store (THREATS 14, 15, 24): blobs verified before they appear,
 * invalid digests refused before any filesystem access, concurrent writers
 * of one blob or rootfs, a writer killed mid-write, references with junk
 * files, and gc.  No privileges needed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "digest.h"
#include "store.h"
#include "test-helpers.h"
#include "store-fixture.h"

/* ---- helpers ---- */

static int setup(void **state) {
        return store_fixture_setup();
}

static void digest_of(const char *s, char out[DIGEST_STRING_MAX]) {
        digest_buffer(s, strlen(s), out);
}

static void put_path(const char *path, const char *data) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
        close(fd);
}

/* Writes DATA through begin/commit. */
static int commit_blob(struct store *s, const char *data, const char *digest, int64_t size, struct km_error *err) {
        char *tmp = NULL;
        int fd = store_blob_begin(s, &tmp, err), r;

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
        close(fd);
        r = store_blob_commit(s, tmp, digest, size, err);
        free(tmp);
        return r;
}

/* Every path below DIR with its mode, for before/after comparisons. */
static FILE *listing;
static int list_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        fprintf(listing, "%s %o\n", path, st->st_mode);
        return 0;
}
static char *list_tree(const char *dir) {
        char *buf = NULL;
        size_t size;

        assert_non_null(listing = open_memstream(&buf, &size));
        assert_int_equal(nftw(dir, list_entry, 16, FTW_PHYS), 0);
        assert_int_equal(fclose(listing), 0);
        return buf;
}

/* ---- opening ---- */

static void test_open_layout(void **state) {
        const char *dirs[] = { "blobs", "blobs/sha256", "refs", "rootfs", "tmp" };
        struct store *s = open_store();
        char *slashes = NULL;
        struct stat st;

        assert_string_equal(store_path(s), store_dir);
        assert_int_equal(stat(store_dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                assert_int_equal(lstat(P("%s", dirs[i]), &st), 0);
                assert_true(S_ISDIR(st.st_mode));
                assert_int_equal(st.st_mode & 077, 0);
        }
        assert_int_equal(access(P("lock"), F_OK), 0);
        store_close(s);
        /* Again, on what is there now; trailing slashes change nothing. */
        assert_true(asprintf(&slashes, "%s//", store_dir) > 0);
        assert_int_equal(store_open(slashes, &s, NULL), 0);
        assert_string_equal(store_path(s), store_dir);
        store_close(s);
        free(slashes);
}

static void test_open_refuses_symlink_and_open_dirs(void **state) {
        struct km_error err = {};
        struct store *s = NULL;
        char *real = NULL, *missing = NULL;

        assert_true(asprintf(&real, "%s/real", base) > 0);
        assert_int_equal(mkdir(real, 0700), 0);
        assert_int_equal(symlink(real, store_dir), 0);
        assert_int_equal(store_open(store_dir, &s, &err), -ELOOP);
        assert_null(s);
        assert_non_null(strstr(err.message, "symlink"));
        test_note("%s", err.message);
        /* Nothing was created through the link. */
        assert_int_equal(rmdir(real), 0);
        assert_int_equal(unlink(store_dir), 0);

        /* Writable by group or others. */
        assert_int_equal(mkdir(store_dir, 0700), 0);
        assert_int_equal(chmod(store_dir, 0770), 0);
        assert_int_equal(store_open(store_dir, &s, &err), -EPERM);
        assert_non_null(strstr(err.message, "writable"));
        assert_int_equal(chmod(store_dir, 0700), 0);
        /* A symlinked subdirectory too. */
        assert_int_equal(symlink("/tmp", real), 0);
        assert_int_equal(symlink(real, P("tmp")), 0);
        assert_int_equal(store_open(store_dir, &s, &err), -ELOOP);
        assert_int_equal(unlink(P("tmp")), 0);
        assert_int_equal(unlink(real), 0);

        /* Parents must exist. */
        assert_true(asprintf(&missing, "%s/no/such", base) > 0);
        assert_int_equal(store_open(missing, &s, &err), -ENOENT);
        free(missing);
        free(real);
}

/* ---- blobs ---- */

static void test_blob_round_trip(void **state) {
        const char *data = "{\"schemaVersion\":2}";
        char d[DIGEST_STRING_MAX], *buf = NULL;
        struct km_error err = {};
        struct store *s = open_store();
        struct stat st;
        size_t size;
        int fd;

        digest_of(data, d);
        assert_int_equal(store_blob_exists(s, d), 0);
        assert_int_equal(store_blob_open(s, d, &err), -ENOENT);
        assert_int_equal(commit_blob(s, data, d, (int64_t)strlen(data), &err), 0);
        assert_int_equal(store_blob_exists(s, d), 1);
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(count("blobs/sha256"), 1);
        assert_int_equal(stat(P("blobs/sha256/%s", d + 7), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0444);

        assert_int_equal(store_blob_read(s, d, 1024, &buf, &size, &err), 0);
        assert_int_equal(size, strlen(data));
        assert_string_equal(buf, data);
        free(buf);
        assert_int_equal(store_blob_read(s, d, 4, &buf, &size, &err), -EFBIG);
        fd = store_blob_open(s, d, &err);
        assert_true(fd >= 0);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);

        /* The same blob again, with an unknown size: the existing one stays. */
        assert_int_equal(commit_blob(s, data, d, -1, &err), 0);
        assert_int_equal(count("blobs/sha256"), 1);
        assert_int_equal(count("tmp"), 0);

        /* From memory, the empty blob included. */
        digest_of("", d);
        assert_int_equal(store_blob_put(s, d, "", 0, &err), 0);
        assert_int_equal(store_blob_put(s, d, "", 0, &err), 0);
        assert_int_equal(count("blobs/sha256"), 2);
        assert_int_equal(count("tmp"), 0);
        store_close(s);
}

static void test_blob_wrong_bytes(void **state) {
        char d[DIGEST_STRING_MAX], other[DIGEST_STRING_MAX];
        struct km_error err = {};
        struct store *s = open_store();

        digest_of("expected", d);
        digest_of("tampered", other);
        /* Wrong bytes for a digest. */
        assert_int_equal(commit_blob(s, "tampered", d, 8, &err), -EBADMSG);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, d));
        assert_non_null(strstr(err.message, other));
        assert_non_null(strstr(err.message, "(8 bytes)"));

        /* The right bytes, but longer (or shorter) than declared. */
        assert_int_equal(commit_blob(s, "expected", d, 7, &err), -EBADMSG);
        assert_non_null(strstr(err.message, "declared"));
        assert_int_equal(commit_blob(s, "expected", d, 9, &err), -EBADMSG);
        /* From memory: checked before anything is written. */
        assert_int_equal(store_blob_put(s, d, "tampered", 8, &err), -EBADMSG);
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(count("blobs/sha256"), 0);

        /* A temp name that is not one of ours leads nowhere. */
        assert_int_equal(store_blob_commit(s, "../../x", d, -1, &err), -EINVAL);
        assert_int_equal(store_blob_commit(s, "blob-../..", d, -1, &err), -EINVAL);
        store_close(s);
}

static void test_invalid_digests_touch_nothing(void **state) {
        static const char *const bad[] = {
                "sha256:../../x",
                "sha256:../../../../../../tmp/kubemount-x",
                "sha256:",
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",   /* 63 */
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0", /* 65 */
                "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",  /* upper case */
                "sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef012345678/abcdef",
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "",
                NULL,
        };
        struct km_error err = {};
        struct store *s = open_store();
        char *before, *after, *tmp, *buf = NULL, *x = NULL;
        size_t size;
        int fd;

        before = list_tree(base);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(store_blob_exists(s, bad[i]), -EINVAL);
                assert_int_equal(store_blob_open(s, bad[i], &err), -EINVAL);
                assert_int_equal(store_blob_read(s, bad[i], 100, &buf, &size, &err), -EINVAL);
                assert_int_equal(store_blob_put(s, bad[i], "x", 1, &err), -EINVAL);
                assert_null(store_rootfs_path(s, bad[i]));

                /* Commits consume their temp file or dir, and refuse. */
                fd = store_blob_begin(s, &tmp, &err);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "x", 1), 1);
                close(fd);
                assert_int_equal(store_blob_commit(s, tmp, bad[i], 1, &err), -EINVAL);
                free(tmp);
                assert_int_equal(store_rootfs_begin(s, &tmp, &fd, &err), 0);
                assert_int_equal(mkdirat(fd, "etc", 0755), 0);
                close(fd);
                assert_int_equal(store_rootfs_commit(s, tmp, bad[i], &err), -EINVAL);
                free(tmp);
        }
        after = list_tree(base);
        assert_string_equal(before, after);
        free(before);
        free(after);
        /* Where "../../x" would have landed from blobs/sha256 or rootfs/. */
        assert_true(asprintf(&x, "%s/x", base) > 0);
        assert_int_equal(access(x, F_OK), -1);
        assert_int_equal(access(P("x"), F_OK), -1);
        assert_int_equal(access("/tmp/kubemount-x", F_OK), -1);
        free(x);
        store_close(s);
}

/* ---- root filesystems ---- */

static void test_rootfs_round_trip(void **state) {
        char d[DIGEST_STRING_MAX], *tmp = NULL, *p;
        struct km_error err = {};
        struct store *s = open_store();
        struct stat st;
        int fd, file;

        digest_of("manifest", d);
        assert_null(store_rootfs_path(s, d));
        assert_int_equal(store_rootfs_begin(s, &tmp, &fd, &err), 0);
        assert_non_null(strstr(tmp, "rootfs-"));
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(mkdirat(fd, "bin", 0555), 0);
        file = openat(fd, "hello", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_int_equal(write(file, "hi\n", 3), 3);
        close(file);
        assert_int_equal(store_rootfs_commit(s, tmp, d, &err), 0);
        free(tmp);
        /* The caller's fd now shows the result. */
        assert_int_equal(faccessat(fd, "hello", F_OK, 0), 0);
        close(fd);
        p = store_rootfs_path(s, d);
        assert_non_null(p);
        assert_string_equal(p, P("rootfs/%s", d + 7));
        free(p);
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(count("rootfs"), 1);

        /* A failed unpack: the tree goes, 0555 dirs and all; a name not ours is ignored. */
        assert_int_equal(store_rootfs_begin(s, &tmp, &fd, &err), 0);
        assert_int_equal(mkdirat(fd, "ro", 0755), 0);
        assert_int_equal(mkdirat(fd, "ro/sub", 0755), 0);
        assert_int_equal(fchmodat(fd, "ro", 0555, 0), 0);
        close(fd);
        assert_int_equal(count("tmp"), 1);
        store_rootfs_abort(s, "../rootfs");
        store_rootfs_abort(s, tmp);
        free(tmp);
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(count("rootfs"), 1);
        store_close(s);
}

/* ---- concurrency and crashes ---- */

/* N children wait on a pipe, then run fn together; all must exit 0. */
static void run_together(int n, void (*fn)(void)) {
        pid_t pids[16];
        int gate[2], status;
        char c;

        assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
        for (int i = 0; i < n; i++) {
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0) {
                        close(gate[1]);
                        (void)read(gate[0], &c, 1); /* EOF when the parent opens the gate */
                        fn();
                        _exit(0);
                }
        }
        close(gate[0]);
        close(gate[1]);
        for (int i = 0; i < n; i++) {
                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
}

#define BIG_SIZE (1024 * 1024)
static char *big_data(void) {
        char *p = calloc(1, BIG_SIZE + 1);

        for (size_t i = 0; p && i < BIG_SIZE; i++)
                p[i] = 'a' + (char)(i * 7 % 26);
        return p;
}

/* Children use no cmocka assertions: a failure must end the child, not run the suite on in it. */
static void child_commit_blob(void) {
        char d[DIGEST_STRING_MAX], *data = big_data(), *tmp = NULL;
        struct km_error err = {};
        struct store *s = NULL;
        int fd;

        digest_of(data, d);
        if (store_open(store_dir, &s, &err) < 0 || (fd = store_blob_begin(s, &tmp, &err)) < 0)
                _exit(1);
        /* In pieces, so that the writers interleave. */
        for (size_t off = 0; off < BIG_SIZE; off += 64 * 1024)
                if (write(fd, data + off, 64 * 1024) != 64 * 1024)
                        _exit(2);
        close(fd);
        if (store_blob_commit(s, tmp, d, BIG_SIZE, &err) < 0) {
                fprintf(stderr, "child: %s\n", err.message);
                _exit(3);
        }
        free(tmp);
        store_close(s);
        free(data);
}

static void child_commit_rootfs(void) {
        char d[DIGEST_STRING_MAX], *tmp = NULL, name[16];
        struct km_error err = {};
        struct store *s = NULL;
        int fd, file;

        digest_of("manifest", d);
        if (store_open(store_dir, &s, &err) < 0 || store_rootfs_begin(s, &tmp, &fd, &err) < 0)
                _exit(1);
        for (int i = 0; i < 50; i++) {
                snprintf(name, sizeof(name), "f%d", i);
                file = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (file < 0 || write(file, name, strlen(name)) < 0)
                        _exit(2);
                close(file);
        }
        if (mkdirat(fd, "d", 0555) < 0 || store_rootfs_commit(s, tmp, d, &err) < 0) {
                fprintf(stderr, "child: %s\n", err.message);
                _exit(3);
        }
        close(fd);
        free(tmp);
        store_close(s);
}

static void test_concurrent_writers(void **state) {
        char d[DIGEST_STRING_MAX], *data = big_data(), *buf = NULL;
        struct km_error err = {};
        struct store *s;
        size_t size;

        store_close(open_store());
        run_together(8, child_commit_blob);
        run_together(8, child_commit_rootfs);

        s = open_store();
        digest_of(data, d);
        assert_int_equal(count("blobs/sha256"), 1);
        assert_int_equal(store_blob_read(s, d, 2 * BIG_SIZE, &buf, &size, &err), 0);
        assert_int_equal(size, BIG_SIZE);
        assert_memory_equal(buf, data, BIG_SIZE);
        digest_of("manifest", d);
        assert_int_equal(count("rootfs"), 1);
        assert_int_equal(access(P("rootfs/%s/f49", d + 7), F_OK), 0);
        /* The losers removed their copies. */
        assert_int_equal(count("tmp"), 0);
        free(buf);
        free(data);
        store_close(s);
}

static void test_killed_writer_leaves_only_tmp(void **state) {
        struct km_error err = {};
        int ready[2], status;
        char c, *tmp = NULL;
        struct store *a, *b;
        pid_t pid;

        store_close(open_store());
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct store *s = NULL;
                char *tmp2 = NULL;
                int bfd, rfd;

                if (store_open(store_dir, &s, &err) < 0 || (bfd = store_blob_begin(s, &tmp, &err)) < 0 ||
                    write(bfd, "half a blob", 11) != 11 || store_rootfs_begin(s, &tmp2, &rfd, &err) < 0 ||
                    mkdirat(rfd, "usr", 0755) < 0 || write(ready[1], "r", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(ready[1]);
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));

        assert_int_equal(count("blobs/sha256"), 0);
        assert_int_equal(count("rootfs"), 0);
        assert_int_equal(count("tmp"), 2);

        /* The next open, alone with the store, clears tmp/. */
        a = open_store();
        assert_int_equal(count("tmp"), 0);
        /* While another holds the store open, tmp/ is left alone (its entries may be live). */
        assert_int_equal(close(store_blob_begin(a, &tmp, &err)), 0);
        free(tmp);
        b = open_store();
        assert_int_equal(count("tmp"), 1);
        store_close(b);
        store_close(a);
        a = open_store();
        assert_int_equal(count("tmp"), 0);
        store_close(a);
}

/* ---- references ---- */

static json_t *record(const char *manifest_data) {
        char d[DIGEST_STRING_MAX];

        digest_of(manifest_data, d);
        return json_pack("{s:s, s:i}", "manifest", d, "size", 42);
}

static const char *ref_file(const char *ref) {
        char d[DIGEST_STRING_MAX];

        digest_of(ref, d);
        return P("refs/%s.json", d + 7);
}

static void test_refs_round_trip(void **state) {
        struct km_error err = {};
        struct store *s = open_store();
        json_t *rec = record("m1"), *got = NULL, *list = NULL;
        char d[DIGEST_STRING_MAX];
        struct stat st;

        assert_int_equal(store_ref_get(s, "docker.io/library/busybox:1", &got, &err), -ENOENT);
        assert_int_equal(store_ref_set(s, "docker.io/library/busybox:1", rec, &err), 0);
        assert_int_equal(store_ref_get(s, "docker.io/library/busybox:1", &got, &err), 0);
        assert_string_equal(json_string_value(json_object_get(got, "ref")), "docker.io/library/busybox:1");
        digest_of("m1", d);
        assert_string_equal(json_string_value(json_object_get(got, "manifest")), d);
        assert_int_equal(json_integer_value(json_object_get(got, "size")), 42);
        json_decref(got);
        /* The caller's record is not changed. */
        assert_null(json_object_get(rec, "ref"));
        assert_int_equal(stat(ref_file("docker.io/library/busybox:1"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        assert_int_equal(store_ref_set(s, "b", rec, &err), 0);
        assert_int_equal(store_ref_list(s, &list, &err), 0);
        assert_int_equal(json_array_size(list), 2);
        json_decref(list);

        /* Idempotent removal. */
        assert_int_equal(store_ref_remove(s, "b", &err), 0);
        assert_int_equal(store_ref_remove(s, "b", &err), 0);
        assert_int_equal(store_ref_get(s, "b", &got, &err), -ENOENT);

        /* Refused: no valid manifest digest, not an object, bad references. */
        json_object_set_new(rec, "manifest", json_string("sha256:../../x"));
        assert_int_equal(store_ref_set(s, "c", rec, &err), -EINVAL);
        got = json_array();
        assert_int_equal(store_ref_set(s, "c", got, &err), -EINVAL);
        json_decref(got);
        assert_int_equal(store_ref_set(s, "", rec, &err), -EINVAL);
        assert_int_equal(store_ref_set(s, "a\nb", rec, &err), -EINVAL);
        assert_int_equal(store_ref_get(s, NULL, &got, &err), -EINVAL);
        json_decref(rec);
        assert_int_equal(count("refs"), 1);
        store_close(s);
}

static void test_refs_junk(void **state) {
        static const char *const refs[] = { "zero", "garbage", "symlink", "array", "stranger", "dir" };
        struct km_error err = {};
        struct store *s = open_store();
        json_t *rec = record("m1"), *got = NULL, *list = NULL;
        char *target = NULL;
        struct stat st;

        assert_int_equal(store_ref_set(s, "good", rec, &err), 0);
        /* Junk in the place of records: empty, cut short, a symlink (to a valid record), not an object,
         * another reference's record, a directory. */
        put_path(ref_file("zero"), "");
        put_path(ref_file("garbage"), "{\"ref\": \"garb");
        assert_true(asprintf(&target, "%s/target.json", base) > 0);
        assert_int_equal(link(ref_file("good"), target), 0);
        assert_int_equal(symlink(target, ref_file("symlink")), 0);
        put_path(ref_file("array"), "[1, 2]");
        assert_int_equal(link(ref_file("good"), ref_file("stranger")), 0);
        assert_int_equal(mkdir(ref_file("dir"), 0700), 0);
        put_path(P("refs/not-a-record"), "{}");

        assert_int_equal(store_ref_list(s, &list, &err), 0);
        assert_int_equal(json_array_size(list), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "ref")), "good");
        json_decref(list);
        for (size_t i = 0; i < ELEMENTSOF(refs); i++) {
                assert_int_equal(store_ref_get(s, refs[i], &got, &err), -EBADMSG);
                test_note("%s: %s", refs[i], err.message);
        }

        /* Replaced by set (the directory excepted: not a file to replace). */
        for (size_t i = 0; i + 1 < ELEMENTSOF(refs); i++) {
                assert_int_equal(store_ref_set(s, refs[i], rec, &err), 0);
                assert_int_equal(store_ref_get(s, refs[i], &got, &err), 0);
                assert_string_equal(json_string_value(json_object_get(got, "ref")), refs[i]);
                json_decref(got);
        }
        /* The symlink's target is untouched; the link itself was replaced. */
        got = json_load_file(target, 0, NULL);
        assert_non_null(got);
        assert_string_equal(json_string_value(json_object_get(got, "ref")), "good");
        json_decref(got);
        assert_int_equal(lstat(ref_file("symlink"), &st), 0);
        assert_true(S_ISREG(st.st_mode));
        /* remove takes away whatever junk is there, a directory included. */
        assert_int_equal(store_ref_remove(s, "dir", &err), 0);
        assert_int_equal(store_ref_get(s, "dir", &got, &err), -ENOENT);
        assert_int_equal(store_ref_list(s, &list, &err), 0);
        assert_int_equal(json_array_size(list), 6);
        json_decref(list);
        json_decref(rec);
        free(target);
        store_close(s);
}

/* ---- gc ---- */

static void put_blob(struct store *s, const char *data, char out[DIGEST_STRING_MAX]) {
        struct km_error err = {};

        digest_of(data, out);
        if (store_blob_put(s, out, data, strlen(data), &err) < 0)
                fail_msg("put: %s", err.message);
}

/* A root with a 0555 dir, a hard-linked file of BYTES and a symlink out. */
static void make_rootfs(struct store *s, const char *digest, size_t bytes) {
        struct km_error err = {};
        char *tmp = NULL, *data = calloc(1, bytes + 1);
        int fd, file;

        assert_int_equal(store_rootfs_begin(s, &tmp, &fd, &err), 0);
        assert_int_equal(mkdirat(fd, "usr", 0755), 0);
        assert_int_equal(mkdirat(fd, "usr/bin", 0555), 0);
        file = openat(fd, "usr/data", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        memset(data, 'r', bytes);
        assert_int_equal(write(file, data, bytes), (ssize_t)bytes);
        close(file);
        assert_int_equal(linkat(fd, "usr/data", fd, "usr/data-link", 0), 0);
        assert_int_equal(symlinkat("/etc/passwd", fd, "usr/passwd"), 0);
        close(fd);
        assert_int_equal(store_rootfs_commit(s, tmp, digest, &err), 0);
        free(tmp);
        free(data);
}

static void set_ref(struct store *s, const char *ref, const char *manifest, const char *rootfs) {
        json_t *rec = json_pack("{s:s, s:s?}", "manifest", manifest, "rootfs", rootfs);
        struct km_error err = {};

        if (store_ref_set(s, ref, rec, &err) < 0)
                fail_msg("ref %s: %s", ref, err.message);
        json_decref(rec);
}

static void test_gc(void **state) {
        char cfg[DIGEST_STRING_MAX], l1[DIGEST_STRING_MAX], l2[DIGEST_STRING_MAX], m[DIGEST_STRING_MAX];
        char cfg2[DIGEST_STRING_MAX], l3[DIGEST_STRING_MAX], m2[DIGEST_STRING_MAX], idx[DIGEST_STRING_MAX];
        char unref[DIGEST_STRING_MAX], gone[DIGEST_STRING_MAX], kept[DIGEST_STRING_MAX];
        char by_path[DIGEST_STRING_MAX], missing[DIGEST_STRING_MAX], *text = NULL, *big, *tmp = NULL;
        struct km_error err = {};
        struct store *s = open_store(), *other;
        uint64_t freed = 12345;
        int lockfd;

        put_blob(s, "config", cfg);
        put_blob(s, "layer one", l1);
        put_blob(s, "layer two", l2);
        assert_true(asprintf(&text,
                             "{\"schemaVersion\":2,\"config\":{\"digest\":\"%s\"},"
                             "\"layers\":[{\"digest\":\"%s\"},{\"digest\":\"%s\"},{\"digest\":\"sha256:../../x\"}]}",
                             cfg, l1, l2) > 0);
        put_blob(s, text, m);
        free(text);
        /* An index whose one manifest has its own config and layer. */
        put_blob(s, "config two", cfg2);
        put_blob(s, "layer three", l3);
        assert_true(asprintf(&text, "{\"config\":{\"digest\":\"%s\"},\"layers\":[{\"digest\":\"%s\"}]}", cfg2, l3) > 0);
        put_blob(s, text, m2);
        free(text);
        assert_true(asprintf(&text, "{\"manifests\":[{\"digest\":\"%s\"},{\"digest\":7}]}", m2) > 0);
        put_blob(s, text, idx);
        free(text);
        /* Not referenced. */
        big = calloc(1, 256 * 1024 + 1);
        memset(big, 'u', 256 * 1024);
        put_blob(s, big, unref);
        free(big);
        make_rootfs(s, m, 1000);
        make_rootfs(s, m2, 1000);
        digest_of("gone", gone);
        make_rootfs(s, gone, 100 * 1024);
        digest_of("kept by a live container", kept);
        make_rootfs(s, kept, 1000);
        digest_of("recorded by path", by_path);
        make_rootfs(s, by_path, 1000);
        /* Junk and leftovers. */
        put_path(P("blobs/sha256/junk"), "junk");
        assert_int_equal(close(store_blob_begin(s, &tmp, &err)), 0);
        free(tmp);
        put_path(ref_file("junk"), "garbage");

        set_ref(s, "one", m, NULL);
        set_ref(s, "two", idx, m2 + 7); /* rootfs as HEX */
        /* The manifest is gone, the "rootfs" is an absolute path (as image.c writes it). */
        digest_of("missing manifest", missing);
        set_ref(s, "three", missing, P("rootfs/%s", by_path + 7));

        /* Busy while another holds the store open; the shared lock is back afterwards. */
        other = open_store();
        assert_int_equal(store_gc(s, NULL, &freed, &err), -EBUSY);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "in use"));
        assert_int_equal(freed, 0);
        store_close(other);
        lockfd = open(P("lock"), O_RDWR | O_CLOEXEC);
        assert_true(lockfd >= 0);
        assert_int_equal(flock(lockfd, LOCK_EX | LOCK_NB), -1);
        assert_int_equal(errno, EWOULDBLOCK);

        {
                char *keep[] = { (char *)P("rootfs/%s/", kept + 7), (char *)"/nonexistent", NULL };

                if (store_gc(s, keep, &freed, &err) < 0)
                        fail_msg("gc: %s", err.message);
        }
        test_note("freed %llu bytes", (unsigned long long)freed);
        assert_true(freed >= 256 * 1024 + 100 * 1024);
        assert_true(freed < 256 * 1024 + 100 * 1024 + 64 * 1024);

        const char *reached[] = { cfg, l1, l2, m, cfg2, l3, m2, idx };
        for (size_t i = 0; i < ELEMENTSOF(reached); i++)
                assert_int_equal(store_blob_exists(s, reached[i]), 1);
        assert_int_equal(store_blob_exists(s, unref), 0);
        assert_int_equal(count("blobs/sha256"), (int)ELEMENTSOF(reached));
        const char *roots[] = { m, m2, kept, by_path };
        for (size_t i = 0; i < ELEMENTSOF(roots); i++)
                assert_int_equal(access(P("rootfs/%s", roots[i] + 7), F_OK), 0);
        assert_int_equal(count("rootfs"), (int)ELEMENTSOF(roots));
        assert_int_equal(count("tmp"), 0);
        assert_int_equal(access(ref_file("junk"), F_OK), 0); /* junk refs are left for set to replace */

        /* Without the keep list the kept rootfs goes too. */
        assert_int_equal(store_gc(s, NULL, &freed, &err), 0);
        assert_int_equal(count("rootfs"), 3);
        assert_true(freed >= 1000);
        /* With no references at all, everything goes. */
        assert_int_equal(store_ref_remove(s, "one", &err), 0);
        assert_int_equal(store_ref_remove(s, "two", &err), 0);
        assert_int_equal(store_ref_remove(s, "three", &err), 0);
        assert_int_equal(store_gc(s, NULL, &freed, &err), 0);
        assert_int_equal(count("blobs/sha256"), 0);
        assert_int_equal(count("rootfs"), 0);
        close(lockfd);
        store_close(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_open_layout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_refuses_symlink_and_open_dirs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_blob_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_blob_wrong_bytes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invalid_digests_touch_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rootfs_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_killed_writer_leaves_only_tmp, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refs_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refs_junk, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
