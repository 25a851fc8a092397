/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The in-process probes: probe_match on the kubelet's exact argv shapes and
 * their near misses, and probe_answer without privileges, compared byte for
 * byte with realpath(3) and, where installed, with the real findmnt, realpath
 * and stat run through popen.  -EAGAIN (the caller runs the real tool) is the
 * only acceptable other answer, and it is required for anything unusual.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cmocka.h>

#include "kubelet-probes.h"
#include "test-helpers.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static enum probe_kind match(const char *const *argv) {
        return probe_match(test_argc(argv), (char *const *)argv);
}

/* The probe's answer for argv, which must match kind; NULL for -EAGAIN. */
static char *answer(enum probe_kind kind, const char *const *argv) {
        char *out = NULL;
        int r;

        assert_int_equal(match(argv), kind);
        r = probe_answer(kind, test_argc(argv), (char *const *)argv, &out);
        assert_true(r == 0 || r == -EAGAIN);
        if (r < 0) {
                assert_null(out);
                return NULL;
        }
        assert_non_null(out);
        return out;
}

static char *answer_findmnt(const char *path) {
        return answer(PROBE_FINDMNT_TARGET,
                      ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target", path));
}

static char *answer_realpath(const char *mode, const char *path) {
        return answer(PROBE_REALPATH, ARGV("realpath", mode, path));
}

static char *answer_stat(const char *path) {
        return answer(PROBE_STAT_TYPE, ARGV("stat", "-L", "--printf=%F", path));
}

static void expect_again(char *out) {
        if (out)
                fail_msg("expected -EAGAIN, got '%s'", out);
}

static void expect_answer(char *out, const char *expected) {
        if (!out)
                fail_msg("expected '%s', got -EAGAIN", expected);
        assert_string_equal(out, expected);
        free(out);
}

/* ---- the real tools, through popen ---- */

static bool have_tool(const char *name) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
        return system(cmd) == 0;
}

/* "cmd 'word'" with the word quoted for sh. */
static char *shell_command(const char *cmd, const char *word) {
        size_t n = strlen(cmd) + 4 * strlen(word) + 4;
        char *s = malloc(n), *p;

        assert_non_null(s);
        p = s + sprintf(s, "%s '", cmd);
        for (const char *w = word; *w; w++) {
                if (*w == '\'') {
                        memcpy(p, "'\\''", 4);
                        p += 4;
                } else
                        *p++ = *w;
        }
        strcpy(p, "'");
        return s;
}

/* stdout of `cmd 'word'` (malloc'ed) when it exits 0, else NULL. */
static char *run_tool(const char *cmd, const char *word) {
        char *command = shell_command(cmd, word), *out = NULL;
        size_t size = 0;
        FILE *f, *mem;
        char buf[4096];
        size_t n;
        int status;

        f = popen(command, "r");
        assert_non_null(f);
        mem = open_memstream(&out, &size);
        assert_non_null(mem);
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
                assert_int_equal(fwrite(buf, 1, n, mem), n);
        assert_int_equal(fclose(mem), 0);
        status = pclose(f);
        free(command);
        if (status != 0) {
                free(out);
                return NULL;
        }
        return out;
}

#define FINDMNT_CMD "findmnt -o target,fstype --noheadings --first-only --target"

/* Whether the probe answered for path; an answer must equal findmnt's, byte for byte. */
static bool findmnt_answered_alike(const char *path) {
        char *mine = answer_findmnt(path), *theirs;
        bool answered = mine != NULL;

        theirs = run_tool(FINDMNT_CMD " 2>/dev/null", path);
        test_note("findmnt %s: probe '%s', findmnt '%s'", path, mine ? mine : "(EAGAIN)", theirs ? theirs : "(failed)");
        if (mine) {
                if (!theirs)
                        fail_msg("findmnt failed on %s, the probe answered '%s'", path, mine);
                assert_string_equal(mine, theirs);
        }
        free(mine);
        free(theirs);
        return answered;
}

