/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state directory (THREATS 14, 15): name validation, atomic writes that
 * leave the old file intact on ENOSPC/EROFS (those two need root and a
 * throwaway mount namespace), reads that refuse every kind of junk without
 * following or blocking, container dirs, and /proc/PID/stat parsing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "state-dir.h"
#include "test-helpers.h"

/* ---- helpers ---- */

static void put_file(int dfd, const char *name, const void *data, size_t size) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t)size);
        assert_int_equal(close(fd), 0);
}

static char *get_file(int dfd, const char *name, size_t *size) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        char *buf = NULL;

        assert_true(fd >= 0);
        assert_int_equal(read_full_fd(fd, 64 * 1024 * 1024, &buf, size), 0);
        close(fd);
        return buf;
}

/* Temp files are ".NAME.XXXXXX": nothing hidden may be left behind. */
static int count_hidden(int dfd) {
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
        DIR *d;
        struct dirent *de;

        if (fd < 0)
                return -1;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -1;
        }
        while ((de = readdir(d)))
                if (de->d_name[0] == '.' && !streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

/* A state dir under a fresh temp dir; *ret_tmp is rm_rf'ed by the caller. */
static int new_state_dir(char **ret_tmp) {
        struct km_error err = {};
        char *tmp = test_mkdtemp(), *dir = test_join(tmp, "state");
        int fd = state_dir_open(dir, &err);

        if (fd < 0)
                fail_msg("state_dir_open %s: %s", dir, err.message);
        free(dir);
        *ret_tmp = tmp;
        return fd;
}

/* ---- names ---- */

static void test_name_validation(void **state) {
        char long_ok[129], long_bad[130];
        static const struct {
                const char *name;
                bool valid;
        } table[] = {
                { "", false },     { ".", false },          { "..", false },        { "a/b", false },
                { "/a", false },   { "a/", false },         { "-a", false },        { "_a", false },
                { ".a", false },   { "\xc3\xa9", false },   { "a\xc3\xa9", false }, { "a\n", false },
                { "a\tb", false }, { "a b", false },        { "a\x7f", false },     { "a\x01", false },
                { "a:b", false },  { "a*", false },         { "a", true },          { "Z", true },
                { "0", true },     { "pod-1.vol_2", true }, { "a..", true },        { "a-", true },
                { "9_._-", true }, { "ABCxyz019", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                if (state_name_is_valid(table[i].name) != table[i].valid)
                        fail_msg("name #%zu: expected %s", i, table[i].valid ? "valid" : "invalid");
        }
        assert_false(state_name_is_valid(NULL));
        memset(long_ok, 'a', 128);
        long_ok[128] = '\0';
        assert_true(state_name_is_valid(long_ok));
        memset(long_bad, 'a', 129);
        long_bad[129] = '\0';
        assert_false(state_name_is_valid(long_bad));
}

/* ---- atomic write and read ---- */

static void test_write_read_roundtrip(void **state) {
        struct km_error err = {};
        json_t *j = NULL;
        const char *text = "{\"pid\": 42, \"name\": \"x\"}";
        char *tmp;
        int sfd = new_state_dir(&tmp), cfd;
        struct stat st;

        cfd = state_container_dir(sfd, "c1", true, &err);
        assert_true(cfd >= 0);
        assert_int_equal(write_file_atomic(cfd, "state.json", text, strlen(text), 0600, &err), 0);
        assert_int_equal(fstatat(cfd, "state.json", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(count_hidden(cfd), 0);

        assert_int_equal(read_json_file(cfd, "state.json", &j, &err), 0);
        assert_non_null(j);
        assert_int_equal(json_integer_value(json_object_get(j, "pid")), 42);
        assert_string_equal(json_string_value(json_object_get(j, "name")), "x");
        json_decref(j);
        close(cfd);
        close(sfd);
        test_rm_rf(tmp);
}

static void test_rewrite_keeps_exactly_new_bytes(void **state) {
        struct km_error err = {};
        char *tmp, big[8192], *got;
        int sfd = new_state_dir(&tmp);
        size_t size;

        memset(big, 'x', sizeof(big));
        assert_int_equal(write_file_atomic(sfd, "f", big, sizeof(big), 0600, &err), 0);
        assert_int_equal(write_file_atomic(sfd, "f", "{}", 2, 0600, &err), 0);
        got = get_file(sfd, "f", &size);
        assert_int_equal(size, 2);
        assert_memory_equal(got, "{}", 2);
        free(got);
        /* And an empty write leaves an empty file. */
        assert_int_equal(write_file_atomic(sfd, "f", NULL, 0, 0600, &err), 0);
        got = get_file(sfd, "f", &size);
        assert_int_equal(size, 0);
        free(got);
        assert_int_equal(count_hidden(sfd), 0);
        close(sfd);
        test_rm_rf(tmp);
}

static void test_write_refuses_bad_names(void **state) {
        static const char *const bad[] = { "", ".", "..", "a/b", "/abs", "d/" };
        struct km_error err = {};
        char *tmp;
        int sfd = new_state_dir(&tmp);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(write_file_atomic(sfd, bad[i], "{}", 2, 0600, &err), -EINVAL);
        assert_int_equal(write_file_atomic(sfd, NULL, "{}", 2, 0600, &err), -EINVAL);
        assert_int_equal(count_hidden(sfd), 0);
        close(sfd);
        test_rm_rf(tmp);
}

/* A failing rename (NAME is a directory) must not leave the temp file. */
static void test_write_failure_leaves_no_temp(void **state) {
        struct km_error err = {};
        char *tmp;
        int sfd = new_state_dir(&tmp);
        struct stat st;

        assert_int_equal(mkdirat(sfd, "state.json", 0700), 0);
        assert_int_equal(write_file_atomic(sfd, "state.json", "{}", 2, 0600, &err), -EISDIR);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "/state/state.json: rename"));
        assert_int_equal(count_hidden(sfd), 0);
        assert_int_equal(fstatat(sfd, "state.json", &st, 0), 0);
        assert_true(S_ISDIR(st.st_mode));
        close(sfd);
        test_rm_rf(tmp);
}

static void expect_junk(int dfd, const char *name, int expected) {
        struct km_error err = {};
        json_t *j = NULL;
        int r = read_json_file(dfd, name, &j, &err);

        test_note("%s: %d %s", name, r, err.message);
        assert_int_equal(r, expected);
        assert_null(j);
        assert_int_equal(err.code, expected);
        assert_non_null(strstr(err.message, name));
}

static void test_read_refuses_junk(void **state) {
        static const char *const texts[][2] = {
                { "truncated", "{\"pid\": 4" }, { "array", "[1, 2]" }, { "null", "null" },
                { "string", "\"x\"" },          { "number", "42" },    { "dup", "{\"a\": 1, \"a\": 2}" },
                { "trailing", "{} x" },         { "two", "{}{}" },     { "spaces", "   \n" },
        };
        static const unsigned char garbage[] = { 0x7f, 'E', 'L', 'F', 0, 0xff, 0xfe, '{', 0, '}', 0x80 };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char *tmp, *big, *p;
        int sfd = new_state_dir(&tmp), sock;
        json_t *j = NULL;

        expect_junk(sfd, "missing", -ENOENT);
        put_file(sfd, "empty", "", 0);
        expect_junk(sfd, "empty", -EBADMSG);
        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                put_file(sfd, texts[i][0], texts[i][1], strlen(texts[i][1]));
                expect_junk(sfd, texts[i][0], -EBADMSG);
        }
        put_file(sfd, "garbage", garbage, sizeof(garbage));
        expect_junk(sfd, "garbage", -EBADMSG);
        put_file(sfd, "nul", "{\"a\": \"b\0c\"}", 12);
        expect_junk(sfd, "nul", -EBADMSG);

        /* Exactly JSON_FILE_MAX bytes is fine, one more or 2 MiB is not. */
        big = malloc(2 * 1024 * 1024);
        assert_non_null(big);
        memset(big, ' ', 2 * 1024 * 1024);
        memcpy(big, "{}", 2);
        put_file(sfd, "max", big, JSON_FILE_MAX);
        assert_int_equal(read_json_file(sfd, "max", &j, NULL), 0);
        json_decref(j);
        j = NULL;
        put_file(sfd, "over", big, JSON_FILE_MAX + 1);
        expect_junk(sfd, "over", -EBADMSG);
        put_file(sfd, "huge", big, 2 * 1024 * 1024);
        expect_junk(sfd, "huge", -EBADMSG);
        free(big);

        /* A symlink to a valid file is not followed. */
        put_file(sfd, "good", "{}", 2);
        assert_int_equal(read_json_file(sfd, "good", &j, NULL), 0);
        json_decref(j);
        j = NULL;
        assert_int_equal(symlinkat("good", sfd, "link"), 0);
        expect_junk(sfd, "link", -EBADMSG);
        p = test_join(tmp, "state/good");
        assert_int_equal(symlinkat(p, sfd, "abslink"), 0);
        free(p);
        expect_junk(sfd, "abslink", -EBADMSG);

        /* A FIFO must not block (the alarm kills a hung test). */
        assert_int_equal(mkfifoat(sfd, "fifo", 0600), 0);
        alarm(10);
        expect_junk(sfd, "fifo", -EBADMSG);
        alarm(0);

        assert_int_equal(mkdirat(sfd, "dir", 0700), 0);
        expect_junk(sfd, "dir", -EBADMSG);

        p = test_join(tmp, "state/sock");
        assert_true(strlen(p) < sizeof(sa.sun_path));
        strcpy(sa.sun_path, p);
        free(p);
        sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(sock >= 0);
        assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
        expect_junk(sfd, "sock", -EBADMSG);
        close(sock);

        assert_int_equal(read_json_file(sfd, "a/b", &j, NULL), -EINVAL);
        close(sfd);
        test_rm_rf(tmp);
}

/* ---- ENOSPC and EROFS on a small tmpfs (root, own mount namespace) ---- */

#define CHILD_CHECK(cond)                                                                                              \
        do {                                                                                                           \
                if (!(cond)) {                                                                                         \
                        test_note("child: line %d: %s (%s)", __LINE__, #cond, err.message);                            \
                        fflush(stdout);                                                                                \
                        _exit(1);                                                                                      \
                }                                                                                                      \
        } while (0)

static void tmpfs_child(const char *dir) {
        static const char old[] = "{\"generation\": 1}";
        struct km_error err = {};
        size_t big_size = 1024 * 1024, size;
        char *big, *got;
        int sfd, cfd;

        if (unshare(CLONE_NEWNS) < 0) {
                test_note("unshare(CLONE_NEWNS): %s", strerror(errno));
                fflush(stdout);
                _exit(77);
        }
        /* Before anything else: never let a mount propagate to the real machine. */
        CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0);
        CHILD_CHECK(mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") == 0);

        sfd = state_dir_open(dir, &err);
        CHILD_CHECK(sfd >= 0);
        cfd = state_container_dir(sfd, "x", true, &err);
        CHILD_CHECK(cfd >= 0);
        CHILD_CHECK(write_file_atomic(cfd, "state.json", old, strlen(old), 0600, &err) == 0);

        big = malloc(big_size);
        CHILD_CHECK(big);
        memset(big, ' ', big_size);
        big[0] = '{';
        big[big_size - 1] = '}';
        CHILD_CHECK(write_file_atomic(cfd, "state.json", big, big_size, 0600, &err) == -ENOSPC);
        test_note("full: %s", err.message);
        CHILD_CHECK(strstr(err.message, "containers/x/state.json: write: No space left on device"));
        got = get_file(cfd, "state.json", &size);
        CHILD_CHECK(size == strlen(old) && memcmp(got, old, size) == 0);
        free(got);
        CHILD_CHECK(count_hidden(cfd) == 0);
        /* The variant without fsync (container state) is as atomic. */
        CHILD_CHECK(write_file_replace(cfd, "state.json", big, big_size, 0600, &err) == -ENOSPC);
        got = get_file(cfd, "state.json", &size);
        CHILD_CHECK(size == strlen(old) && memcmp(got, old, size) == 0);
        free(got);
        CHILD_CHECK(count_hidden(cfd) == 0);
        free(big);

        /* Space is back once the big temp file is gone. */
        CHILD_CHECK(write_file_atomic(cfd, "state.json", old, strlen(old), 0600, &err) == 0);

        CHILD_CHECK(mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) == 0);
        CHILD_CHECK(write_file_atomic(cfd, "state.json", "{}", 2, 0600, &err) == -EROFS);
        test_note("read-only: %s", err.message);
        CHILD_CHECK(strstr(err.message, "containers/x/state.json") && strstr(err.message, "Read-only file system"));
        got = get_file(cfd, "state.json", &size);
        CHILD_CHECK(size == strlen(old) && memcmp(got, old, size) == 0);
        free(got);
        CHILD_CHECK(count_hidden(cfd) == 0);

        close(cfd);
        close(sfd);
        CHILD_CHECK(umount2(dir, 0) == 0);
        fflush(stdout);
        _exit(0);
}

static void test_write_enospc_erofs_keep_old_file(void **state) {
        test_in_child_as_root(tmpfs_child);
}

/* ---- state_dir_open ---- */

static void expect_dir_refused(const char *dir, int expected, const char *text) {
        struct km_error err = {};
        int r = state_dir_open(dir, &err);

        test_note("%s", err.message);
        if (r >= 0)
                close(r);
        assert_int_equal(r, expected);
        assert_non_null(strstr(err.message, text));
}

static void test_dir_open(void **state) {
        struct km_error err = {};
        char *tmp = test_mkdtemp(), *dir = test_join(tmp, "state"), *p, *q;
        struct stat st;
        int fd;

        fd = state_dir_open(dir, &err);
        assert_true(fd >= 0);
        assert_int_equal(fstatat(fd, "containers", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0700);
        close(fd);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        /* Again, and with a trailing slash. */
        p = test_join(dir, "");
        fd = state_dir_open(p, &err);
        assert_true(fd >= 0);
        close(fd);
        free(p);

        p = test_join(tmp, "link");
        assert_int_equal(symlink(dir, p), 0);
        q = test_join(p, "");
        free(p);
        p = test_join(tmp, "link");
        expect_dir_refused(p, -ELOOP, "/link: is a symlink");
        expect_dir_refused(q, -ELOOP, "/link: is a symlink");
        free(p);
        free(q);

        p = test_join(tmp, "nope/state");
        expect_dir_refused(p, -ENOENT, "nope/state");
        free(p);

        p = test_join(tmp, "ww");
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(chmod(p, 0777), 0);
        expect_dir_refused(p, -EPERM, "writable by group or others");
        assert_int_equal(chmod(p, 0770), 0);
        expect_dir_refused(p, -EPERM, "writable by group or others");
        assert_int_equal(chmod(p, 0755), 0);
        fd = state_dir_open(p, &err);
        assert_true(fd >= 0);
        close(fd);
        q = test_join(p, "containers");
        assert_int_equal(chmod(q, 01777), 0);
        expect_dir_refused(p, -EPERM, "/ww/containers: writable by group or others");
        free(q);
        free(p);

        p = test_join(tmp, "cl");
        assert_int_equal(mkdir(p, 0700), 0);
        q = test_join(p, "containers");
        assert_int_equal(symlink(tmp, q), 0);
        expect_dir_refused(p, -ELOOP, "/cl/containers: is a symlink");
        free(q);
        free(p);

        p = test_join(tmp, "file");
        assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        expect_dir_refused(p, -ENOTDIR, "file");
        free(p);

        if (geteuid() == 0) {
                p = test_join(tmp, "other");
                assert_int_equal(mkdir(p, 0700), 0);
                assert_int_equal(chown(p, 65534, 65534), 0);
                expect_dir_refused(p, -EPERM, "owned by uid 65534");
                free(p);
        }
        expect_dir_refused("", -EINVAL, "state dir");
        free(dir);
        test_rm_rf(tmp);
}

/* ---- container dirs ---- */

static void test_container_dir(void **state) {
        struct km_error err = {};
        char *tmp;
        int sfd = new_state_dir(&tmp), fd;

        assert_int_equal(state_container_dir(sfd, "d", false, &err), -ENOENT);
        fd = state_container_dir(sfd, "d", true, &err);
        assert_true(fd >= 0);
        close(fd);
        fd = state_container_dir(sfd, "d", false, &err);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(state_container_dir(sfd, "..", true, &err), -EINVAL);
        assert_int_equal(state_container_dir(sfd, "a/b", true, &err), -EINVAL);
        assert_int_equal(state_container_dir(sfd, "", true, &err), -EINVAL);
        assert_int_equal(state_container_dir(sfd, NULL, true, &err), -EINVAL);

        assert_int_equal(symlinkat(tmp, sfd, "containers/evil"), 0);
        assert_int_equal(state_container_dir(sfd, "evil", true, &err), -ELOOP);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "containers/evil: is a symlink"));
        close(sfd);
        test_rm_rf(tmp);
}

