/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubelet's findmnt / realpath / stat probes answered in-process. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "kubelet-probes.h"
#include "syscalls.h"

enum probe_kind probe_match(int argc, char *const *argv) {
        const char *name;

        if (argc < 1)
                return PROBE_NONE;
        name = path_basename(argv[0]);
        if (streq(name, "findmnt") && argc == 7 && streq(argv[1], "-o") && streq(argv[2], "target,fstype") &&
            streq(argv[3], "--noheadings") && streq(argv[4], "--first-only") && streq(argv[5], "--target"))
                return PROBE_FINDMNT_TARGET;
        /* realpath and stat take a word that starts with '-' as an option ("-" is stdin to stat). */
        if (streq(name, "realpath") && argc == 3 && (streq(argv[1], "-e") || streq(argv[1], "-m")) && argv[2][0] != '-')
                return PROBE_REALPATH;
        if (streq(name, "stat") && argc == 4 && streq(argv[1], "-L") && streq(argv[2], "--printf=%F") &&
            argv[3][0] != '-')
                return PROBE_STAT_TYPE;
        return PROBE_NONE;
}

/* Plain printable ASCII: the tools print it as is (no quoting, no \x escapes). */
static bool plain(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

/* English type names unless the locale could translate them. */
static bool english_locale(void) {
        static const char *const vars[] = { "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE" };

        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = getenv(vars[i]);
                if (v && *v && !streq(v, "C") && !streq(v, "POSIX") && !startswith(v, "C.") && !startswith(v, "en"))
                        return false;
        }
        return true;
}

/*
 * findmnt -o target,fstype --noheadings --first-only --target PATH prints the
 * first mount (in table order) at the mount point holding PATH.  statmount
 * gives the topmost one, so stacked mounts go to the real findmnt.
 */
static int answer_findmnt(const char *path, char **ret) {
        _cleanup_free_ struct sys_statmount *sm = NULL, *parent = NULL;
        struct statx stx;
        const char *point, *type, *sub = "";
        int r;

        /* findmnt reads the table: without /proc it fails, and so must we. */
        if (!plain(path) || !feature_available(KM_FEATURE_STATX_MNT) || access("/proc/self/mountinfo", R_OK) < 0)
                return -EAGAIN;
        if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_MNT_ID_UNIQUE, &stx) < 0 ||
            !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
                return -EAGAIN;
        r = sys_statmount(stx.stx_mnt_id,
                          KM_STATMOUNT_MNT_BASIC | KM_STATMOUNT_MNT_POINT | KM_STATMOUNT_FS_TYPE |
                                  KM_STATMOUNT_FS_SUBTYPE,
                          &sm);
        if (r < 0 || !(sm->mask & KM_STATMOUNT_MNT_POINT) || !(sm->mask & KM_STATMOUNT_FS_TYPE))
                return -EAGAIN;
        point = sm->str + sm->mnt_point;
        type = sm->str + sm->fs_type;
        if (sm->mask & KM_STATMOUNT_FS_SUBTYPE)
                sub = sm->str + sm->fs_subtype;
        else if (startswith(type, "fuse"))
                return -EAGAIN; /* the subtype ("fuse.sshfs") is unknown here */
        if (!plain(point))
                return -EAGAIN;
        /* Stacked on the same mount point: findmnt would print the lowest. */
        if (sm->mnt_parent_id != sm->mnt_id && sys_statmount(sm->mnt_parent_id, KM_STATMOUNT_MNT_POINT, &parent) == 0 &&
            (parent->mask & KM_STATMOUNT_MNT_POINT) && streq(parent->str + parent->mnt_point, point))
                return -EAGAIN;
        /* libsmartcols pads the column to its header's width ("TARGET") even without headings. */
        if (asprintf(ret, "%-6s %s%s%s\n", point, type, *sub ? "." : "", sub) < 0)
                return -ENOMEM;
        return 0;
}

static int answer_realpath(const char *mode, const char *path, char **ret) {
        _cleanup_free_ char *resolved = NULL;

        /* -m and -e agree whenever the whole path exists. */
        (void)mode;
        if (!*path || !(resolved = realpath(path, NULL)) || !plain(resolved))
                return -EAGAIN;
        if (asprintf(ret, "%s\n", resolved) < 0)
                return -ENOMEM;
        return 0;
}

static int answer_stat_type(const char *path, char **ret) {
        struct stat st;
        const char *t;

        if (!english_locale() || stat(path, &st) < 0)
                return -EAGAIN;
        switch (st.st_mode & S_IFMT) {
        case S_IFREG:
                t = st.st_size == 0 ? "regular empty file" : "regular file";
                break;
        case S_IFDIR:
                t = "directory";
                break;
        case S_IFBLK:
                t = "block special file";
                break;
        case S_IFCHR:
                t = "character special file";
                break;
        case S_IFIFO:
                t = "fifo";
                break;
        case S_IFSOCK:
                t = "socket";
                break;
        default:
                return -EAGAIN;
        }
        *ret = strdup(t); /* --printf adds no newline */
        return *ret ? 0 : -ENOMEM;
}

int probe_answer(enum probe_kind kind, int argc, char *const *argv, char **ret) {
        switch (kind) {
        case PROBE_FINDMNT_TARGET:
                return answer_findmnt(argv[argc - 1], ret);
        case PROBE_REALPATH:
                return answer_realpath(argv[1], argv[2], ret);
        case PROBE_STAT_TYPE:
                return answer_stat_type(argv[3], ret);
        default:
                return -EAGAIN;
        }
}