/* statmount(2) answers here (kernel >= 6.8, features not disabled). */
static bool findmnt_probe_usable(void) {
        char *out = answer_findmnt("/");

        free(out);
        return out != NULL;
}

/* ---- fixture ---- */

struct fixture {
        char *dir;
        char *sub;         /* dir/sub, a directory */
        char *file;        /* dir/file, 5 bytes */
        char *empty;       /* dir/empty */
        char *link;        /* dir/link -> sub (absolute) */
        char *dangling;    /* dir/dangling -> dir/none */
        char *none;        /* dir/none, absent */
        char *fifo;        /* dir/fifo */
        char *sock;        /* dir/sock, a bound unix socket; NULL when the path is too long */
        char *bad;         /* dir/bad<TAB>name, a directory */
        char *link_to_bad; /* dir/link-to-bad -> bad<TAB>name */
        char *utf8;        /* dir/caf\xc3\xa9, a directory */
        char *dash;        /* dir/-q, a directory */
        int sock_fd;
};

static struct fixture fx;

static char *child(const char *name) {
        char *p = NULL;

        assert_true(asprintf(&p, "%s/%s", fx.dir, name) > 0);
        return p;
}

static int setup_group(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        /* English messages from the real tools, and the probes' default. */
        unsetenv("LC_ALL");
        unsetenv("LC_MESSAGES");
        unsetenv("LANGUAGE");
        setenv("LANG", "C", 1);

        fx.dir = test_mkdtemp();
        fx.sub = child("sub");
        fx.file = child("file");
        fx.empty = child("empty");
        fx.link = child("link");
        fx.dangling = child("dangling");
        fx.none = child("none");
        fx.fifo = child("fifo");
        fx.bad = child("bad\tname");
        fx.link_to_bad = child("link-to-bad");
        fx.utf8 = child("caf\xc3\xa9");
        fx.dash = child("-q");

        assert_int_equal(mkdir(fx.sub, 0755), 0);
        fd = open(fx.file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "hello", 5), 5);
        close(fd);
        fd = open(fx.empty, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(symlink(fx.sub, fx.link), 0);
        assert_int_equal(symlink(fx.none, fx.dangling), 0);
        assert_int_equal(mkfifo(fx.fifo, 0600), 0);
        assert_int_equal(mkdir(fx.bad, 0755), 0);
        assert_int_equal(symlink("bad\tname", fx.link_to_bad), 0);
        assert_int_equal(mkdir(fx.utf8, 0755), 0);
        assert_int_equal(mkdir(fx.dash, 0755), 0);

        fx.sock_fd = -1;
        fx.sock = child("sock");
        if (strlen(fx.sock) < sizeof(sa.sun_path)) {
                strcpy(sa.sun_path, fx.sock);
                fx.sock_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                assert_true(fx.sock_fd >= 0);
                assert_int_equal(bind(fx.sock_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        } else {
                free(fx.sock);
                fx.sock = NULL;
        }
        return 0;
}

static int teardown_group(void **state) {
        char **paths[] = { &fx.file, &fx.empty, &fx.link, &fx.dangling, &fx.fifo, &fx.sock, &fx.link_to_bad };
        char **dirs[] = { &fx.sub, &fx.bad, &fx.utf8, &fx.dash };

        if (fx.sock_fd >= 0)
                close(fx.sock_fd);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                if (*paths[i])
                        unlink(*paths[i]);
                free(*paths[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                rmdir(*dirs[i]);
                free(*dirs[i]);
        }
        free(fx.none);
        assert_int_equal(rmdir(fx.dir), 0);
        free(fx.dir);
        return 0;
}

/* ---- probe_match ---- */

static void test_match_findmnt(void **state) {
        static const char *const names[] = { "findmnt", "/bin/findmnt", "/usr/bin/findmnt", "./findmnt" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                assert_int_equal(match(ARGV(names[i], "-o", "target,fstype", "--noheadings", "--first-only", "--target",
                                            "/var/lib/kubelet/pods")),
                                 PROBE_FINDMNT_TARGET);
        /* Any path word, even one that looks like an option: --target takes it. */
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target",
                                    "-x")),
                         PROBE_FINDMNT_TARGET);

        /* Near misses. */
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--first-only", "--noheadings", "--target",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "--noheadings", "-o", "target,fstype", "--first-only", "--target",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target", "/p",
                                    "/q")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target=/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "-T", "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "fstype,target", "--noheadings", "--first-only", "--target",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype,source", "--noheadings", "--first-only", "--target",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-n", "-o", "target,fstype", "--first-only", "--target", "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--source",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("xfindmnt", "-o", "target,fstype", "--noheadings", "--first-only", "--target",
                                    "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("/usr/bin/findmnt/", "-o", "target,fstype", "--noheadings", "--first-only",
                                    "--target", "/p")),
                         PROBE_NONE);
        assert_int_equal(match(ARGV("findmnt")), PROBE_NONE);
}

