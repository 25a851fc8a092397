/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_generate_vcs: the VCS capability set, a config.json that must parse
 * back (spec_parse) into its inputs, bad inputs refused, and an allocation
 * failure at each step named.  Run under ASan for leaks.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "seccomp-filter.h"
#include "spec.h"
#include "test-helpers.h"

static void test_vcs_capabilities(void **state) {
        static const int wanted[] = {
                CAP_SYS_ADMIN,  CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,           CAP_FSETID,
                CAP_KILL,       CAP_SETGID, CAP_SETUID,       CAP_SETPCAP,         CAP_NET_BIND_SERVICE, CAP_NET_ADMIN,
                CAP_SYS_CHROOT, CAP_MKNOD,  CAP_AUDIT_WRITE,  CAP_SETFCAP,         CAP_IPC_LOCK
        };
        static const int never[] = { CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_SYS_RAWIO,    CAP_SYS_BOOT,
                                     CAP_SYS_TIME,   CAP_MAC_ADMIN,  CAP_MAC_OVERRIDE, CAP_BPF,
                                     CAP_PERFMON,    CAP_NET_RAW,    CAP_SYS_RESOURCE };
        uint64_t mask = spec_vcs_capabilities(), all = 0;

        for (size_t i = 0; i < ELEMENTSOF(wanted); i++)
                all |= 1ULL << wanted[i];
        assert_true(mask == all);
        for (size_t i = 0; i < ELEMENTSOF(never); i++)
                assert_false(mask & (1ULL << never[i]));
}

/* The value of key in a NULL-terminated env, or NULL. */
static const char *env_get(char *const *env, const char *key) {
        const char *found = NULL;

        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], key, strlen(key)) == 0 && env[i][strlen(key)] == '=') {
                        assert_null(found); /* each key once */
                        found = env[i] + strlen(key) + 1;
                }
        return found;
}

