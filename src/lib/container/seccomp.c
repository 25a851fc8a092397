/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OCI "linux.seccomp" objects compiled to BPF with libseccomp, and loading
 * the result.  The JSON may come from outside (a bundle's config.json): every
 * field is type-checked and anything malformed is -EINVAL naming the field.
 */
#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "json-shape.h"
#include "libseccomp-dl.h"
#include "seccomp-filter.h"
#include "syscalls.h"

DEFINE_DLOPEN(libseccomp, "libseccomp.so.2", KM_LIBSECCOMP_SYMBOLS)
DEFINE_CLEANUP(void, seccomp_release)

/* The largest errno a syscall can return (the kernel's MAX_ERRNO). */
#define ERRNO_MAX 4095
/* Conditions per rule; real profiles use a handful. */
#define ARGS_MAX 32
/* Syscall names are short identifiers ("_llseek", "clock_gettime64"). */
#define NAME_MAX_LEN 64

enum {
        ACTION_UNSUPPORTED = 1 << 0,
        ACTION_TAKES_ERRNO = 1 << 1,
};

static const struct {
        const char *name;
        uint32_t action; /* for SCMP_ACT_ERRNO, without the errno */
        unsigned flags;
} actions[] = {
        { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, 0 },
        { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), ACTION_TAKES_ERRNO },
        { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, 0 },
        { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, 0 },
        { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, 0 },
        { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, 0 },
        { "SCMP_ACT_LOG", SCMP_ACT_LOG, 0 },
        /* Both need a supervisor that kubemount does not have. */
        { "SCMP_ACT_TRACE", 0, ACTION_UNSUPPORTED },
        { "SCMP_ACT_NOTIFY", 0, ACTION_UNSUPPORTED },
};