static void test_match_realpath(void **state) {
        assert_int_equal(match(ARGV("realpath", "-e", "/p")), PROBE_REALPATH);
        assert_int_equal(match(ARGV("realpath", "-m", "/p")), PROBE_REALPATH);
        assert_int_equal(match(ARGV("/usr/bin/realpath", "-e", "/p")), PROBE_REALPATH);
        assert_int_equal(match(ARGV("/bin/realpath", "-m", "relative/p")), PROBE_REALPATH);

        assert_int_equal(match(ARGV("realpath", "-s", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-e")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "/p", "-e")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-e", "/p", "/q")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-e", "-s", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-em", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "--canonicalize-existing", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-E", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("readlink", "-e", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath")), PROBE_NONE);
        /* A word starting with '-' is an option to realpath: "-e -q" has no operand. */
        assert_int_equal(match(ARGV("realpath", "-e", "-q")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-e", "--")), PROBE_NONE);
        assert_int_equal(match(ARGV("realpath", "-m", "-")), PROBE_NONE);
}

static void test_match_stat(void **state) {
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "/p")), PROBE_STAT_TYPE);
        assert_int_equal(match(ARGV("/usr/bin/stat", "-L", "--printf=%F", "/p")), PROBE_STAT_TYPE);
        assert_int_equal(match(ARGV("/bin/stat", "-L", "--printf=%F", "p")), PROBE_STAT_TYPE);

        assert_int_equal(match(ARGV("stat", "--printf=%F", "-L", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "--printf=%F", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "/p", "/q")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--format=%F", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "-c", "%F", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F\\n", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%f", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "--dereference", "--printf=%F", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "--", "/p")), PROBE_NONE);
        /* "-" is standard input to stat; "-f" an option. */
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "-")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "-f")), PROBE_NONE);
        assert_int_equal(match(ARGV("stat", "-L", "--printf=%F", "--")), PROBE_NONE);
}

static void test_match_other_programs(void **state) {
        assert_int_equal(probe_match(0, (char *const *)ARGV("findmnt")), PROBE_NONE);
        assert_int_equal(match(ARGV("mount", "-t", "nfs", "a:/b", "/c")), PROBE_NONE);
        assert_int_equal(match(ARGV("umount", "/c")), PROBE_NONE);
        assert_int_equal(match(ARGV("ls", "-e", "/p")), PROBE_NONE);
        assert_int_equal(match(ARGV("")), PROBE_NONE);
        assert_int_equal(match(ARGV("/")), PROBE_NONE);
}

/* ---- realpath ---- */

static void expect_realpath_as_libc(const char *path, const char *target) {
        char *resolved = realpath(target, NULL), *expected = NULL;

        assert_non_null(resolved);
        assert_true(asprintf(&expected, "%s\n", resolved) > 0);
        expect_answer(answer_realpath("-e", path), expected);
        expect_answer(answer_realpath("-m", path), expected);
        if (have_tool("realpath")) {
                char *theirs = run_tool("realpath -e", path);
                assert_non_null(theirs);
                assert_string_equal(theirs, expected);
                free(theirs);
        }
        free(expected);
        free(resolved);
}