static void check_spec_is_inputs(const struct container_spec *s, const struct vcs_inputs *in) {
        static const char *const fixed[] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys" };
        unsigned long ns = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS;
        json_t *profile = seccomp_default_profile();
        bool shared = false;
        size_t n = 0;

        for (; in->args[n]; n++)
                assert_string_equal(s->args[n], in->args[n]);
        assert_null(s->args[n]);
        for (size_t i = 0; in->env && in->env[i]; i++) {
                char key[64];

                snprintf(key, sizeof(key), "%.*s", (int)strcspn(in->env[i], "="), in->env[i]);
                assert_non_null(env_get(s->env, key)); /* present (the last given wins, see below) */
        }
        assert_non_null(env_get(s->env, "PATH"));
        assert_string_equal(env_get(s->env, "HOME"), "/root");
        assert_string_equal(s->cwd, in->cwd ? in->cwd : "/");
        if (in->hostname)
                assert_string_equal(s->hostname, in->hostname);
        else
                assert_null(s->hostname); /* the node's own name */
        assert_string_equal(s->root_path, in->rootfs);
        assert_true(s->root_readonly == in->rootfs_readonly && s->terminal == in->terminal);
        assert_true(s->root_overlay == in->rootfs_layer);
        assert_true(s->uid == 0 && s->gid == 0 && s->n_additional_gids == 0 && s->no_new_privileges);
        assert_true(s->cap_bounding == spec_vcs_capabilities() && s->cap_effective == s->cap_bounding &&
                    s->cap_permitted == s->cap_bounding && s->cap_inheritable == 0 && s->cap_ambient == 0);
        /* Unprivileged (the default): a user and a cgroup namespace, the id map, the broker's types. */
        if (!in->privileged)
                ns |= CLONE_NEWUSER | CLONE_NEWCGROUP;
        assert_true(s->namespaces == (in->host_network ? ns : ns | CLONE_NEWNET) && !s->netns_path);
        assert_true(in->privileged ? s->id_count == 0 && !s->broker
                                   : s->id_count == SPEC_IDMAP_DEFAULT_COUNT &&
                                             s->host_uid == SPEC_IDMAP_DEFAULT_HOST_ID && s->broker);
        assert_int_equal(s->n_mounts, ELEMENTSOF(fixed) + in->n_binds);
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                assert_string_equal(s->mounts[i].destination, fixed[i]);
        assert_int_equal(s->mounts[0].flags, MS_NOSUID | MS_NOEXEC | MS_NODEV);
        if (in->host_dev) {
                assert_string_equal(s->mounts[1].source, "/dev");
                assert_true(s->mounts[1].flags == (MS_BIND | MS_REC) &&
                            s->mounts[1].propagation == (MS_SLAVE | MS_REC));
                assert_int_equal(s->n_devices, 0);
        } else {
                assert_string_equal(s->mounts[1].type, "tmpfs");
                assert_string_equal(s->mounts[1].data, "mode=755,size=65536k");
                assert_true(s->mounts[1].flags == (MS_NOSUID | MS_STRICTATIME) && s->n_devices == 7);
                assert_string_equal(s->devices[0].path, "/dev/null");
                assert_string_equal(s->devices[6].path, "/dev/fuse");
                assert_true(s->devices[6].type == 'c' && s->devices[6].major == 10 && s->devices[6].minor == 229);
                for (size_t i = 0; i < s->n_devices; i++)
                        assert_int_equal(s->devices[i].mode, 0666);
        }
        assert_string_equal(s->mounts[2].data, "newinstance,ptmxmode=0666,mode=0620");
        assert_int_equal(s->mounts[2].flags, MS_NOSUID | MS_NOEXEC);
        assert_string_equal(s->mounts[3].data, "mode=1777,size=65536k");
        assert_int_equal(s->mounts[5].flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY);
        for (size_t i = 0; i < in->n_binds; i++) {
                const struct spec_mount *m = &s->mounts[ELEMENTSOF(fixed) + i];

                assert_string_equal(m->destination, in->binds[i].destination);
                assert_string_equal(m->source, in->binds[i].source);
                assert_string_equal(m->type, "bind");
                assert_int_equal(m->flags, MS_BIND | MS_REC | (in->binds[i].readonly ? MS_RDONLY : 0));
                /* Unprivileged too: the broker mounts in the container's namespace, where the bind's decides. */
                assert_int_equal(m->propagation, in->binds[i].propagation | MS_REC);
                assert_null(m->data);
                shared = shared || (in->privileged && in->binds[i].propagation == MS_SHARED);
        }
        assert_string_equal(s->masked_paths[0], "/proc/acpi");
        assert_null(s->masked_paths[10]);
        assert_string_equal(s->readonly_paths[4], "/proc/sysrq-trigger");
        assert_null(s->readonly_paths[5]);
        assert_int_equal(s->rootfs_propagation, (shared ? MS_SHARED : MS_SLAVE) | MS_REC);
        assert_true(json_equal(s->seccomp, profile));
        json_decref(profile);
}

/* spec_from_json(spec_generate_vcs(in)) gives back in, and so does the text. */
static void check_round_trip(const struct vcs_inputs *in) {
        struct container_spec *s = NULL, *t = NULL;
        struct km_error err = {};
        json_t *j = spec_generate_vcs(in, &err);
        char *text;

        if (!j)
                fail_msg("generate: %s", err.message);
        if (spec_from_json(j, &s, &err) < 0)
                fail_msg("parse back: %s", err.message);
        check_spec_is_inputs(s, in);
        text = json_dumps(j, JSON_INDENT(2));
        assert_int_equal(spec_parse(text, strlen(text), &t, &err), 0);
        check_spec_is_inputs(t, in);
        free(text);
        spec_free(s);
        spec_free(t);
        json_decref(j);
}

/* vcs_inputs takes char *const * like execv(); the test's literals are const. */
#define ARGV(a) ((char *const *)(a))
static const char *const nfs_args_[] = { "/sbin/mount.nfs", "server:/export", "/mnt/volume", "-o", "vers=4.2", NULL };
#define nfs_args ARGV(nfs_args_)

