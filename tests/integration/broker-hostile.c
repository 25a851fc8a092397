/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * broker-hostile DIR: drives the mount broker of an unprivileged VCS
 * container (run with --allow-mount tmpfs and the kubelet dir bound) with
 * hostile mount(2) and umount2(2) arguments, through raw syscall(), and
 * prints one line per case:
 *
 *     PASS CASE: what happened        FAIL CASE: what went wrong
 *
 * then "DONE pass=N fail=M"; exit 0, 1 if a case failed, 2 on a setup
 * problem, 3 if a call did not return within 20 s (the broker hung).
 *
 * DIR is below the kubelet dir, made by the test: DIR/t, DIR/k, DIR/swap,
 * DIR/final and DIR/bindsrc (holding a file "marker") are directories,
 * DIR/link a symlink to /etc.  The tmpfs a call asks for goes on DIR/t (or
 * k, swap, final); a call that should fail may instead mount there when the
 * kernel itself would have taken it (a NULL source or data for tmpfs, a
 * string in a page the caller cannot read but /proc/PID/mem can): that is
 * not a hole, the mount is where the caller may mount.  A case fails when a
 * call that must fail succeeds, when a mount point outside DIR appears or
 * disappears in this container's mount table (the test script checks the
 * host's), or when a call hangs.
 *
 * Cases: NULL, (char *)1, an unmapped page, a kernel address and a
 * PROT_NONE page for each of source, target, fstype and data; each string
 * without its NUL up to the end of a mapped page followed by an unmapped
 * one (a whole page, and a short run at the page's end); 64 KiB of data
 * without a NUL; all flag bits; a target through a symlink to /etc and
 * through ".." to /etc; /etc itself; /etc as a bind source; the same kinds
 * of pointers for umount2's target, umount2 of /proc/sys and /etc, and of
 * DIR/t with all flag bits; 40 callers SIGKILLed while their mount is
 * pending (every mount they leave must be removable by the container); a
 * thread that keeps swapping the target between DIR/swap and "/etc" (then
 * the bind source between DIR/bindsrc and "/etc") while mount is called
 * for 2 s: every mount must land on DIR/swap (and show DIR/bindsrc).
 * Last, the broker must still mount a tmpfs on DIR/final.  First, opens:
 * /dev/fuse O_RDWR (with and without O_CLOEXEC) gives the fuse device,
 * /dev/null O_RDWR goes on as made, /dev/fusex, an unmapped pointer and a
 * "/dev/fuse" running into an unmapped page fail, a path swapped between
 * /dev/fuse and /dev/null for 2 s gives one of the two each time: where the
 * broker traps these opens (6.1, KUBEMOUNT_COMPAT=fuse-clone-userns) and
 * where it does not alike.
 *
 * In a privileged container (no broker) the target swaps, the symlink, the
 * ".." and umount2 of /proc/sys fail: the checks see a mount outside DIR.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson sets it */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errname.h"

#define CALL_TIMEOUT 20
#define KILLED_CALLERS 40
#define SWAP_SECONDS 2

static const char *dir;
static char t_path[PATH_MAX], k_path[PATH_MAX], swap_path[PATH_MAX], final_path[PATH_MAX], bindsrc_path[PATH_MAX],
        link_path[PATH_MAX];
static int passes, fails;
static const char *volatile current = "setup";
static long page;

/* ---- output ---- */

__attribute__((format(printf, 3, 4))) static void verdict(bool good, const char *name, const char *fmt, ...) {
        va_list ap;

        printf("%s %s: ", good ? "PASS" : "FAIL", name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        if (good)
                passes++;
        else
                fails++;
}

static void on_alarm(int sig) {
        static const char tail[] = ": timed out (no answer within 20 s)\n";
        const char *c = current;

        (void)sig;
        if (write(STDOUT_FILENO, "FAIL ", 5) < 0 || write(STDOUT_FILENO, c, strlen(c)) < 0 ||
            write(STDOUT_FILENO, tail, sizeof(tail) - 1) < 0)
                _exit(3);
        _exit(3);
}

static _Noreturn void setup_failed(const char *what, int e) {
        printf("SETUP %s: %s\n", what, errname(e));
        exit(2);
}

/* ---- the mount table, as this container sees it ---- */

struct table {
        char **v;
        size_t n;
};

static void table_free(struct table *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i]);
        free(t->v);
        *t = (struct table){};
}