static void test_realpath_dir_and_symlink(void **state) {
        char *p = NULL;

        expect_realpath_as_libc(fx.dir, fx.dir);
        expect_realpath_as_libc(fx.sub, fx.sub);
        expect_realpath_as_libc(fx.link, fx.sub);
        expect_realpath_as_libc(fx.file, fx.file);
        expect_realpath_as_libc("/", "/");
        expect_realpath_as_libc("//", "/");

        assert_true(asprintf(&p, "%s/./sub/../link/", fx.dir) > 0);
        expect_realpath_as_libc(p, fx.sub);
        free(p);
        assert_true(asprintf(&p, "%s//link/.", fx.dir) > 0);
        expect_realpath_as_libc(p, fx.sub);
        free(p);
}

static void test_realpath_relative(void **state) {
        int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(cwd >= 0);
        assert_int_equal(chdir(fx.dir), 0);
        expect_realpath_as_libc("sub", fx.sub);
        expect_realpath_as_libc("link", fx.sub);
        expect_realpath_as_libc(".", fx.dir);
        expect_realpath_as_libc("./sub/..", fx.dir);
        /* "-q" exists here, but realpath takes it for an option and fails (missing operand). */
        assert_int_equal(access("-q", F_OK), 0);
        assert_int_equal(match(ARGV("realpath", "-e", "-q")), PROBE_NONE);
        if (have_tool("realpath"))
                assert_null(run_tool("realpath -e 2>/dev/null", "-q"));
        assert_int_equal(fchdir(cwd), 0);
        close(cwd);
}

static void test_realpath_unusual_is_left_to_realpath(void **state) {
        char *p = NULL;

        /* Missing (realpath -m would print something: the tool does it). */
        expect_again(answer_realpath("-e", fx.none));
        expect_again(answer_realpath("-m", fx.none));
        expect_again(answer_realpath("-m", "/nonexistent-kubemount/a/b"));
        expect_again(answer_realpath("-e", fx.dangling));
        expect_again(answer_realpath("-m", fx.dangling));
        expect_again(answer_realpath("-e", ""));
        /* A file used as a directory. */
        assert_true(asprintf(&p, "%s/", fx.file) > 0);
        expect_again(answer_realpath("-e", p));
        free(p);
        /* Names the tool would print with bytes outside printable ASCII. */
        expect_again(answer_realpath("-e", fx.bad));
        expect_again(answer_realpath("-e", fx.link_to_bad));
        expect_again(answer_realpath("-m", fx.utf8));
}

/* ---- stat ---- */

static void expect_stat_type(const char *path, const char *type) {
        expect_answer(answer_stat(path), type);
        if (have_tool("stat")) {
                char *theirs = run_tool("stat -L --printf=%F", path);
                assert_non_null(theirs);
                assert_string_equal(theirs, type);
                free(theirs);
        }
}

static void test_stat_types(void **state) {
        struct stat st;

        expect_stat_type(fx.file, "regular file");
        expect_stat_type(fx.empty, "regular empty file");
        expect_stat_type(fx.dir, "directory");
        expect_stat_type(fx.sub, "directory");
        expect_stat_type(fx.link, "directory"); /* -L follows it */
        expect_stat_type("/", "directory");
        expect_stat_type("/dev/null", "character special file");
        expect_stat_type(fx.fifo, "fifo");
        if (fx.sock)
                expect_stat_type(fx.sock, "socket");
        else
                test_note("socket: temp path too long for sun_path, not checked");
        if (stat("/dev/loop0", &st) == 0 && S_ISBLK(st.st_mode))
                expect_stat_type("/dev/loop0", "block special file");
        /* The name is not printed: any bytes will do. */
        expect_stat_type(fx.bad, "directory");
        expect_stat_type(fx.utf8, "directory");
}

static void test_stat_unusual_is_left_to_stat(void **state) {
        expect_again(answer_stat(fx.none));
        expect_again(answer_stat(fx.dangling));
        expect_again(answer_stat(""));
}