static void test_generate_round_trip(void **state) {
        static const char *const env[] = { "FOO=bar", "PATH=/opt/bin:/bin", "FOO=baz", "EMPTY=", NULL };
        const struct vcs_bind binds[] = {
                { "/var/lib/kubelet/pods/x/volumes", "/var/lib/kubelet/pods/x/volumes", MS_SHARED, false },
                { "/etc/kubemount/secret", "/run/secret", MS_SLAVE, true },
                { "/lib/modules", "/lib/modules", MS_PRIVATE, true },
        };
        struct vcs_inputs in = { .rootfs = "/var/lib/kubemount/images/nfs/rootfs", .args = nfs_args };
        struct container_spec *s = NULL;
        struct km_error err = {};
        json_t *j;

        check_round_trip(&in);
        in = (struct vcs_inputs){ .rootfs = "/r",
                                  .rootfs_readonly = true,
                                  .args = nfs_args,
                                  .env = ARGV(env),
                                  .cwd = "/work",
                                  .hostname = "nfs-client",
                                  .binds = binds,
                                  .n_binds = 3,
                                  .host_network = true,
                                  .terminal = true };
        check_round_trip(&in);
        in.host_dev = true;
        in.binds = binds + 1; /* no shared bind: rslave root */
        in.n_binds = 2;
        check_round_trip(&in);
        in.rootfs_layer = true; /* an image's tree: a writable layer of its own */
        check_round_trip(&in);
        in.rootfs_layer = false;

        /* The override keeps the default's place; the last FOO wins. */
        j = spec_generate_vcs(&in, &err);
        assert_int_equal(spec_from_json(j, &s, &err), 0);
        assert_string_equal(s->env[0], "PATH=/opt/bin:/bin");
        assert_string_equal(s->env[1], "HOME=/root");
        assert_string_equal(s->env[2], "FOO=baz");
        assert_string_equal(s->env[3], "EMPTY=");
        assert_null(s->env[4]);
        spec_free(s);
        json_decref(j);
}

static void expect_generate_reject(const struct vcs_inputs *in, int code, const char *msg) {
        struct km_error err = {};

        assert_null(spec_generate_vcs(in, &err));
        test_note("%s", err.message);
        assert_int_equal(err.code, code);
        assert_string_equal(err.message, msg);
}

/* A valid input with one field changed must be refused with msg. */
#define REJECT_WITH(field, value, code, msg)                                                                           \
        do {                                                                                                           \
                struct vcs_inputs in_ = ok;                                                                            \
                in_.field = (value);                                                                                   \
                expect_generate_reject(&in_, code, msg);                                                               \
        } while (0)

/* jansson's allocations fail after a budget (< 0: never). */
static long alloc_budget = -1;

static void *limited_malloc(size_t n) {
        if (alloc_budget == 0)
                return NULL;
        if (alloc_budget > 0)
                alloc_budget--;
        return malloc(n);
}

/* Out of memory at every step in turn: the error names the step that failed, never a bare "out of memory". */
static void test_generate_names_the_failing_step(void **state) {
        static const struct vcs_bind binds[] = { { "/a", "/a", MS_SHARED, true } };
        const struct vcs_inputs in = { .rootfs = "/r",
                                       .args = nfs_args,
                                       .hostname = "node",
                                       .binds = binds,
                                       .n_binds = 1,
                                       .rootfs_layer = true,
                                       .host_dev = true };
        char last[KM_ERROR_MAX] = "";
        size_t steps = 0;
        json_t *j = NULL;

        json_set_alloc_funcs(limited_malloc, free);
        for (long n = 0; !j && n < 100000; n++) {
                struct km_error err = {};

                alloc_budget = n;
                j = spec_generate_vcs(&in, &err);
                if (j)
                        break;
                /* The inputs' checks read a failed allocation as text jansson refuses. */
                if (err.code == -EINVAL && strstr(err.message, "is not valid UTF-8"))
                        continue;
                assert_int_equal(err.code, -ENOMEM);
                assert_true(startswith(err.message, "vcs: config.json: "));
                assert_non_null(strstr(err.message, ": Cannot allocate memory"));
                if (!streq(err.message, last)) {
                        test_note("%s", err.message);
                        snprintf(last, sizeof(last), "%s", err.message);
                        steps++;
                }
        }
        alloc_budget = -1;
        json_set_alloc_funcs(malloc, free);
        assert_non_null(j);
        json_decref(j);
        /* The template, each bind, process.*, capabilities, root, annotations, hostname, linux.* ... */
        assert_true(steps >= 12);
}