static const struct {
        const char *name;
        enum scmp_compare op;
} operators[] = {
        { "SCMP_CMP_NE", SCMP_CMP_NE },
        { "SCMP_CMP_LT", SCMP_CMP_LT },
        { "SCMP_CMP_LE", SCMP_CMP_LE },
        { "SCMP_CMP_EQ", SCMP_CMP_EQ },
        { "SCMP_CMP_GE", SCMP_CMP_GE },
        { "SCMP_CMP_GT", SCMP_CMP_GT },
        { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* User text in a message: control characters masked, long strings cut. */
#define SHOW(s, buf) str_printable((s), (buf), sizeof(buf))

/* Refusals name the field: "seccomp: syscalls[3].names[0]: ...".  Null is absent, as Go writes nil. */
static const struct json_doc SECCOMP = { { NULL, "seccomp", 0 }, -EINVAL, "missing", true, 0 };

static int errno_parse(json_t *obj, const struct json_at *at, const char *key, json_t **ret_field, uint32_t *ret,
                       struct km_error *err) {
        json_t *v;
        int r;

        r = json_want_member(obj, at, key, JSON_INTEGER, false, &v, err);
        if (r < 0)
                return r;
        *ret_field = v;
        if (!v) {
                *ret = EPERM;
                return 0;
        }
        if (json_integer_value(v) < 0 || json_integer_value(v) > ERRNO_MAX)
                return json_fail(err, -EINVAL, JSON_AT(at, key), "%" JSON_INTEGER_FORMAT " is not in 0..%d",
                                 json_integer_value(v), ERRNO_MAX);
        *ret = (uint32_t)json_integer_value(v);
        return 0;
}

/* An action field with its errno field ("errnoRet", "defaultErrnoRet"), as an SCMP_ACT_* value. */
static int action_parse(json_t *obj, const struct json_at *at, const char *key, const char *errno_key, uint32_t *ret,
                        struct km_error *err) {
        json_t *v, *errno_v;
        uint32_t errno_ret;
        char buf[64];
        int r;

        r = json_want_member(obj, at, key, JSON_STRING, true, &v, err);
        if (r < 0)
                return r;
        r = errno_parse(obj, at, errno_key, &errno_v, &errno_ret, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(actions); i++) {
                if (!streq(actions[i].name, json_string_value(v)))
                        continue;
                if (actions[i].flags & ACTION_UNSUPPORTED)
                        return json_fail(err, -EOPNOTSUPP, JSON_AT(at, key), "%s is not supported", actions[i].name);
                if (errno_v && !(actions[i].flags & ACTION_TAKES_ERRNO))
                        return json_fail(err, -EINVAL, JSON_AT(at, errno_key), "only valid with SCMP_ACT_ERRNO");
                *ret = actions[i].flags & ACTION_TAKES_ERRNO ? SCMP_ACT_ERRNO(errno_ret) : actions[i].action;
                return 0;
        }
        return json_fail(err, -EINVAL, JSON_AT(at, key), "unknown action \"%s\"", SHOW(json_string_value(v), buf));
}

static int arg_parse(json_t *arg, const struct json_at *at, struct scmp_arg_cmp *ret, struct km_error *err) {
        json_t *index, *value, *value_two, *op;
        char buf[64];
        int r;

        if ((r = json_want(arg, at, JSON_OBJECT, true, err)) < 0 ||
            (r = json_want_member(arg, at, "index", JSON_INTEGER, true, &index, err)) < 0 ||
            (r = json_want_member(arg, at, "value", JSON_INTEGER, true, &value, err)) < 0 ||
            (r = json_want_member(arg, at, "valueTwo", JSON_INTEGER, false, &value_two, err)) < 0 ||
            (r = json_want_member(arg, at, "op", JSON_STRING, true, &op, err)) < 0)
                return r;
        if (json_integer_value(index) < 0 || json_integer_value(index) > 5)
                return json_fail(err, -EINVAL, JSON_AT(at, "index"), "%" JSON_INTEGER_FORMAT " is not in 0..5",
                                 json_integer_value(index));
        /* uint64 in the spec; jansson cannot even read the upper half, so negative is malformed. */
        if (json_integer_value(value) < 0)
                return json_fail(err, -EINVAL, JSON_AT(at, "value"), "must not be negative");
        if (value_two && json_integer_value(value_two) < 0)
                return json_fail(err, -EINVAL, JSON_AT(at, "valueTwo"), "must not be negative");

        *ret = (struct scmp_arg_cmp){
                .arg = (unsigned)json_integer_value(index),
                .datum_a = (scmp_datum_t)json_integer_value(value),
                .datum_b = value_two ? (scmp_datum_t)json_integer_value(value_two) : 0,
        };
        for (size_t i = 0; i < ELEMENTSOF(operators); i++)
                if (streq(operators[i].name, json_string_value(op))) {
                        ret->op = operators[i].op;
                        return 0;
                }
        return json_fail(err, -EINVAL, JSON_AT(at, "op"), "unknown operator \"%s\"", SHOW(json_string_value(op), buf));
}

static bool syscall_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > NAME_MAX_LEN)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

/* One syscalls[] entry: validated whole before anything is added. */
static int rule_add(scmp_filter_ctx ctx, json_t *rule, const struct json_at *at, uint32_t default_action,
                    struct km_error *err) {
        const struct json_at *names_at = JSON_AT(at, "names"), *args_at = JSON_AT(at, "args");
        struct scmp_arg_cmp conds[ARGS_MAX];
        unsigned index_count[6] = {};
        bool repeated = false;
        json_t *names, *args, *v;
        char buf[64];
        uint32_t action;
        size_t i, n_conds = 0;
        int r;

        if ((r = json_want(rule, at, JSON_OBJECT, true, err)) < 0 ||
            (r = json_want_member(rule, at, "names", JSON_ARRAY, true, &names, err)) < 0 ||
            (r = json_want_member(rule, at, "args", JSON_ARRAY, false, &args, err)) < 0 ||
            (r = action_parse(rule, at, "action", "errnoRet", &action, err)) < 0)
                return r;

        json_array_foreach(names, i, v) {
                if ((r = json_want(v, JSON_AT_I(names_at, i), JSON_STRING, true, err)) < 0)
                        return r;
                if (!syscall_name_valid(json_string_value(v)))
                        return json_fail(err, -EINVAL, JSON_AT_I(names_at, i), "\"%s\" is not a syscall name",
                                         SHOW(json_string_value(v), buf));
        }
        if (args && json_array_size(args) > ARGS_MAX)
                return json_fail(err, -EINVAL, args_at, "more than %d conditions", ARGS_MAX);
        json_array_foreach(args, i, v) {
                r = arg_parse(v, JSON_AT_I(args_at, i), &conds[n_conds], err);
                if (r < 0)
                        return r;
                if (index_count[conds[n_conds].arg]++ > 0)
                        repeated = true;
                n_conds++;
        }

        /* libseccomp refuses rules that repeat the default (EACCES); they change nothing. */
        if (action == default_action)
                return 0;

        json_array_foreach(names, i, v) {
                const char *name = json_string_value(v);
                int nr = seccomp_syscall_resolve_name(name);

                /* A newer profile than this libseccomp: the name cannot be filtered anyway. */
                if (nr == __NR_SCMP_ERROR) {
                        log_msg(KM_LOG_DEBUG, "seccomp: skipping unknown syscall %s", name);
                        continue;
                }
                /*
                 * Conditions on distinct arguments all must hold.  Several on one
                 * argument can never all hold as equalities, so runtimes make that
                 * an "any of" with one rule per condition (Docker's personality
                 * entries rely on it).
                 */
                if (repeated) {
                        for (size_t j = 0; j < n_conds && r >= 0; j++)
                                r = seccomp_rule_add_array(ctx, action, nr, 1, &conds[j]);
                } else
                        r = seccomp_rule_add_array(ctx, action, nr, n_conds, conds);
                /* The same conditions with another action earlier: a contradiction in the profile. */
                if (r == -EEXIST)
                        return json_fail(err, -EINVAL, JSON_AT_I(names_at, i), "%s conflicts with an earlier rule",
                                         name);
                if (r < 0) {
                        char where[128];

                        json_at_format(JSON_AT_I(names_at, i), where, sizeof(where));
                        return error_set(err, r, "%s: add a rule for %s", where, name);
                }
        }
        return 0;
}

/* Checked but otherwise unused: the filter is for the native architecture only. */
static int architectures_check(json_t *seccomp, struct km_error *err) {
        const struct json_at *at = JSON_AT(&SECCOMP.at, "architectures");
        json_t *archs, *v;
        char buf[64];
        size_t i;
        int r;

        r = json_want_member(seccomp, &SECCOMP.at, "architectures", JSON_ARRAY, false, &archs, err);
        if (r < 0)
                return r;
        json_array_foreach(archs, i, v) {
                const char *s;

                if ((r = json_want(v, JSON_AT_I(at, i), JSON_STRING, true, err)) < 0)
                        return r;
                s = json_string_value(v);
                bool ok = startswith(s, "SCMP_ARCH_") && strlen(s) > strlen("SCMP_ARCH_") && strlen(s) < 32;
                for (const char *p = s; ok && *p; p++)
                        ok = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
                if (!ok)
                        return json_fail(err, -EINVAL, JSON_AT_I(at, i), "\"%s\" is not an SCMP_ARCH_* name",
                                         SHOW(s, buf));
        }
        return 0;
}

/* The features kubemount cannot honour, refused rather than silently dropped. */
static int unsupported_check(json_t *seccomp, struct km_error *err) {
        json_t *flags, *listener;
        int r;

        r = json_want_member(seccomp, &SECCOMP.at, "flags", JSON_ARRAY, false, &flags, err);
        if (r < 0)
                return r;
        if (flags && json_array_size(flags) > 0)
                return json_fail(err, -EOPNOTSUPP, JSON_AT(&SECCOMP.at, "flags"), "not supported");
        r = json_want_member(seccomp, &SECCOMP.at, "listenerPath", JSON_STRING, false, &listener, err);
        if (r < 0)
                return r;
        if (listener && json_string_length(listener) > 0)
                return json_fail(err, -EOPNOTSUPP, JSON_AT(&SECCOMP.at, "listenerPath"), "not supported");
        return 0;
}

/* Through a memfd, read back. */
int seccomp_export(scmp_filter_ctx ctx, struct sock_fprog *ret, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        fd = memfd_create("kubemount-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return error_set(err, -errno, "seccomp: create a memfd for the filter");
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return error_set(err, r, "seccomp: export the filter");
        if (lseek(fd, 0, SEEK_SET) < 0)
                return error_set(err, -errno, "seccomp: rewind the filter memfd");
        r = read_full_fd(fd, BPF_MAXINSNS * sizeof(struct sock_filter), &buf, &size);
        if (r == -EFBIG)
                return error_set_plain(err, -E2BIG, "seccomp: the filter has more than %d instructions", BPF_MAXINSNS);
        if (r < 0)
                return error_set(err, r, "seccomp: read the filter back");
        if (size == 0 || size % sizeof(struct sock_filter) != 0)
                return error_set_plain(err, -EIO, "seccomp: the exported filter has an odd size (%zu bytes)", size);
        *ret = (struct sock_fprog){
                .len = size / sizeof(struct sock_filter),
                .filter = (struct sock_filter *)TAKE_PTR(buf),
        };
        return 0;
}

int seccomp_context_new(uint32_t default_action, scmp_filter_ctx *ret, struct km_error *err) {
        scmp_filter_ctx ctx;
        int r;

        if (dlopen_libseccomp() < 0)
                return error_set_plain(err, -EOPNOTSUPP, "seccomp: cannot load libseccomp (libseccomp.so.2)");
        ctx = seccomp_init(default_action);
        if (!ctx)
                return error_set(err, -ENOMEM, "seccomp: create a filter context");
        /* The launcher sets no_new_privs itself, when the spec asks for it. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0) {
                seccomp_release(ctx);
                return error_set(err, r, "seccomp: turn off libseccomp's no_new_privs");
        }
        *ret = ctx;
        return 0;
}

int seccomp_compile(json_t *seccomp, struct seccomp_program *ret, struct km_error *err) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        json_t *syscalls, *rule;
        uint32_t default_action;
        size_t i;
        int r;

        if ((r = json_want(seccomp, &SECCOMP.at, JSON_OBJECT, true, err)) < 0 ||
            (r = action_parse(seccomp, &SECCOMP.at, "defaultAction", "defaultErrnoRet", &default_action, err)) < 0 ||
            (r = architectures_check(seccomp, err)) < 0 || (r = unsupported_check(seccomp, err)) < 0 ||
            (r = json_want_member(seccomp, &SECCOMP.at, "syscalls", JSON_ARRAY, false, &syscalls, err)) < 0)
                return r;

        if ((r = seccomp_context_new(default_action, &ctx, err)) < 0)
                return r;
        /* A binary search over syscall numbers: hundreds of names cost every syscall a linear scan otherwise. */
        (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

        json_array_foreach(syscalls, i, rule) {
                r = rule_add(ctx, rule, JSON_AT_I(JSON_AT(&SECCOMP.at, "syscalls"), i), default_action, err);
                if (r < 0)
                        return r;
        }
        return seccomp_export(ctx, &ret->prog, err);
}

void seccomp_program_done(struct seccomp_program *p) {
        if (!p)
                return;
        free(p->prog.filter);
        p->prog = (struct sock_fprog){};
}

int seccomp_filter_load(const struct seccomp_program *p) {
        /* Only syscalls here: this runs between fork and exec. */
        if (!p || !p->prog.filter || p->prog.len == 0)
                return -EINVAL;
        return sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)&p->prog);
}
