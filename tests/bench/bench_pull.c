/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, P7: `kubemount pull` (manifest, config and layers
 * verified into the store, then unpacked to STORE/rootfs/HEX) of a ~50 MB
 * image from a docker-registry on loopback, against
 *   skopeo copy docker://REG/NAME:TAG oci:DIR:TAG --src-tls-verify=false
 *   + umoci unpack --image DIR:TAG BUNDLE
 * of the same image.  Every run starts cold (empty store, empty OCI dir and
 * bundle, the filesystem synced); kubemount and the peer alternate.
 *
 * What is set up here, all thrown away at the end (and by the sandbox if we
 * are killed):
 *   - a network namespace of our own with only "lo" (setns back afterwards);
 *     docker-registry listens on 127.0.0.1 in it, storage in the work dir;
 *   - a tmpfs on /var/lib in A while P7 runs, so that skopeo's blob-info
 *     cache (/var/lib/containers/cache) and kubemount's default authfile
 *     (/var/lib/kubelet/config.json) are empty ones of the sandbox;
 *   - the image: busybox, then shared libraries and /usr/share files of this
 *     machine copied in name order up to 30 + 20 MB, three gzip layers made
 *     with umoci and pushed with skopeo;
 *   - the filesystem the runs write to: a fresh ext4 (mkfs defaults, with a
 *     journal, as a node's /var/lib would have) on a loop device whose
 *     backing file is an unnamed O_TMPFILE on the disk (/var/tmp), so that
 *     nothing can outlive us.  This machine's own / is ext4 without a
 *     journal: there, ext4 skips inodes deleted in the last minute
 *     (recently_deleted()), and a create after the previous run's rm -rf
 *     took ~0.5 ms, which is what a benchmark of repeated cold runs would
 *     have measured.  The same runs are repeated on the work dir's tmpfs
 *     (no I/O at all) for information.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <linux/loop.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define IMAGE "kmbench/p7"
#define TAG "latest"
#define FILE_MAX (4LL << 20)   /* bigger files are skipped: many files, as in real images */
#define LIBS_BYTES 28000000LL  /* shared libraries */
#define SHARE_BYTES 18000000LL /* /usr/share: text, icons, locale data; with busybox ~50 MB */
#define EXT4_SIZE (2LL << 30)

static char dir[300];   /* WORKDIR/p7 */
static char reg[64];    /* 127.0.0.1:PORT */
static char ref[128];   /* REG/IMAGE:TAG */
static char **env_pull; /* env_plain + REGISTRY_AUTH_FILE + TMPDIR */
static pid_t registry_pid = -1;
static int net_orig = -1; /* our network namespace before P7 */
static bool varlib_mounted, ext4_mounted;
static char ext4_dir[320];

/* ------------------------------------------------------------------ */
/* helpers */

static bool run_pull_env(char *const argv[]) {
        int st = run_fds(argv, env_pull, -1, -1);
        if (st != 0) {
                fail("P7: %s %s ... exited %d", argv[0], argv[1] ? argv[1] : "", st);
                show_errlog();
        }
        return st == 0;
}

static bool rm_rf(const char *path) {
        char *argv[] = { (char *)"rm", (char *)"-rf", (char *)"--one-file-system", (char *)path, NULL };
        return run_ok(argv);
}

/* syncfs of the filesystem holding path: the seconds it took, or -1. */
static double sync_fs(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        double t = now();
        int r = fd >= 0 ? syncfs(fd) : -1;

        t = now() - t;
        if (fd >= 0)
                close(fd);
        return r < 0 ? -1 : t;
}

/* ------------------------------------------------------------------ */
/* the network namespace and the registry */

static bool net_private(void) {
        struct ifreq ifr = { 0 };
        int s;

        net_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (net_orig < 0 || unshare(CLONE_NEWNET) < 0) {
                fail("P7: a network namespace: %m");
                return false;
        }
        s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr)) < 0) {
                fail("P7: bringing up lo: %m");
                if (s >= 0)
                        close(s);
                return false;
        }
        close(s);
        return true;
}

static int free_port(void) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

        if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
            getsockname(s, (struct sockaddr *)&a, &len) == 0)
                port = ntohs(a.sin_port);
        if (s >= 0)
                close(s);
        return port;
}

