/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sd-protocol.h"
#include "util.h"

static char notify_socket[sizeof(((struct sockaddr_un *)NULL)->sun_path)];

/* One datagram to PATH: a file system socket, or an abstract one written "@NAME". */
static int datagram_send(const char *path, const void *data, size_t size) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        _cleanup_close_ int fd = -EBADF;

        if (len == 0 || len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
                return -EINVAL;
        memcpy(sa.sun_path, path, len);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* A file system path's length counts its NUL; an abstract name's does not. */
        socklen_t salen = offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/');
        if (sendto(fd, data, size, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
                return -errno;
        return 0;
}

void sd_notify_take(void) {
        const char *e = getenv("NOTIFY_SOCKET");

        if (e && strlen(e) < sizeof(notify_socket))
                snprintf(notify_socket, sizeof(notify_socket), "%s", e);
        unsetenv("NOTIFY_SOCKET");
}

int sd_notify_send(const char *state) {
        if (!*notify_socket)
                return 0;
        int r = datagram_send(notify_socket, state, strlen(state));
        return r < 0 ? r : 1;
}

/* A socket connected to the journal by journal_connect(), or none: records go to JOURNAL_SOCKET's path. */
static int journal_fd = -EBADF;

int journal_connect(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        int fd;

        if (journal_fd >= 0)
                return 0;
        /* A look first: a socket made for nothing is most of the cost where no journal runs. */
        if (access(JOURNAL_SOCKET, W_OK) < 0)
                return -errno;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        journal_fd = fd;
        return 0;
}

static bool journal_asked;

void journal_connect_in_host(void) {
        journal_asked = true;
}

void journal_connect_asked(void) {
        if (journal_asked) {
                journal_asked = false;
                (void)journal_connect();
        }
}

bool journal_connected(void) {
        return journal_fd >= 0;
}

bool journal_present(void) {
        return journal_fd >= 0 || access(JOURNAL_SOCKET, W_OK) == 0;
}

/* The journal's rule for field names: A-Z, 0-9 and _, not first a digit or _, at most 64. */
static bool field_name_ok(const char *name, size_t len) {
        if (len == 0 || len > 64 || name[0] == '_' || (name[0] >= '0' && name[0] <= '9'))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
                        return false;
        return true;
}

static int field_append(FILE *f, const char *name, size_t name_len, const char *value) {
        size_t len = strlen(value);

        if (!field_name_ok(name, name_len))
                return 0;
        if (!strchr(value, '\n'))
                return fprintf(f, "%.*s=%s\n", (int)name_len, name, value) < 0 ? -EIO : 0;
        uint64_t le = htole64(len);
        if (fprintf(f, "%.*s\n", (int)name_len, name) < 0 || fwrite(&le, sizeof(le), 1, f) != 1 ||
            fwrite(value, 1, len, f) != len || fputc('\n', f) == EOF)
                return -EIO;
        return 0;
}

char *journal_record(int priority, const char *message, const char *const *fields, size_t *size) {
        char *buf = NULL, prio[4];
        FILE *f = open_memstream(&buf, size);
        int r;

        if (!f)
                return NULL;
        snprintf(prio, sizeof(prio), "%d", priority & 7);
        r = field_append(f, "MESSAGE", 7, message);
        r = r ?: field_append(f, "PRIORITY", 8, prio);
        r = r ?: field_append(f, "SYSLOG_IDENTIFIER", 17, "kubemount");
        for (size_t i = 0; r == 0 && fields && fields[i]; i++) {
                const char *eq = strchr(fields[i], '=');
                if (eq)
                        r = field_append(f, fields[i], (size_t)(eq - fields[i]), eq + 1);
        }
        if (fclose(f) != 0 || r < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

int journal_send(int priority, const char *message, const char *const *fields) {
        size_t size = 0;
        _cleanup_free_ char *rec = journal_record(priority, message, fields, &size);

        if (!rec)
                return -ENOMEM;
        if (journal_fd >= 0)
                return send(journal_fd, rec, size, MSG_NOSIGNAL) < 0 ? -errno : 0;
        return datagram_send(JOURNAL_SOCKET, rec, size);
}