static void test_generate_rejects_bad_inputs(void **state) {
        static const char *const empty[] = { "", NULL }, *const none[] = { NULL }, *const no_eq[] = { "FOO", NULL },
                                 *const utf8[] = { "/bin/x", "\xff", NULL }, *const no_key[] = { "=x", NULL };
        static const struct vcs_bind good[] = { { "/a", "/a", MS_SHARED, false } },
                                     rel_dest[] = { { "/a", "mnt", MS_SLAVE, false } },
                                     dotdot[] = { { "/a", "/mnt/../../etc", MS_SLAVE, false } },
                                     rel_src[] = { { "a", "/a", MS_SLAVE, false } },
                                     unbindable[] = { { "/a", "/a", MS_UNBINDABLE, false } },
                                     rec[] = { { "/a", "/a", MS_SHARED | MS_REC, false } };
        const struct vcs_inputs ok = { .rootfs = "/r", .args = nfs_args, .binds = good, .n_binds = 1 };
        const char **many = calloc(4098, sizeof(char *));

        for (int i = 0; i < 4097; i++)
                many[i] = "x";
        check_round_trip(&ok);
        REJECT_WITH(rootfs, "rootfs", -EINVAL, "vcs: rootfs: must be absolute");
        REJECT_WITH(rootfs, NULL, -EINVAL, "vcs: rootfs: is missing");
        REJECT_WITH(rootfs, "/images/../etc", -EINVAL, "vcs: rootfs: must not contain \"..\"");
        REJECT_WITH(args, NULL, -EINVAL, "vcs: args: must hold a non-empty command");
        REJECT_WITH(args, ARGV(none), -EINVAL, "vcs: args: must hold a non-empty command");
        REJECT_WITH(args, ARGV(empty), -EINVAL, "vcs: args: must hold a non-empty command");
        REJECT_WITH(args, ARGV(utf8), -EINVAL, "vcs: args[1]: is not valid UTF-8");
        REJECT_WITH(args, ARGV(many), -E2BIG, "vcs: args: more than 4096 entries");
        REJECT_WITH(env, ARGV(no_eq), -EINVAL, "vcs: env[0]: must be KEY=VALUE");
        REJECT_WITH(env, ARGV(no_key), -EINVAL, "vcs: env[0]: must be KEY=VALUE");
        REJECT_WITH(cwd, "work", -EINVAL, "vcs: cwd: must be absolute");
        REJECT_WITH(cwd, "/proc/self/fd/5", -EINVAL, "vcs: cwd: must not be below /proc");
        REJECT_WITH(hostname, "a/b", -EINVAL, "vcs: hostname: contains '/' or a control character");
        REJECT_WITH(hostname, "node\xff", -EINVAL, "vcs: hostname: is not valid UTF-8");
        REJECT_WITH(binds, rel_dest, -EINVAL, "vcs: binds[0].destination: must be absolute");
        REJECT_WITH(binds, dotdot, -EINVAL, "vcs: binds[0].destination: must not contain \"..\"");
        REJECT_WITH(binds, rel_src, -EINVAL, "vcs: binds[0].source: must be absolute");
        REJECT_WITH(binds, unbindable, -EINVAL, "vcs: binds[0].propagation: must be MS_SHARED, MS_SLAVE or MS_PRIVATE");
        REJECT_WITH(binds, rec, -EINVAL, "vcs: binds[0].propagation: must be MS_SHARED, MS_SLAVE or MS_PRIVATE");
        REJECT_WITH(n_binds, 1019, -E2BIG, "vcs: binds: 1019 entries, at most 1018");
        free(many);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vcs_capabilities),
                cmocka_unit_test(test_generate_round_trip),
                cmocka_unit_test(test_generate_rejects_bad_inputs),
                cmocka_unit_test(test_generate_names_the_failing_step),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