static void test_container_list(void **state) {
        static const char *const dirs[] = { "b", "a", "c.d", "-x", ".hidden", "_u", "B" };
        static const char *const expected[] = { "B", "a", "b", "c.d", "file" };
        struct km_error err = {};
        char *tmp, **names = NULL, *p, *q;
        int sfd = new_state_dir(&tmp), cfd;

        assert_int_equal(state_container_list(sfd, &names, &err), 0);
        assert_non_null(names);
        assert_null(names[0]);
        km_strv_free(names);

        cfd = openat(sfd, "containers", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(cfd >= 0);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                assert_int_equal(mkdirat(cfd, dirs[i], 0700), 0);
        put_file(cfd, "file", "", 0);
        put_file(cfd, "bad name", "", 0);
        close(cfd);

        assert_int_equal(state_container_list(sfd, &names, &err), (int)ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                assert_string_equal(names[i], expected[i]);
        assert_null(names[ELEMENTSOF(expected)]);
        km_strv_free(names);

        /* containers/ as a symlink is refused, not listed through. */
        p = test_join(tmp, "state/containers");
        q = test_join(tmp, "moved");
        assert_int_equal(rename(p, q), 0);
        assert_int_equal(symlink(q, p), 0);
        free(q);
        free(p);
        assert_int_equal(state_container_list(sfd, &names, &err), -ELOOP);
        close(sfd);
        test_rm_rf(tmp);
}

static void test_container_remove(void **state) {
        struct km_error err = {};
        char *tmp, *outside, *p;
        int sfd = new_state_dir(&tmp), cfd, ofd;
        struct stat st;

        outside = test_join(tmp, "outside");
        assert_int_equal(mkdir(outside, 0700), 0);
        ofd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(ofd >= 0);
        put_file(ofd, "target", "keep", 4);
        assert_int_equal(mkdirat(ofd, "tdir", 0700), 0);
        put_file(ofd, "tdir/inner", "keep", 4);

        cfd = state_container_dir(sfd, "c", true, &err);
        assert_true(cfd >= 0);
        assert_int_equal(write_file_atomic(cfd, "state.json", "{}", 2, 0600, &err), 0);
        p = test_join(outside, "target");
        assert_int_equal(symlinkat(p, cfd, "flink"), 0);
        free(p);
        p = test_join(outside, "tdir");
        assert_int_equal(symlinkat(p, cfd, "dlink"), 0);
        free(p);
        assert_int_equal(mkdirat(cfd, "empty", 0700), 0);
        assert_int_equal(mkfifoat(cfd, "fifo", 0600), 0);
        close(cfd);

        assert_int_equal(state_container_remove(sfd, "c", &err), 0);
        assert_int_equal(fstatat(sfd, "containers/c", &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
        assert_int_equal(fstatat(ofd, "target", &st, 0), 0);
        assert_int_equal(st.st_size, 4);
        assert_int_equal(fstatat(ofd, "tdir/inner", &st, 0), 0);
        /* Idempotent. */
        assert_int_equal(state_container_remove(sfd, "c", &err), 0);
        assert_int_equal(state_container_remove(sfd, "never", &err), 0);
        assert_int_equal(state_container_remove(sfd, "../x", &err), -EINVAL);

        /* containers/NAME itself a symlink: the link goes, its target stays. */
        assert_int_equal(symlinkat(outside, sfd, "containers/l"), 0);
        assert_int_equal(state_container_remove(sfd, "l", &err), 0);
        assert_int_equal(fstatat(sfd, "containers/l", &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(fstatat(ofd, "tdir/inner", &st, 0), 0);

        /* A non-empty subdirectory is refused, and nothing below it is touched. */
        cfd = state_container_dir(sfd, "deep", true, &err);
        assert_true(cfd >= 0);
        assert_int_equal(mkdirat(cfd, "sub", 0700), 0);
        put_file(cfd, "sub/file", "x", 1);
        close(cfd);
        assert_int_equal(state_container_remove(sfd, "deep", &err), -ENOTEMPTY);
        test_note("%s", err.message);
        assert_non_null(strstr(err.message, "containers/deep/sub: rmdir"));
        assert_int_equal(fstatat(sfd, "containers/deep/sub/file", &st, 0), 0);

        /* A container's writable layer (overlay.h) goes whole; links in it are not followed. */
        cfd = state_container_dir(sfd, "lay", true, &err);
        assert_true(cfd >= 0);
        assert_int_equal(mkdirat(cfd, "layer", 0700), 0);
        assert_int_equal(mkdirat(cfd, "layer/upper", 0755), 0);
        assert_int_equal(mkdirat(cfd, "layer/upper/bin", 0755), 0);
        put_file(cfd, "layer/upper/bin/mount.nfs", "x", 1);
        assert_int_equal(symlinkat(outside, cfd, "layer/upper/out"), 0);
        assert_int_equal(mkdirat(cfd, "layer/work", 0700), 0);
        close(cfd);
        assert_int_equal(state_container_remove(sfd, "lay", &err), 0);
        assert_int_equal(fstatat(sfd, "containers/lay", &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(fstatat(ofd, "tdir/inner", &st, 0), 0);

        close(ofd);
        free(outside);
        close(sfd);
        test_rm_rf(tmp);
}

/* ---- /proc/PID/stat ---- */

/* Field 22 the other way: sscanf over the fields that follow the last ')'. */
static unsigned long long starttime_by_sscanf(pid_t pid) {
        char path[64], buf[4096], *p;
        unsigned long long v = 0;
        int fd;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n > 0);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        assert_non_null(p);
        assert_int_equal(sscanf(p + 1,
                                " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                                &v),
                         1);
        return v;
}

static void test_proc_starttime(void **state) {
        int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), p[2], q[2];
        char c, comm[64] = "";
        uint64_t v = 0;
        pid_t pid;
        ssize_t n;

        assert_true(proc_fd >= 0);
        assert_int_equal(state_proc_starttime(proc_fd, getpid(), &v), 0);
        assert_int_equal(v, starttime_by_sscanf(getpid()));

        /* A child named to trip up a parser that looks for the first ')'. */
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(pipe2(q, O_CLOEXEC), 0);
        fflush(stdout);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                close(q[1]);
                prctl(PR_SET_NAME, "a) b (c 1 2 )");
                (void)!write(p[1], "x", 1);
                (void)!read(q[0], &c, 1); /* until the parent closes its end */
                _exit(0);
        }
        close(p[1]);
        close(q[0]);
        assert_int_equal(read(p[0], &c, 1), 1);
        snprintf(comm, sizeof(comm), "/proc/%d/comm", (int)pid);
        {
                int fd = open(comm, O_RDONLY | O_CLOEXEC);

                assert_true(fd >= 0);
                n = read(fd, comm, sizeof(comm) - 1);
                close(fd);
                assert_true(n > 0);
                comm[n] = '\0';
        }
        assert_string_equal(comm, "a) b (c 1 2 )\n");
        assert_int_equal(state_proc_starttime(proc_fd, pid, &v), 0);
        assert_int_equal(v, starttime_by_sscanf(pid));
        close(q[1]);
        close(p[0]);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        assert_int_equal(state_proc_starttime(proc_fd, pid, &v), -ESRCH);

        assert_int_equal(state_proc_starttime(proc_fd, INT_MAX, &v), -ESRCH);
        assert_int_equal(state_proc_starttime(proc_fd, 0, &v), -EINVAL);
        assert_int_equal(state_proc_starttime(proc_fd, -1, &v), -EINVAL);
        close(proc_fd);
}

/* Fake stat files under a directory that stands in for /proc. */
static void test_proc_starttime_parser(void **state) {
        static const struct {
                const char *text;
                int r;
                uint64_t v;
        } table[] = {
                { "1 (x) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 12345 1 2\n", 0, 12345 },
                { "1 ()) ))(( 9 9) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 1 2\n", 0, 777 },
                { "1 (\n) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615 1\n", 0, UINT64_MAX },
                { "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551616 1\n", -EBADMSG, 0 },
                { "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n", -EBADMSG, 0 },
                { "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 1\n", -EBADMSG, 0 },
                { "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x 1\n", -EBADMSG, 0 },
                { "1 x S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1\n", -EBADMSG, 0 },
                { "1 (x S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1\n", -EBADMSG, 0 },
                { "", -EBADMSG, 0 },
        };
        char *tmp = test_mkdtemp();
        int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint64_t v;

        assert_true(dfd >= 0);
        assert_int_equal(mkdirat(dfd, "1", 0700), 0);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                put_file(dfd, "1/stat", table[i].text, strlen(table[i].text));
                v = 0;
                if (state_proc_starttime(dfd, 1, &v) != table[i].r)
                        fail_msg("stat #%zu: expected %d", i, table[i].r);
                if (table[i].r == 0)
                        assert_int_equal(v, table[i].v);
        }
        close(dfd);
        test_rm_rf(tmp);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_name_validation),
                cmocka_unit_test(test_write_read_roundtrip),
                cmocka_unit_test(test_rewrite_keeps_exactly_new_bytes),
                cmocka_unit_test(test_write_refuses_bad_names),
                cmocka_unit_test(test_write_failure_leaves_no_temp),
                cmocka_unit_test(test_read_refuses_junk),
                cmocka_unit_test(test_write_enospc_erofs_keep_old_file),
                cmocka_unit_test(test_dir_open),
                cmocka_unit_test(test_container_dir),
                cmocka_unit_test(test_container_list),
                cmocka_unit_test(test_container_remove),
                cmocka_unit_test(test_proc_starttime),
                cmocka_unit_test(test_proc_starttime_parser),
        };

        umask(022);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