struct saved_env {
        char *values[4];
};
static const char *const locale_vars[] = { "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE" };

static void save_env(struct saved_env *s) {
        for (size_t i = 0; i < ELEMENTSOF(locale_vars); i++) {
                const char *v = getenv(locale_vars[i]);
                s->values[i] = v ? strdup(v) : NULL;
                unsetenv(locale_vars[i]);
        }
}

static void restore_env(struct saved_env *s) {
        for (size_t i = 0; i < ELEMENTSOF(locale_vars); i++) {
                if (s->values[i])
                        setenv(locale_vars[i], s->values[i], 1);
                else
                        unsetenv(locale_vars[i]);
                free(s->values[i]);
        }
}

static void expect_stat_in_locale(const char *var, const char *value, bool english) {
        struct saved_env saved;
        char *out;

        save_env(&saved);
        setenv(var, value, 1);
        out = answer_stat(fx.file);
        restore_env(&saved);
        test_note("%s=%s: %s", var, value, out ? out : "(EAGAIN)");
        if (english)
                expect_answer(out, "regular file");
        else
                expect_again(out);
}

static void test_stat_translated_locale_is_left_to_stat(void **state) {
        struct saved_env saved;

        expect_stat_in_locale("LANG", "de_DE.UTF-8", false);
        expect_stat_in_locale("LC_ALL", "de_DE.UTF-8", false);
        expect_stat_in_locale("LC_MESSAGES", "fr_FR.UTF-8", false);
        expect_stat_in_locale("LANGUAGE", "de", false);
        expect_stat_in_locale("LANG", "en_US.UTF-8", true);
        expect_stat_in_locale("LANG", "C.UTF-8", true);
        expect_stat_in_locale("LANG", "POSIX", true);
        expect_stat_in_locale("LC_ALL", "C", true);
        expect_stat_in_locale("LANG", "", true);

        /* Any non-English variable is enough, even with LC_ALL=C. */
        save_env(&saved);
        setenv("LC_ALL", "C", 1);
        setenv("LANG", "de_DE.UTF-8", 1);
        expect_again(answer_stat(fx.file));
        restore_env(&saved);

        /* Realpath prints no words: the locale does not matter. */
        save_env(&saved);
        setenv("LANG", "de_DE.UTF-8", 1);
        {
                char *out = answer_realpath("-e", "/");
                restore_env(&saved);
                expect_answer(out, "/\n");
        }
}

/* ---- findmnt ---- */

/* The temp dir lies on the mount at "/" (findmnt says so). */
static bool temp_dir_on_root(void) {
        char *theirs = run_tool(FINDMNT_CMD, fx.dir);
        bool r = theirs && startswith(theirs, "/ ");

        if (!r)
                test_note("%s is not on the mount at /: %s", fx.dir, theirs ? theirs : "(findmnt failed)");
        free(theirs);
        return r;
}

static void test_findmnt_root_and_temp_dir(void **state) {
        bool on_root;

        if (!have_tool("findmnt")) {
                test_note("findmnt not installed");
                skip();
        }
        if (!findmnt_probe_usable()) {
                test_note("the probe defers for / (no statmount(2), features disabled, or / stacked)");
                skip();
        }
        assert_true(findmnt_answered_alike("/"));
        on_root = temp_dir_on_root();
        /* On "/" (not stacked, as seen above) the temp dir must be answered too. */
        assert_true(findmnt_answered_alike(fx.dir) || !on_root);
        assert_true(findmnt_answered_alike(fx.sub) || !on_root);
        assert_true(findmnt_answered_alike(fx.link) || !on_root);
        assert_true(findmnt_answered_alike(fx.file) || !on_root);
        /* The path is not printed, only its mount point. */
        assert_true(findmnt_answered_alike(fx.link_to_bad) || !on_root);
}

/* dir/NAME for the first entry of dir other than . and .., or NULL. */
static char *first_entry(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        char *p = NULL;

        if (!d)
                return NULL;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        assert_true(asprintf(&p, "%s%s%s", dir, streq(dir, "/") ? "" : "/", de->d_name) > 0);
                        break;
                }
        closedir(d);
        return p;
}