/* mountinfo's field 5 with its octal escapes (\040) undone. */
static char *unescape(const char *s, size_t len) {
        char *out = malloc(len + 1), *o = out;

        if (!out)
                setup_failed("malloc", ENOMEM);
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3') {
                        *o++ = (char)(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
                        i += 3;
                } else {
                        *o++ = s[i];
                }
        }
        *o = 0;
        return out;
}

static void table_read(struct table *t) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char *line = NULL;
        size_t cap = 0;

        *t = (struct table){};
        if (!f)
                setup_failed("/proc/self/mountinfo", errno);
        while (getline(&line, &cap, f) > 0) {
                char *p = line, *end;

                for (int field = 0; field < 4 && p; field++)
                        if ((p = strchr(p, ' ')))
                                p++;
                if (!p || !(end = strchr(p, ' ')))
                        continue;
                t->v = realloc(t->v, (t->n + 1) * sizeof(*t->v));
                if (!t->v)
                        setup_failed("realloc", ENOMEM);
                t->v[t->n++] = unescape(p, (size_t)(end - p));
        }
        free(line);
        fclose(f);
}

static size_t table_count(const struct table *t, const char *path) {
        size_t n = 0;

        for (size_t i = 0; i < t->n; i++)
                n += strcmp(t->v[i], path) == 0;
        return n;
}

static size_t mounts_at(const char *path) {
        struct table t;
        size_t n;

        table_read(&t);
        n = table_count(&t, path);
        table_free(&t);
        return n;
}

static bool below_dir(const char *p) {
        size_t n = strlen(dir);

        return strncmp(p, dir, n) == 0 && (p[n] == 0 || p[n] == '/');
}

/* The first mount point outside DIR that NOW has more or fewer of than OLD, or NULL. */
static const char *changed_outside(const struct table *now, const struct table *old) {
        for (size_t i = 0; i < now->n; i++)
                if (!below_dir(now->v[i]) && table_count(now, now->v[i]) != table_count(old, now->v[i]))
                        return now->v[i];
        for (size_t i = 0; i < old->n; i++)
                if (!below_dir(old->v[i]) && table_count(now, old->v[i]) != table_count(old, old->v[i]))
                        return old->v[i];
        return NULL;
}

static struct table base;

/*
 * After a case: a mount point outside DIR that changed is a failure (what
 * was added is unmounted again, so that the next case starts clean); the
 * table becomes the next case's base.  Returns whether all is well.
 */
static bool outside_unchanged(const char *name) {
        struct table now;
        const char *p;
        bool good = true;

        table_read(&now);
        if ((p = changed_outside(&now, &base))) {
                char *where = strdup(p);
                size_t before = table_count(&base, where), after = table_count(&now, where);

                good = false;
                verdict(false, name, "the mount table outside DIR changed: %s mounted %zu times, before %zu", where,
                        after, before);
                for (int i = 0; i < 100 && mounts_at(where) > before; i++)
                        if (umount2(where, MNT_DETACH) < 0)
                                break;
                free(where);
                table_free(&now);
                table_read(&now);
        }
        table_free(&base);
        base = now;
        return good;
}

/* Unmounts what was stacked on PATH beyond N mounts; returns how many it removed, -errno when one would not go. */
static int unstack(const char *path, size_t n) {
        int removed = 0;

        while (mounts_at(path) > n) {
                if (umount2(path, 0) < 0 && umount2(path, MNT_DETACH) < 0)
                        return -errno;
                removed++;
        }
        return removed;
}

/* ---- hostile memory ---- */

static char *map_pages(size_t n) {
        char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                setup_failed("mmap", errno);
        return p;
}

/* An address where nothing is mapped: a page mapped and unmapped again. */
static char *gone_page(void) {
        char *p = map_pages(1);

        munmap(p, page);
        return p;
}

/* S in a page of its own that the caller cannot read (PROT_NONE); /proc/PID/mem still can. */
static char *prot_none(const char *s) {
        char *p = map_pages(1);

        snprintf(p, page, "%s", s);
        if (mprotect(p, page, PROT_NONE) < 0)
                setup_failed("mprotect", errno);
        return p;
}

/*
 * PREFIX and then 'a's up to the end of N mapped pages, with no NUL,
 * followed by an unmapped page.  SHORT: the string starts 16 bytes before
 * PREFIX's length from the end of the last page (PREFIX and 16 'a's).
 */