/* Whether 127.0.0.1:port answers GET /v2/ with any HTTP status. */
static bool http_answers(int port) {
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        static const char req[] = "GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        char buf[16] = "";
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok = false;

        if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
            write(s, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1 && read(s, buf, sizeof(buf) - 1) >= 8)
                ok = strncmp(buf, "HTTP/1.", 7) == 0;
        if (s >= 0)
                close(s);
        return ok;
}

static void registry_stop(void) {
        if (registry_pid <= 0)
                return;
        kill(registry_pid, SIGTERM);
        for (int i = 0; i < 500; i++) {
                if (waitpid(registry_pid, NULL, WNOHANG) == registry_pid)
                        break;
                if (i == 499) {
                        kill(registry_pid, SIGKILL);
                        waitpid(registry_pid, NULL, 0);
                }
                usleep(10000);
        }
        registry_pid = -1;
}

/* docker-registry 2.8 with a config of ours (as tests/lib/registry.sh writes it) on a free port. */
static bool registry_start(void) {
        char conf[340], log[340], data[340], secret[33];
        unsigned char rnd[16];
        int fd;

        snprintf(data, sizeof(data), "%s/registry", dir);
        snprintf(conf, sizeof(conf), "%s/registry.yml", dir);
        snprintf(log, sizeof(log), "%s/registry.log", dir);
        mkdir(data, 0700);
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
                fail("P7: /dev/urandom: %m");
                return false;
        }
        close(fd);
        for (int i = 0; i < 16; i++)
                snprintf(secret + 2 * i, 3, "%02x", rnd[i]);
        for (int tries = 0; tries < 5 && registry_pid < 0; tries++) {
                int port = free_port(), logfd;
                FILE *f = fopen(conf, "we");
                posix_spawn_file_actions_t fa;
                char *argv[] = { (char *)"docker-registry", (char *)"serve", conf, NULL };

                if (port < 0 || !f) {
                        if (f)
                                fclose(f);
                        fail("P7: registry config / port: %m");
                        return false;
                }
                fprintf(f,
                        "version: 0.1\n"
                        "log: {level: warn, accesslog: {disabled: true}}\n"
                        "storage:\n"
                        "  filesystem: {rootdirectory: %s}\n"
                        "  delete: {enabled: true}\n"
                        "  maintenance: {uploadpurging: {enabled: false}}\n"
                        "http:\n"
                        "  addr: 127.0.0.1:%d\n"
                        "  secret: %s\n",
                        data, port, secret);
                fclose(f);
                logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
                posix_spawn_file_actions_adddup2(&fa, logfd >= 0 ? logfd : errlog_fd, 1);
                posix_spawn_file_actions_adddup2(&fa, logfd >= 0 ? logfd : errlog_fd, 2);
                if (posix_spawnp(&registry_pid, argv[0], &fa, NULL, argv, env_plain) != 0)
                        registry_pid = -1;
                posix_spawn_file_actions_destroy(&fa);
                if (logfd >= 0)
                        close(logfd);
                if (registry_pid < 0) {
                        fail("P7: cannot spawn docker-registry");
                        return false;
                }
                for (int i = 0; i < 750; i++) {
                        if (waitpid(registry_pid, NULL, WNOHANG) == registry_pid) {
                                registry_pid = -1; /* died (port taken?): another port */
                                break;
                        }
                        if (http_answers(port)) {
                                snprintf(reg, sizeof(reg), "127.0.0.1:%d", port);
                                return true;
                        }
                        usleep(20000);
                }
                registry_stop();
        }
        fail("P7: docker-registry did not start (log: %s)", log);
        return false;
}

/* ------------------------------------------------------------------ */
/* the image */

static long long copied_bytes;
static long copied_files;

static bool copy_file(const char *src, const char *dst, const struct stat *st) {
        int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        int out = in >= 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 0777) : -1;
        off_t left = st->st_size;
        bool ok = out >= 0;

        while (ok && left > 0) {
                ssize_t n = sendfile(out, in, NULL, (size_t)left);
                if (n <= 0)
                        ok = false;
                else
                        left -= n;
        }
        if (in >= 0)
                close(in);
        if (out >= 0)
                close(out);
        if (!ok)
                unlink(dst);
        return ok;
}

