/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small string and I/O helpers. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "syscalls.h"
#include "util.h"

bool path_is_below(const char *path, const char *prefix) {
        size_t n = strlen(prefix);

        while (n > 1 && prefix[n - 1] == '/')
                n--;
        if (n == 1 && prefix[0] == '/')
                return path[0] == '/';
        if (strncmp(path, prefix, n) != 0)
                return false;
        return path[n] == '\0' || path[n] == '/';
}

char *strjoin_opts(const char *a, const char *b) {
        char *r;

        if (!a || !*a)
                return strdup(b ? b : "");
        if (!b || !*b)
                return strdup(a);
        if (asprintf(&r, "%s,%s", a, b) < 0)
                return NULL;
        return r;
}

int fd_regular_blocking(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 ? -errno : 0;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        for (;;) {
                if (alloc - size < 4096) {
                        char *n;
                        alloc = alloc ? alloc * 2 : 4096;
                        n = realloc(buf, alloc + 1);
                        if (!n)
                                return -ENOMEM;
                        buf = n;
                }
                ssize_t k = read(fd, buf + size, alloc - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                size += k;
                if (size > max)
                        return -EFBIG;
        }
        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *copy = strdup(path);

        if (!copy)
                return -ENOMEM;
        for (char *s = copy + 1;; s++) {
                if (*s != '/' && *s != '\0')
                        continue;
                char saved = *s;
                *s = '\0';
                if (mkdir(copy, saved ? 0755 : mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = saved;
                if (!saved)
                        return 0;
        }
}

char *path_simplify(char *p) {
        char *w = p;

        for (const char *r = p; *r; r++)
                if (!(*r == '/' && w > p && w[-1] == '/'))
                        *w++ = *r;
        while (w > p + 1 && w[-1] == '/')
                w--;
        *w = '\0';
        return p;
}

const char *str_printable(const char *s, char *buf, size_t size) {
        size_t i = 0;

        for (; s && s[i] && i + 1 < size; i++)
                buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
        buf[i] = '\0';
        return buf;
}

char *path_absolute(const char *p) {
        char cwd[PATH_MAX], *r;

        if (!p)
                return NULL;
        if (p[0] == '/' || !*p)
                r = strdup(p);
        else if (!getcwd(cwd, sizeof(cwd)) || asprintf(&r, "%s/%s", cwd, p) < 0)
                return NULL;
        return r ? path_simplify(r) : NULL;
}

KM_EXPORT void km_strv_free(char **strv) {
        for (char **s = strv; s && *s; s++)
                free(*s);
        free(strv);
}

char **argv_copy(int argc, char *const *argv) {
        char **c = calloc(argc + 1, sizeof(char *));

        if (c && argc > 0)
                memcpy(c, argv, argc * sizeof(char *));
        return c;
}

int strv_append(char ***v, size_t *n, const char *value) {
        char **grown = reallocarray(*v, *n + 2, sizeof(char *));

        if (!grown)
                return -ENOMEM;
        *v = grown;
        if (!(grown[*n] = strdup(value)))
                return -ENOMEM;
        grown[++*n] = NULL;
        return 0;
}

bool host_helper_exists(const char *kind, const char *fstype) {
        static const char *const dirs[] = { "/sbin", "/usr/sbin" };
        char path[PATH_MAX];

        if (!fstype || !*fstype || strchr(fstype, '/'))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s.%s", dirs[i], kind, fstype);
                if (access(path, X_OK) == 0)
                        return true;
        }
        return false;
}

static int cmp_int(const void *a, const void *b) {
        return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

void close_all_but(int *keep, size_t n) {
        int *sorted = keep;
        unsigned from = 3;

        qsort(sorted, n, sizeof(int), cmp_int);
        for (size_t i = 0; i < n; i++) {
                if (sorted[i] < (int)from)
                        continue;
                if ((unsigned)sorted[i] > from)
                        (void)sys_close_range(from, (unsigned)sorted[i] - 1, 0);
                from = (unsigned)sorted[i] + 1;
        }
        (void)sys_close_range(from, ~0U, 0);
}

uint64_t monotonic_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int free_and_strdup(char **field, const char *value) {
        char *copy = value ? strdup(value) : NULL;

        if (value && !copy)
                return -ENOMEM;
        free(*field);
        *field = copy;
        return 0;
}

int exit_code_from_status(int status, int *ret_signal) {
        if (ret_signal)
                *ret_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int exit_code_from_siginfo(const siginfo_t *si) {
        return si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
}

int stdio_install(const int stdio[3]) {
        int moved[3];

        /* Moved above 2 first: stdio[1] may be 0, which the first dup2 would replace. */
        for (int i = 0; i < 3; i++)
                if ((moved[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3)) < 0)
                        return -errno;
        for (int i = 0; i < 3; i++)
                if (dup2(moved[i], i) < 0)
                        return -errno;
        (void)sys_close_range(3, ~0U, 0);
        return 0;
}

int write_all(int fd, const void *data, size_t size) {
        const char *p = data;

        while (size > 0) {
                ssize_t k = write(fd, p, size);

                if (k < 0 && errno == EAGAIN) { /* a non-blocking fd (a terminal shared with a shell) */
                        struct pollfd w = { .fd = fd, .events = POLLOUT };
                        (void)poll(&w, 1, -1);
                        continue;
                }
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                p += k;
                size -= (size_t)k;
        }
        return 0;
}