static char *unterminated(const char *prefix, size_t n, bool short_run) {
        char *p = map_pages(n + 1), *s;
        size_t len = n * page, plen = strlen(prefix);

        if (plen + 16 > len)
                setup_failed("unterminated: prefix too long", E2BIG);
        munmap(p + len, page);
        s = short_run ? p + len - (plen + 16) : p;
        memset(s, 'a', (size_t)(p + len - s));
        memcpy(s, prefix, plen);
        return s;
}

#define KERNEL_ADDR ((char *)0xffff888000000000UL)

/* ---- opens: trapped where FUSE_DEV_IOC_CLONE does not cross user namespaces (fuse-probe.h) ---- */

static bool is_chr(int fd, unsigned maj, unsigned min) {
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == maj && minor(st.st_rdev) == min;
}

/* open(PATH, FLAGS): the device MAJ:MIN, or (MAJ 0) a failure; either when EITHER. */
static void case_open(const char *name, const char *path, int flags, unsigned maj, unsigned min, bool either) {
        long fd;
        int e;

        current = name;
        alarm(CALL_TIMEOUT);
        fd = syscall(SYS_openat, AT_FDCWD, path, flags, 0);
        e = errno;
        alarm(0);
        if (fd < 0)
                verdict(maj == 0 || either, name, "%s", errname(e));
        else
                verdict(maj != 0 && is_chr((int)fd, maj, min), name, "opened %s",
                        is_chr((int)fd, maj, min) ? "the device asked for" : "something else");
        if (fd >= 0)
                close((int)fd);
}

static char open_path[16] = "/dev/fuse";
static volatile int open_stop;

static void *open_swapper(void *arg) {
        (void)arg;
        while (!open_stop) {
                memcpy(open_path, "/dev/null", 10);
                memcpy(open_path, "/dev/fuse", 10);
        }
        return NULL;
}

static void open_cases(void) {
        pthread_t t;
        int n = 0, wrong = 0;
        time_t end;

        case_open("open /dev/fuse O_RDWR|O_CLOEXEC", "/dev/fuse", O_RDWR | O_CLOEXEC, 10, 229, false);
        case_open("open /dev/fuse O_RDWR", "/dev/fuse", O_RDWR, 10, 229, false);
        case_open("open /dev/null O_RDWR goes on as made", "/dev/null", O_RDWR, 1, 3, false);
        case_open("open /dev/fusex O_RDWR fails", "/dev/fusex", O_RDWR, 0, 0, false);
        case_open("open an unmapped page O_RDWR fails", gone_page(), O_RDWR, 0, 0, false);
        case_open("open /dev/fuse running into an unmapped page fails", unterminated("/dev/fuse", 1, true), O_RDWR, 0,
                  0, false);
        case_open("open /dev/fuse in a PROT_NONE page", prot_none("/dev/fuse"), O_RDWR, 10, 229, true);
        /* The path swapped while the broker reads it: each fd is one of the two, never anything else. */
        current = "open of a path swapped between /dev/fuse and /dev/null";
        if (pthread_create(&t, NULL, open_swapper, NULL) != 0)
                setup_failed("pthread_create", errno);
        for (end = time(NULL) + SWAP_SECONDS; time(NULL) < end; n++) {
                int fd = (int)syscall(SYS_openat, AT_FDCWD, open_path, O_RDWR | O_CLOEXEC, 0);

                if (fd < 0 || (!is_chr(fd, 10, 229) && !is_chr(fd, 1, 3)))
                        wrong++;
                if (fd >= 0)
                        close(fd);
        }
        open_stop = 1;
        pthread_join(t, NULL);
        verdict(wrong == 0, current, "%d opens, %d gave neither device", n, wrong);
}

/* ---- mount cases ---- */

enum accept { MUST_FAIL, FAIL_OR_LEGIT };

static long sys_mount(const char *src, const char *tgt, const char *type, unsigned long flags, const void *data) {
        return syscall(SYS_mount, src, tgt, type, flags, data);
}

static long sys_umount2(const char *tgt, int flags) {
        return syscall(SYS_umount2, tgt, flags);
}

static void case_mount(const char *name, const char *src, const char *tgt, const char *type, unsigned long flags,
                       const void *data, enum accept accept) {
        size_t at_t = mounts_at(t_path);
        long r;
        int e;

        current = name;
        alarm(CALL_TIMEOUT);
        r = sys_mount(src, tgt, type, flags, data);
        e = errno;
        alarm(0);
        if (!outside_unchanged(name))
                unstack(t_path, at_t);
        else if (r < 0)
                verdict(true, name, "refused: %s", errname(e));
        else if (accept == FAIL_OR_LEGIT && mounts_at(t_path) > at_t)
                verdict(unstack(t_path, at_t) >= 0, name,
                        "mounted on DIR/t, where the caller may mount (as the kernel would)");
        else {
                verdict(false, name, "succeeded; an error was due (DIR/t mounted %zu times)", mounts_at(t_path));
                unstack(t_path, at_t);
        }
}