static int only_so(const struct dirent *e) {
        return strstr(e->d_name, ".so") != NULL;
}

/*
 * Regular files of at most FILE_MAX below src (only src's own *.so* files
 * when libs), in name order, copied to dst until *left bytes are taken.
 */
static void copy_tree(const char *src, const char *dst, long long *left, bool libs) {
        struct dirent **e;
        int n = scandir(src, &e, libs ? only_so : NULL, alphasort);

        if (n < 0)
                return;
        if (mkdir(dst, 0755) < 0 && errno != EEXIST)
                *left = 0;
        for (int i = 0; i < n; i++) {
                char s[4096], d[4096];
                struct stat st;

                if (*left > 0 && strcmp(e[i]->d_name, ".") != 0 && strcmp(e[i]->d_name, "..") != 0 &&
                    (size_t)snprintf(s, sizeof(s), "%s/%s", src, e[i]->d_name) < sizeof(s) &&
                    (size_t)snprintf(d, sizeof(d), "%s/%s", dst, e[i]->d_name) < sizeof(d) && lstat(s, &st) == 0) {
                        if (S_ISDIR(st.st_mode) && !libs)
                                copy_tree(s, d, left, false);
                        else if (S_ISREG(st.st_mode) && st.st_size <= FILE_MAX && copy_file(s, d, &st)) {
                                *left -= st.st_size;
                                copied_bytes += st.st_size;
                                copied_files++;
                        }
                }
                free(e[i]);
        }
        free(e);
}

/* The first of the usual multiarch library directories that exists. */
static const char *lib_dir(void) {
        static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                                            "/usr/lib" };
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
                if (access(dirs[i], R_OK | X_OK) == 0)
                        return dirs[i];
        return "/usr/lib";
}

static struct {
        long long compressed, config; /* bytes of the layers (gzip) and the config + manifest */
        int layers;
} img;

/* Layer sizes from the OCI layout's index and manifest. */
static bool image_sizes(const char *oci) {
        char path[800];
        json_t *index, *manifest = NULL, *layers, *l;
        const char *digest;
        size_t i;

        snprintf(path, sizeof(path), "%s/index.json", oci);
        index = json_load_file(path, 0, NULL);
        digest = json_string_value(json_object_get(json_array_get(json_object_get(index, "manifests"), 0), "digest"));
        if (digest && strncmp(digest, "sha256:", 7) == 0) {
                snprintf(path, sizeof(path), "%s/blobs/sha256/%s", oci, digest + 7);
                manifest = json_load_file(path, 0, NULL);
        }
        layers = json_object_get(manifest, "layers");
        img.config = (long long)json_integer_value(json_object_get(json_object_get(manifest, "config"), "size"));
        img.config += (long long)json_integer_value(
                json_object_get(json_array_get(json_object_get(index, "manifests"), 0), "size"));
        json_array_foreach(layers, i, l) {
                img.compressed += (long long)json_integer_value(json_object_get(l, "size"));
                img.layers++;
        }
        json_decref(manifest);
        json_decref(index);
        return img.layers > 0;
}