/* Every mount point this process sees, and a path below each: the same answer or none. */
static void test_findmnt_every_mount_point(void **state) {
        FILE *f;
        char *line = NULL;
        size_t size = 0;
        int checked = 0, answered = 0;

        if (!have_tool("findmnt") || !findmnt_probe_usable())
                skip();
        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                skip();
        while (getline(&line, &size, f) > 0 && checked < 200) {
                char point[4096], *below = NULL;
                /* Field 5 is the mount point; escaped ones (\040) are left out. */
                if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 || strchr(point, '\\'))
                        continue;
                answered += findmnt_answered_alike(point);
                /* And the first entry inside it, whatever it is. */
                below = first_entry(point);
                if (below)
                        findmnt_answered_alike(below);
                free(below);
                checked++;
        }
        free(line);
        fclose(f);
        test_note("%d mount points, %d answered in-process", checked, answered);
        assert_true(answered > 0);
}

static void test_findmnt_relative_path(void **state) {
        bool on_root;
        int cwd;

        if (!have_tool("findmnt") || !findmnt_probe_usable())
                skip();
        cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(cwd >= 0);
        on_root = temp_dir_on_root();
        assert_int_equal(chdir(fx.dir), 0);
        assert_true(findmnt_answered_alike(".") || !on_root);
        assert_true(findmnt_answered_alike("sub") || !on_root);
        assert_true(findmnt_answered_alike("link/..") || !on_root);
        if (chdir("/proc") == 0) {
                findmnt_answered_alike("self");
                findmnt_answered_alike(".");
        }
        assert_int_equal(fchdir(cwd), 0);
        close(cwd);
}

static void test_findmnt_unusual_is_left_to_findmnt(void **state) {
        expect_again(answer_findmnt(fx.none));
        expect_again(answer_findmnt(fx.dangling));
        expect_again(answer_findmnt("/nonexistent-kubemount"));
        expect_again(answer_findmnt(""));
        /* Exists, but findmnt would print it escaped. */
        expect_again(answer_findmnt(fx.bad));
        expect_again(answer_findmnt(fx.utf8));
}

static void test_no_probe_no_answer(void **state) {
        char *out = NULL;

        assert_int_equal(probe_answer(PROBE_NONE, 2, (char *const *)ARGV("ls", "/"), &out), -EAGAIN);
        assert_null(out);
}

/* Last: the feature switch is process-wide and cannot be turned back on. */
static void test_findmnt_without_statmount_defers(void **state) {
        km_features_disable(KM_FEATURE_STATX_MNT | KM_FEATURE_STATMOUNT);
        expect_again(answer_findmnt("/"));
        expect_again(answer_findmnt(fx.dir));
        /* The other probes do not need them. */
        expect_answer(answer_stat(fx.dir), "directory");
        expect_answer(answer_realpath("-e", "/"), "/\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_match_findmnt),
                cmocka_unit_test(test_match_realpath),
                cmocka_unit_test(test_match_stat),
                cmocka_unit_test(test_match_other_programs),
                cmocka_unit_test(test_realpath_dir_and_symlink),
                cmocka_unit_test(test_realpath_relative),
                cmocka_unit_test(test_realpath_unusual_is_left_to_realpath),
                cmocka_unit_test(test_stat_types),
                cmocka_unit_test(test_stat_unusual_is_left_to_stat),
                cmocka_unit_test(test_stat_translated_locale_is_left_to_stat),
                cmocka_unit_test(test_findmnt_root_and_temp_dir),
                cmocka_unit_test(test_findmnt_every_mount_point),
                cmocka_unit_test(test_findmnt_relative_path),
                cmocka_unit_test(test_findmnt_unusual_is_left_to_findmnt),
                cmocka_unit_test(test_no_probe_no_answer),
                cmocka_unit_test(test_findmnt_without_statmount_defers),
        };

        return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