static void case_umount(const char *name, const char *tgt, int flags) {
        long r;
        int e;

        current = name;
        alarm(CALL_TIMEOUT);
        r = sys_umount2(tgt, flags);
        e = errno;
        alarm(0);
        if (!outside_unchanged(name))
                return;
        if (r < 0)
                verdict(true, name, "refused: %s", errname(e));
        else
                verdict(false, name, "succeeded; an error was due");
}

static void pointer_cases(void) {
        static const char *const which[] = { "source", "target", "fstype", "data" };
        const char *good[4] = { "kmhostile", t_path, "tmpfs", "size=1m" };
        char name[96], prefix[PATH_MAX + 2];

        for (int w = 0; w < 4; w++) {
                /* A tmpfs needs neither a source nor options: the kernel takes NULL for both. */
                enum accept null_ok = (w == 0 || w == 3) ? FAIL_OR_LEGIT : MUST_FAIL;
                struct {
                        const char *kind;
                        const char *ptr;
                        enum accept accept;
                } bad[] = {
                        { "NULL", NULL, null_ok },
                        { "(char *)1", (const char *)1, MUST_FAIL },
                        { "an unmapped page", NULL, MUST_FAIL }, /* made last: a later mmap would reuse it */
                        { "a kernel address", KERNEL_ADDR, MUST_FAIL },
                        { "a PROT_NONE page", prot_none(good[w]), FAIL_OR_LEGIT },
                        { "a page of no NUL before an unmapped one", NULL, MUST_FAIL },
                        { "a short run of no NUL before an unmapped page", NULL, MUST_FAIL },
                };

                snprintf(prefix, sizeof(prefix), "%s%s", good[w], w == 1 ? "/" : w == 3 ? "," : "");
                bad[5].ptr = unterminated(prefix, 1, false);
                bad[6].ptr = unterminated(prefix, 1, true);
                bad[2].ptr = gone_page();
                for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
                        const char *arg[4] = { good[0], good[1], good[2], good[3] };

                        arg[w] = bad[b].ptr;
                        snprintf(name, sizeof(name), "mount %s %s", which[w], bad[b].kind);
                        case_mount(name, arg[0], arg[1], arg[2], 0, arg[3], bad[b].accept);
                }
        }
}

static void path_cases(void) {
        char up[PATH_MAX];
        int depth = 0;

        case_mount("mount data 64 KiB with no NUL", "kmhostile", t_path, "tmpfs", 0,
                   unterminated("size=1m,", 16, false), MUST_FAIL);
        case_mount("mount with every flag bit", "kmhostile", t_path, "tmpfs", ~0UL, "size=1m", MUST_FAIL);
        case_mount("mount on a symlink to /etc", "kmhostile", link_path, "tmpfs", 0, "size=1m", MUST_FAIL);
        for (const char *p = t_path; *p; p++)
                depth += *p == '/';
        snprintf(up, sizeof(up), "%s", t_path);
        for (int i = 0; i < depth && strlen(up) + 4 < sizeof(up) - 8; i++)
                strcat(up, "/..");
        strcat(up, "/etc");
        case_mount("mount on DIR/t/../../.../etc", "kmhostile", up, "tmpfs", 0, "size=1m", MUST_FAIL);
        case_mount("mount on /etc", "kmhostile", "/etc", "tmpfs", 0, "size=1m", MUST_FAIL);
        case_mount("bind /etc on DIR/t", "/etc", t_path, NULL, MS_BIND, NULL, MUST_FAIL);
        case_mount("bind through DIR/link (-> /etc)", link_path, t_path, NULL, MS_BIND, NULL, MUST_FAIL);

        case_umount("umount2 NULL", NULL, 0);
        case_umount("umount2 (char *)1", (const char *)1, 0);
        case_umount("umount2 an unmapped page", gone_page(), 0);
        case_umount("umount2 a kernel address", KERNEL_ADDR, 0);
        case_umount("umount2 a page of no NUL before an unmapped one", unterminated(t_path, 1, false), 0);
        case_umount("umount2 a short run of no NUL before an unmapped page", unterminated(t_path, 1, true), 0);
        case_umount("umount2 /proc/sys", "/proc/sys", MNT_DETACH);
        case_umount("umount2 /etc", "/etc", MNT_DETACH);
        case_umount("umount2 DIR/t with every flag bit", t_path, ~0);
}