/* busybox + libraries + /usr/share files, three layers, pushed to the registry as REF. */
static bool image_build(void) {
        char stage[320], bin[340], lib[340], share[340], oci[320], oci_tag[340], p[360], dst[360], busybox[900];
        const char *ld = lib_dir();
        long long left;
        struct stat st;
        double t = now();

        snprintf(stage, sizeof(stage), "%s/stage", dir);
        snprintf(bin, sizeof(bin), "%s/bin", stage);
        snprintf(lib, sizeof(lib), "%s/lib", stage);
        snprintf(share, sizeof(share), "%s/share", stage);
        snprintf(oci, sizeof(oci), "%s/image-oci", dir);
        snprintf(oci_tag, sizeof(oci_tag), "%s:" TAG, oci);
        mkdir(stage, 0755);
        mkdir(bin, 0755);
        {
                /* busybox from PATH (busybox or busybox-static) */
                char *argv[] = { (char *)"sh", (char *)"-c", (char *)"command -v busybox", NULL };
                char *out = capture(argv, env_plain);
                snprintf(busybox, sizeof(busybox), "%.*s", out ? (int)strcspn(out, "\n") : 0, out ? out : "");
                free(out);
        }
        snprintf(dst, sizeof(dst), "%s/busybox", bin);
        if (!*busybox || stat(busybox, &st) < 0 || !copy_file(busybox, dst, &st)) {
                fail("P7: copying busybox (%s) into the image: %m", busybox);
                return false;
        }
        snprintf(p, sizeof(p), "%s/sh", bin);
        if (symlink("busybox", p) < 0)
                return false;
        copied_bytes = st.st_size;
        copied_files = 1;
        left = LIBS_BYTES;
        copy_tree(ld, lib, &left, true);
        left = SHARE_BYTES;
        copy_tree("/usr/share", share, &left, false);
        say("  image: busybox, %ld files, %.1f MB (libraries from %s, files from /usr/share, in name order)",
            copied_files, (double)copied_bytes / 1e6, ld);
        {
                char *init[] = { (char *)"umoci", (char *)"init", (char *)"--layout", oci, NULL };
                char *new[] = { (char *)"umoci", (char *)"new", (char *)"--image", oci_tag, NULL };
                char *ins1[] = {
                        (char *)"umoci", (char *)"insert", (char *)"--image", oci_tag, bin, (char *)"/bin", NULL
                };
                char *ins2[] = { (char *)"umoci", (char *)"insert", (char *)"--image", oci_tag, lib, (char *)ld, NULL };
                char *ins3[] = {
                        (char *)"umoci", (char *)"insert", (char *)"--image", oci_tag, share, (char *)"/usr/share", NULL
                };
                char *conf[] = { (char *)"umoci",
                                 (char *)"config",
                                 (char *)"--image",
                                 oci_tag,
                                 (char *)"--config.cmd",
                                 (char *)"/bin/busybox",
                                 (char *)"--config.cmd",
                                 (char *)"true",
                                 NULL };
                char *gc[] = { (char *)"umoci", (char *)"gc", (char *)"--layout", oci, NULL };
                char src[360], dest[200];
                char *push[] = { (char *)"skopeo",
                                 (char *)"--insecure-policy",
                                 (char *)"copy",
                                 (char *)"--quiet",
                                 (char *)"--dest-tls-verify=false",
                                 src,
                                 dest,
                                 NULL };

                snprintf(src, sizeof(src), "oci:%s", oci_tag);
                snprintf(dest, sizeof(dest), "docker://%s", ref);
                if (!run_ok(init) || !run_ok(new) || !run_ok(ins1) || !run_ok(ins2) || !run_ok(ins3) || !run_ok(conf) ||
                    !run_ok(gc) || !run_pull_env(push))
                        return false;
        }
        if (!image_sizes(oci)) {
                fail("P7: cannot read the layer sizes from %s", oci);
                return false;
        }
        rm_rf(stage);
        rm_rf(oci);
        say("  %d layers, %.1f MB compressed (gzip), pushed as %s in %.1f s", img.layers, (double)img.compressed / 1e6,
            ref, now() - t);
        return true;
}

/* ------------------------------------------------------------------ */
/* the filesystems the runs write to */

