/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The type -> VCS image mapping from outside (route/vcs-map.c).  The first
 * byte picks the parser: even, the rest is a vcs.d document (or a ConfigMap's
 * mappings key) for vcs_map_add_json; odd, the rest is command-line values cut
 * at NUL bytes ("TYPE=REF" or "--TYPE_mount_container=REF") for vcs_map_load.
 *
 * On failure: a negative errno, err set with that code and a message naming
 * the source, the table as it was.  On success: one entry per type, sorted,
 * each type of [A-Za-z0-9][A-Za-z0-9._+-]* without "..", an image unless the
 * policy is host, a daemon for every fuse.* type, the source recorded; the
 * command line maps no privileged entry.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-check.h"
#include "vcs-map.h"

#define MAX_INPUT (64 * 1024)
#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const struct vcs_map *m, const char *source) {
        for (size_t i = 0; i < m->n; i++) {
                const struct vcs_entry *e = &m->entries[i];

                check(e->type && e->type[0] && strlen(e->type) <= 64);
                check(strspn(e->type, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") ==
                      strlen(e->type));
                check(e->type[0] != '.' && e->type[0] != '-' && !strstr(e->type, ".."));
                check(i == 0 || strcmp(m->entries[i - 1].type, e->type) < 0);
                check(e->image || e->policy == VCS_POLICY_HOST);
                check(!e->image || e->image[0]);
                check(e->daemon || strncmp(e->type, "fuse.", 5) != 0);
                check(e->source && streq(e->source, source));
                check(vcs_map_find(m, e->type) == e);
        }
}

static void fuzz_json(const uint8_t *data, size_t size) {
        struct vcs_map *m = vcs_map_new();
        struct km_error err = {};
        json_t *doc;
        int r;

        check(m);
        doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
        if (doc) {
                r = vcs_map_add_json(m, doc, "doc", &err);
                if (r < 0) {
                        check(err.code == r);
                        check(strncmp(err.message, "doc", 3) == 0);
                        check(m->n == 0);
                } else
                        check_table(m, "doc");
                json_decref(doc);
        }
        vcs_map_free(m);
}

static void fuzz_command_line(const uint8_t *data, size_t size) {
        char *argv[MAX_WORDS + 2];
        struct vcs_map *m = NULL;
        struct km_error err = {};
        int argc, r;
        char *buf = fuzz_argv(data, size, argv, MAX_WORDS, &argc);
        struct vcs_map_sources s = {
                .command_line = argv + 1,
                .n_command_line = (size_t)argc - 1,
                .no_defaults = true,
        };

        r = vcs_map_load(&s, &m, &err);
        if (r < 0) {
                check(!m && err.code == r);
                check(r == -ENOMEM || strncmp(err.message, "command line: ", 14) == 0);
                check(!strchr(err.message, '\n'));
        } else {
                check(m && m->n == (size_t)argc - 1 && m->n_warnings == 0);
                check_table(m, "command line");
                for (size_t i = 0; i < m->n; i++)
                        check(m->entries[i].policy == VCS_POLICY_CONTAINER && !m->entries[i].privileged);
        }
        vcs_map_free(m);
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1 || size > MAX_INPUT)
                return 0;
        if (data[0] % 2 == 0)
                fuzz_json(data + 1, size - 1);
        else
                fuzz_command_line(data + 1, size - 1);
        return 0;
}