/* ---- callers killed mid-call ---- */

/* Waits (up to 200 ms) until PID is inside mount(2), as /proc/PID/syscall shows it. */
static void wait_in_mount(pid_t pid) {
        char path[64], buf[64], want[16];
        struct timespec t0, t;

        snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
        snprintf(want, sizeof(want), "%d ", (int)SYS_mount);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                FILE *f = fopen(path, "re");
                bool in = f && fgets(buf, sizeof(buf), f) && strncmp(buf, want, strlen(want)) == 0;

                if (f)
                        fclose(f);
                if (in || !f)
                        return;
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000000L);
}

static void kill_case(void) {
        const char *name = "40 callers SIGKILLed with their mount pending";
        size_t before = mounts_at(k_path);
        int removed;

        current = name;
        for (int i = 0; i < KILLED_CALLERS; i++) {
                pid_t pid;

                fflush(stdout);
                pid = fork();
                if (pid < 0)
                        setup_failed("fork", errno);
                if (pid == 0) {
                        alarm(CALL_TIMEOUT);
                        _exit(sys_mount("kmkilled", k_path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0);
                }
                if (i % 2 == 0)
                        wait_in_mount(pid);
                else
                        usleep((useconds_t)(i % 10) * 100);
                kill(pid, SIGKILL);
                if (waitpid(pid, NULL, 0) < 0)
                        setup_failed("waitpid", errno);
        }
        if (!outside_unchanged(name))
                return;
        /* Mounts made for a caller that died must not be beyond the container's reach (or count against its cap). */
        removed = unstack(k_path, before);
        if (removed < 0)
                verdict(false, name, "a mount left on DIR/k cannot be unmounted: %s", errname(-removed));
        else
                verdict(true, name, "%d mounts they left on DIR/k were unmounted", removed);
}

/* ---- a thread that swaps the path during the check ---- */

/*
 * The swapped string lives in one page whose mapping a thread flips between
 * two pages of a memfd (mmap MAP_FIXED replaces a mapping atomically): a
 * reader sees one whole string or the other, never a torn mix, so a check
 * that reads it once and a use that reads it again see different paths.
 */
static char *swap_page;
static int swap_fd = -1, swap_stop;

static void *swap_thread(void *arg) {
        unsigned long n = 0;

        (void)arg;
        while (!__atomic_load_n(&swap_stop, __ATOMIC_RELAXED)) {
                if (mmap(swap_page, page, PROT_READ, MAP_SHARED | MAP_FIXED, swap_fd, (n & 1) * page) == MAP_FAILED)
                        break;
                n++;
        }
        return (void *)n;
}

/* The flip page, showing A; its other page holds B. */
static void swap_setup(const char *a, const char *b) {
        if (swap_fd < 0 && (swap_fd = memfd_create("broker-hostile", MFD_CLOEXEC)) < 0)
                setup_failed("memfd_create", errno);
        if (ftruncate(swap_fd, 0) < 0 || ftruncate(swap_fd, 2 * page) < 0 || pwrite(swap_fd, a, strlen(a) + 1, 0) < 0 ||
            pwrite(swap_fd, b, strlen(b) + 1, page) < 0)
                setup_failed("memfd", errno);
        swap_page = mmap(swap_page, page, PROT_READ, MAP_SHARED | (swap_page ? MAP_FIXED : 0), swap_fd, 0);
        if (swap_page == MAP_FAILED)
                setup_failed("mmap memfd", errno);
}

/* BIND: the source swaps (between DIR/bindsrc and /etc) and a bind goes on DIR/swap; else the target swaps. */
static void swap_case(bool bind) {
        const char *name =
                bind ? "bind source swapped between DIR/bindsrc and /etc" : "target swapped between DIR/swap and /etc";
        size_t before = mounts_at(swap_path);
        unsigned long calls = 0, mounted = 0, wrong = 0, enoent = 0, eperm = 0, other = 0;
        int other_errno = 0;
        bool good = true;
        pthread_t th;
        void *swaps = NULL;
        time_t end = time(NULL) + SWAP_SECONDS;

        current = name;
        swap_setup(bind ? bindsrc_path : swap_path, "/etc");
        __atomic_store_n(&swap_stop, 0, __ATOMIC_RELAXED);
        if ((errno = pthread_create(&th, NULL, swap_thread, NULL)))
                setup_failed("pthread_create", errno);
        while (time(NULL) < end && calls < 2000) {
                long r;

                alarm(CALL_TIMEOUT);
                r = bind ? sys_mount(swap_page, swap_path, NULL, MS_BIND, NULL)
                         : sys_mount("kmswap", swap_page, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
                alarm(0);
                calls++;
                if (r < 0) {
                        if (errno == ENOENT)
                                enoent++;
                        else if (errno == EPERM)
                                eperm++;
                        else if (other++ == 0)
                                other_errno = errno;
                        continue;
                }
                mounted++;
                if (mounts_at(swap_path) <= before) {
                        wrong++;
                } else {
                        char marker[PATH_MAX + 16];

                        snprintf(marker, sizeof(marker), "%s/marker", swap_path);
                        if (bind && access(marker, F_OK) < 0)
                                wrong++;
                        unstack(swap_path, before);
                }
                if (!outside_unchanged(name)) {
                        good = false;
                        break;
                }
        }
        __atomic_store_n(&swap_stop, 1, __ATOMIC_RELAXED);
        pthread_join(th, &swaps);
        if (!good)
                return;
        verdict(wrong == 0, name,
                "%lu calls (%lu swaps): %lu mounted, %lu of them not on DIR/swap%s; %lu ENOENT, %lu EPERM, %lu "
                "other%s%s",
                calls, (unsigned long)swaps, mounted, wrong, bind ? " or not showing DIR/bindsrc" : "", enoent, eperm,
                other, other ? ", the first " : "", other ? errname(other_errno) : "");
}

/* ---- the broker survived ---- */

static void final_case(void) {
        const char *name = "a legitimate tmpfs on DIR/final afterwards";
        size_t before = mounts_at(final_path);
        long r;

        current = name;
        alarm(CALL_TIMEOUT);
        r = sys_mount("kmfinal", final_path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
        alarm(0);
        if (r < 0) {
                verdict(false, name, "refused: %s", errname(errno));
                return;
        }
        if (mounts_at(final_path) <= before) {
                verdict(false, name, "mount returned 0 but DIR/final shows no new mount");
                return;
        }
        r = unstack(final_path, before);
        verdict(r >= 0, name, "mounted%s%s", r < 0 ? "; unmount: " : " and unmounted", r < 0 ? errname((int)-r) : "");
}

static void need(const char *path, mode_t type) {
        struct stat st;

        if (lstat(path, &st) < 0)
                setup_failed(path, errno);
        if ((st.st_mode & S_IFMT) != type)
                setup_failed(path, EINVAL);
}

int main(int argc, char **argv) {
        struct sigaction sa = { .sa_handler = on_alarm };
        char marker[PATH_MAX + 16];

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc != 2 || argv[1][0] != '/') {
                fprintf(stderr, "usage: broker-hostile DIR (absolute, below the kubelet dir)\n");
                return 2;
        }
        if (access("/etc/kubemount-test-rootfs", F_OK) < 0)
                setup_failed("not in the test image (/etc/kubemount-test-rootfs)", errno);
        dir = argv[1];
        page = sysconf(_SC_PAGESIZE);
        if (strlen(dir) > PATH_MAX / 4)
                setup_failed("DIR is too long", ENAMETOOLONG);
        snprintf(t_path, sizeof(t_path), "%s/t", dir);
        snprintf(k_path, sizeof(k_path), "%s/k", dir);
        snprintf(swap_path, sizeof(swap_path), "%s/swap", dir);
        snprintf(final_path, sizeof(final_path), "%s/final", dir);
        snprintf(bindsrc_path, sizeof(bindsrc_path), "%s/bindsrc", dir);
        snprintf(link_path, sizeof(link_path), "%s/link", dir);
        snprintf(marker, sizeof(marker), "%s/marker", bindsrc_path);
        need(t_path, S_IFDIR);
        need(k_path, S_IFDIR);
        need(swap_path, S_IFDIR);
        need(final_path, S_IFDIR);
        need(bindsrc_path, S_IFDIR);
        need(marker, S_IFREG);
        need(link_path, S_IFLNK);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                setup_failed("sigaction", errno);
        table_read(&base);

        open_cases();
        pointer_cases();
        path_cases();
        kill_case();
        swap_case(false);
        swap_case(true);
        final_case();

        table_free(&base);
        printf("DONE pass=%d fail=%d\n", passes, fails);
        return fails ? 1 : 0;
}