/* A fresh ext4 on a loop device over an unnamed file in /var/tmp, mounted at ext4_dir (in A). */
static bool ext4_make(void) {
        struct loop_config lc = { 0 };
        char dev[64];
        int ctl, loop = -1, back, n = -1;

        back = open("/var/tmp", O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
        if (back < 0 || ftruncate(back, EXT4_SIZE) < 0) {
                say("  (no O_TMPFILE in /var/tmp: %m; the ext4 runs are skipped)");
                if (back >= 0)
                        close(back);
                return false;
        }
        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        for (int tries = 0; ctl >= 0 && tries < 10 && loop < 0; tries++) {
                n = ioctl(ctl, LOOP_CTL_GET_FREE);
                snprintf(dev, sizeof(dev), "/dev/loop%d", n);
                loop = n >= 0 ? open(dev, O_RDWR | O_CLOEXEC) : -1;
                lc.fd = (unsigned)back;
                lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
                if (loop >= 0 && ioctl(loop, LOOP_CONFIGURE, &lc) < 0) {
                        close(loop); /* taken by someone else in between (EBUSY): another */
                        loop = -1;
                }
        }
        if (ctl >= 0)
                close(ctl);
        close(back); /* the loop device holds it now; freed when the device is cleared */
        if (loop < 0) {
                say("  (no loop device: %m; the ext4 runs are skipped)");
                return false;
        }
        {
                char *argv[] = { (char *)"mkfs.ext4",
                                 (char *)"-q",
                                 (char *)"-F",
                                 (char *)"-E",
                                 (char *)"lazy_itable_init=0,lazy_journal_init=0",
                                 dev,
                                 NULL };
                bool ok = run_ok(argv);

                mkdir(ext4_dir, 0755);
                if (ok && mount(dev, ext4_dir, "ext4", 0, NULL) < 0) {
                        fail("P7: mount %s (ext4) on %s: %m", dev, ext4_dir);
                        ok = false;
                }
                /* Mounted: the mount holds the device, and autoclear detaches it at umount. */
                if (ok)
                        ext4_mounted = true;
                else
                        ioctl(loop, LOOP_CLR_FD, 0);
                close(loop);
                return ok;
        }
}

/* ------------------------------------------------------------------ */
/* what was unpacked */

static struct tree_count {
        long long bytes, blocks;
        long files, dirs, links;
} tc;

static int count_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)path;
        (void)ftw;
        if (type == FTW_F && S_ISREG(st->st_mode)) {
                tc.files++;
                tc.bytes += st->st_size;
                tc.blocks += st->st_blocks;
        } else if (type == FTW_D)
                tc.dirs++;
        else if (type == FTW_SL)
                tc.links++;
        return 0;
}

static struct tree_count count_tree(const char *root) {
        tc = (struct tree_count){ 0 };
        if (nftw(root, count_entry, 32, FTW_PHYS | FTW_MOUNT) < 0)
                tc.files = -1;
        return tc;
}

/* STORE/rootfs/HEX (the only entry), or "" */
static void store_rootfs(const char *store, char *buf, size_t size) {
        char path[500];
        DIR *d;
        struct dirent *e;

        snprintf(path, sizeof(path), "%s/rootfs", store);
        buf[0] = '\0';
        d = opendir(path);
        while (d && (e = readdir(d)))
                if (e->d_name[0] != '.')
                        snprintf(buf, size, "%s/%s", path, e->d_name);
        if (d)
                closedir(d);
}

/* ------------------------------------------------------------------ */
/* the runs */

enum { T_KM, T_PEER, T_SKOPEO, T_UMOCI, T_SYNC, T_DURABLE, N_T };
static struct tree_count unpacked; /* what kubemount unpacked (the same as umoci: checked) */

struct fs_result {
        double m[N_T];
        bool ok;
};

/*
 * n cold runs of each side in base (a directory on the filesystem under
 * test), alternating which goes first; medians in r.  The first run checks
 * that both unpacked the same files.
 */
