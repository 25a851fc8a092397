/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.json from outside: spec_parse on arbitrary bytes.
 *
 * On failure: a negative errno, no spec, and a message that names
 * config.json.  On success, what the launcher relies on: a non-empty
 * command, KEY=VALUE environment, a mount namespace, absolute and
 * simplified paths without ".." (cwd, mount destinations, devices, masked
 * and read-only paths), devices below /dev, mount data free of empty items
 * and control characters and within a page, soft <= hard rlimits, and a
 * hostname only with a UTS namespace.  The spec is freed (leaks are
 * findings under ASan).
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>

#include "fuzz-check.h"
#include "seccomp-filter.h"
#include "spec.h"

#define MAX_INPUT (1024 * 1024 + 16) /* a little past spec_parse's limit, to reach its refusal */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Absolute, no "//", no trailing '/', no ".." component. */
static void check_path(const char *p) {
        size_t n;

        check(p && p[0] == '/');
        n = strlen(p);
        check(n == 1 || p[n - 1] != '/');
        check(!strstr(p, "//"));
        for (const char *c = p; (c = strstr(c, "/..")); c++)
                check(c[3] != '\0' && c[3] != '/');
}

static void check_strv_paths(char *const *v) {
        check(v);
        for (size_t i = 0; v[i]; i++)
                check_path(v[i]);
}

static void check_spec(const struct container_spec *s) {
        static const unsigned long propagations[] = { 0, MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE };

        check(s->args && s->args[0] && s->args[0][0]);
        check(s->env);
        for (size_t i = 0; s->env[i]; i++)
                check(s->env[i][0] != '=' && strchr(s->env[i], '='));
        check_path(s->cwd);
        check(strncmp(s->cwd, "/proc", 5) != 0 || (s->cwd[5] != '\0' && s->cwd[5] != '/'));
        check(s->root_path && s->root_path[0]);
        check(s->namespaces & CLONE_NEWNS);
        check(!(s->namespaces & (CLONE_NEWUSER | CLONE_NEWTIME)));
        check(!s->netns_path || (s->netns_path[0] == '/' && !(s->namespaces & CLONE_NEWNET)));
        check(!s->hostname || (s->namespaces & CLONE_NEWUTS));
        for (size_t i = 0; i < s->n_rlimits; i++)
                check(s->rlimits[i].soft <= s->rlimits[i].hard);
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct spec_mount *m = &s->mounts[i];
                bool known = false;

                check_path(m->destination);
                for (size_t k = 0; k < sizeof(propagations) / sizeof(propagations[0]); k++)
                        known = known || (m->propagation & ~(unsigned long)MS_REC) == propagations[k];
                check(known);
                if (m->data) {
                        check(m->data[0] && m->data[0] != ',' && strlen(m->data) <= 4095);
                        check(m->data[strlen(m->data) - 1] != ',' && !strstr(m->data, ",,"));
                        for (const unsigned char *c = (const unsigned char *)m->data; *c; c++)
                                check(*c >= 0x20 && *c != 0x7f);
                }
        }
        for (size_t i = 0; i < s->n_devices; i++) {
                const struct spec_device *d = &s->devices[i];

                check_path(d->path);
                check(strncmp(d->path, "/dev/", 5) == 0);
                check(strchr("cbup", d->type) && d->type);
                check((d->mode & ~0777) == 0);
        }
        check_strv_paths(s->masked_paths);
        check_strv_paths(s->readonly_paths);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct container_spec *s = NULL;
        struct km_error err = {};
        int r;

        if (size > MAX_INPUT)
                return 0;
        /* data is not NUL-terminated: spec_parse must stay within size. */
        r = spec_parse((const char *)data, size, &s, &err);
        if (r < 0) {
                check(!s);
                check(err.code == r);
                check(strncmp(err.message, "config.json", 11) == 0);
                return 0;
        }
        check(r == 0 && s);
        check_spec(s);
        /* The seccomp profile is the agent's next parser of the same input. */
        if (s->seccomp) {
                struct seccomp_program p = {};
                struct km_error serr = {};
                r = seccomp_compile(s->seccomp, &p, &serr);
                check(r < 0 ? serr.code == r && !p.prog.filter : p.prog.len > 0 && p.prog.filter);
                seccomp_program_done(&p);
        }
        spec_free(s);
        return 0;
}