static void p7_runs(const char *base, const char *what, long n, struct fs_result *r) {
        char store[450], oci[450], oci_tag[470], oci_dst[480], bundle[450], src[200];
        char *km_argv[] = { (char *)km(), (char *)"--store-dir",         store, (char *)"pull",
                            (char *)"-q", (char *)"--insecure-registry", reg,   ref,
                            NULL };
        char *skopeo_argv[] = { (char *)"skopeo",
                                (char *)"--insecure-policy",
                                (char *)"copy",
                                (char *)"--quiet",
                                src,
                                oci_dst,
                                (char *)"--src-tls-verify=false",
                                NULL };
        char **skopeo = skopeo_argv;
        char *umoci_argv[] = { (char *)"umoci", (char *)"unpack", (char *)"--image", oci_tag, bundle, NULL };
        double *v[N_T];

        snprintf(store, sizeof(store), "%s/store", base);
        snprintf(oci, sizeof(oci), "%s/oci", base);
        snprintf(oci_tag, sizeof(oci_tag), "%s:" TAG, oci);
        snprintf(oci_dst, sizeof(oci_dst), "oci:%s", oci_tag);
        snprintf(bundle, sizeof(bundle), "%s/bundle", base);
        snprintf(src, sizeof(src), "docker://%s", ref);
        /* skopeo's default policy (/etc/containers/policy.json); --insecure-policy only without one */
        if (access("/etc/containers/policy.json", R_OK) == 0) {
                skopeo = skopeo_argv + 1;
                skopeo[0] = (char *)"skopeo";
        }
        for (int k = 0; k < N_T; k++)
                v[k] = calloc(n, sizeof(double));
        r->ok = false;
        mkdir(base, 0755);
        say("P7 [%s]: kubemount pull vs skopeo copy + umoci unpack, %ld cold runs each ...", what, n);
        for (long i = 0; i < n; i++)
                for (int step = 0; step < 2; step++) {
                        bool peer = ((i + step) % 2) == 1;
                        double t0, t1, t2;

                        /* cold: nothing of the last run, and its writes (and deletes) on disk */
                        if (!rm_rf(peer ? oci : store) || (peer && !rm_rf(bundle)) || sync_fs(base) < 0)
                                goto out;
                        t0 = now();
                        if (!run_pull_env(peer ? skopeo : km_argv))
                                goto out;
                        t1 = now();
                        if (!peer) {
                                v[T_KM][i] = t1 - t0;
                                continue;
                        }
                        if (!run_pull_env(umoci_argv))
                                goto out;
                        t2 = now();
                        v[T_PEER][i] = t2 - t0;
                        v[T_SKOPEO][i] = t1 - t0;
                        v[T_UMOCI][i] = t2 - t1;
                        /* kubemount syncs what it wrote (fsync, syncfs); the peer does not */
                        v[T_SYNC][i] = sync_fs(base);
                        v[T_DURABLE][i] = v[T_PEER][i] + v[T_SYNC][i];
                }
        {
                /* both unpacked the same regular files */
                char rootfs[800], peer_root[480];
                struct tree_count a, b;

                store_rootfs(store, rootfs, sizeof(rootfs));
                snprintf(peer_root, sizeof(peer_root), "%s/rootfs", bundle);
                a = count_tree(rootfs);
                b = count_tree(peer_root);
                if (!*rootfs || a.files <= 0 || a.files != b.files || a.bytes != b.bytes) {
                        fail("P7: kubemount unpacked %ld files, %lld bytes (%s); umoci %ld files, %lld bytes", a.files,
                             a.bytes, *rootfs ? rootfs : "no rootfs", b.files, b.bytes);
                        goto out;
                }
                unpacked = a;
        }
        for (int k = 0; k < N_T; k++)
                r->m[k] = median(v[k], n);
        r->ok = true;
out:
        rm_rf(base);
        for (int k = 0; k < N_T; k++)
                free(v[k]);
}

/* ------------------------------------------------------------------ */
/* P7 */

static bool p7_tools(void) {
        static const char *const tools[] = { "docker-registry", "skopeo", "umoci", "busybox", "rm" };
        char missing[200] = "";

        for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
                if (!have_program(tools[i]))
                        snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s", tools[i]);
        if (!*missing)
                return true;
        if (opt.only)
                fail("P7 needs docker-registry, skopeo, umoci and busybox; missing:%s", missing);
        else
                say("P7: skipped (missing:%s)", missing);
        return false;
}

static void p7_teardown(void) {
        registry_stop();
        enter(ns_a);
        if (ext4_mounted && umount2(ext4_dir, 0) < 0 && umount2(ext4_dir, MNT_DETACH) < 0)
                fail("P7: umount %s: %m", ext4_dir);
        ext4_mounted = false;
        if (varlib_mounted && umount2("/var/lib", 0) < 0 && umount2("/var/lib", MNT_DETACH) < 0)
                fail("P7: umount the tmpfs on /var/lib: %m");
        varlib_mounted = false;
        if (net_orig >= 0) {
                if (setns(net_orig, CLONE_NEWNET) < 0) {
                        perror("kubemount-bench: setns back to the network namespace");
                        _exit(1);
                }
                close(net_orig);
                net_orig = -1;
        }
        if (*dir)
                rm_rf(dir);
}

/* The rows for one filesystem; the first is returned (for notes). */
static struct result *p7_results(const char *what, const struct fs_result *r, bool goal, bool durable) {
        char name[160];
        struct result *res, *first;

        snprintf(name, sizeof(name), "P7 [%s]: kubemount pull vs skopeo copy + umoci unpack", what);
        first = res = add_result(name, r->m[T_KM], r->m[T_PEER]);
        if (goal)
                goal_ratio_max(res, 0.5);
        note(res, "skopeo copy %.2f s + umoci unpack %.2f s; cold runs, interleaved", r->m[T_SKOPEO], r->m[T_UMOCI]);
        if (durable) {
                snprintf(name, sizeof(name), "P7 [%s]: kubemount pull vs skopeo + umoci + syncfs", what);
                res = add_result(name, r->m[T_KM], r->m[T_DURABLE]);
                note(res,
                     "kubemount fsyncs each blob and syncfs's the rootfs before it renames it into place; "
                     "skopeo and umoci sync nothing: here the peer's syncfs (%.2f s) is counted too",
                     r->m[T_SYNC]);
        }
        return first;
}

static void image_row(bool ext4) {
        char name[160];
        struct result *r;

        snprintf(name, sizeof(name), "P7 image: %d gzip layers %.1f MB, unpacked %.1f MB (%ld files)", img.layers,
                 (double)img.compressed / 1e6, (double)unpacked.bytes / 1e6, unpacked.files);
        r = add_result(name, NAN, NAN);
        r->note[0] = '\0'; /* no timing here: the CPU pressure does not matter */
        note(r,
             "compressed: layers %lld bytes + manifest and config %lld; unpacked: %lld bytes in regular files "
             "(%lld KiB on disk), %ld directories, %ld symlinks; both sides unpacked the same files",
             img.compressed, img.config, unpacked.bytes, unpacked.blocks / 2, unpacked.dirs, unpacked.links);
        if (!ext4)
                note(r, "no ext4 on a loop device here: the goal is judged on tmpfs");
}

void bench_p7(long n) {
        struct fs_result ext4 = { 0 }, tmpfs = { 0 };
        char e1[400], e2[420], base[400];
        bool have_ext4;
        struct result *r;

        if (!p7_tools())
                return;
        wait_quiet();
        enter(ns_a);
        snprintf(dir, sizeof(dir), "%s/p7", workdir);
        snprintf(ext4_dir, sizeof(ext4_dir), "%s/ext4", dir);
        snprintf(base, sizeof(base), "%s/tmp", dir);
        if (mkdir(dir, 0755) < 0 || mkdir(base, 0700) < 0) {
                fail("P7: mkdir %s: %m", dir);
                return;
        }
        snprintf(e1, sizeof(e1), "REGISTRY_AUTH_FILE=%s/auth.json", dir); /* no such file: no credentials */
        snprintf(e2, sizeof(e2), "TMPDIR=%s", base);
        env_pull = env_with(env_plain, e1, e2);
        /* skopeo's blob-info cache and the kubelet's config.json: the sandbox's, empty (A only) */
        if (mount("kubemount-bench-varlib", "/var/lib", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0) {
                fail("P7: a tmpfs on /var/lib (in the sandbox): %m");
                goto out;
        }
        varlib_mounted = true;
        if (!net_private() || !registry_start())
                goto out;
        snprintf(ref, sizeof(ref), "%s/" IMAGE ":" TAG, reg);
        say("P7: docker-registry on %s (pid %d, a network namespace of its own), building the image ...", reg,
            (int)registry_pid);
        if (!image_build())
                goto out;

        have_ext4 = ext4_make();
        if (have_ext4) {
                snprintf(base, sizeof(base), "%s/runs", ext4_dir);
                p7_runs(base, "ext4", n, &ext4);
                if (!ext4.ok)
                        goto out;
                image_row(true);
                r = p7_results("ext4", &ext4, true, true);
                note(r, "a fresh ext4 (mkfs defaults, journal) on a loop device backed by the disk (/var/tmp)");
        }
        wait_quiet();
        snprintf(base, sizeof(base), "%s/tmpfs-runs", dir);
        p7_runs(base, "tmpfs", n, &tmpfs);
        if (!tmpfs.ok)
                goto out;
        if (!have_ext4)
                image_row(false);
        r = p7_results("tmpfs", &tmpfs, !have_ext4, false);
        note(r, "the work dir's tmpfs: no I/O, fsync and syncfs cost nothing");
out:
        p7_teardown();
}
