/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * caps_from_name/caps_to_name over libcap's table, caps_get_current against
 * /proc/self/status, and caps_apply in forked children.  Applying needs
 * CAP_SETPCAP and the capabilities it keeps: those tests skip without them.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "caps.h"
#include "test-helpers.h"

#define BIT(c) (1ULL << (c))

/* ---- names ---- */

static void test_names_round_trip(void **state) {
        for (int cap = 0; cap <= CAP_LAST_CAP; cap++) {
                const char *name = caps_to_name(cap);
                char lower[64];
                size_t i;

                if (!name)
                        fail_msg("no name for capability %d", cap);
                assert_true(startswith(name, "CAP_"));
                for (i = 0; name[i] && i + 1 < sizeof(lower); i++) {
                        assert_false(name[i] >= 'a' && name[i] <= 'z');
                        lower[i] = name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i];
                }
                lower[i] = '\0';
                assert_int_equal(caps_from_name(name), cap);
                assert_int_equal(caps_from_name(lower), cap);
                /* Static storage: the same pointer every time. */
                assert_ptr_equal(caps_to_name(cap), name);
        }
        assert_string_equal(caps_to_name(CAP_SYS_ADMIN), "CAP_SYS_ADMIN");
        assert_string_equal(caps_to_name(CAP_CHOWN), "CAP_CHOWN");
        assert_int_equal(caps_from_name("CAP_NET_BIND_SERVICE"), CAP_NET_BIND_SERVICE);
        assert_int_equal(caps_from_name("Cap_Sys_Admin"), CAP_SYS_ADMIN);
        assert_null(caps_to_name(-1));
        assert_null(caps_to_name(63));
        assert_null(caps_to_name(64));
        assert_null(caps_to_name(1000));
}

static void test_names_junk(void **state) {
        static const char *const junk[] = {
                "",
                "CAP_",
                "cap",
                "CHOWN",
                "SYS_ADMIN",
                "CAP_NOPE",
                "CAP_SYS_ADMIN2",
                "12",
                "0x3",
                "-1",
                "all",
                "ALL",
                "=ep",
                "cap_chown ",
                " cap_chown",
                "cap_chown\n",
                "cap_chown,cap_kill",
                "cap_chown+ep",
                "CAP_CHOWN\xc3\xa9",
                "CAP_63",
                "cap_40",
                "CAP_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        };

        assert_int_equal(caps_from_name(NULL), -EINVAL);
        for (size_t i = 0; i < ELEMENTSOF(junk); i++)
                if (caps_from_name(junk[i]) != -EINVAL)
                        fail_msg("\"%s\" was taken as %d", junk[i], caps_from_name(junk[i]));
}

/* ---- reading the sets ---- */

/* The hex mask of a "CapXxx:" line of /proc/self/status. */
static uint64_t status_mask(const char *key) {
        char line[256];
        uint64_t v = 0;
        bool found = false;
        FILE *f = fopen("/proc/self/status", "re");

        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (startswith(line, key) && line[strlen(key)] == ':') {
                        assert_int_equal(sscanf(line + strlen(key) + 1, "%" SCNx64, &v), 1);
                        found = true;
                }
        fclose(f);
        if (!found)
                fail_msg("no %s in /proc/self/status", key);
        return v;
}

static void test_get_current_matches_proc(void **state) {
        struct caps_sets s = { .bounding = 0xdead };

        assert_int_equal(caps_get_current(&s), 0);
        assert_int_equal(s.effective, status_mask("CapEff"));
        assert_int_equal(s.permitted, status_mask("CapPrm"));
        assert_int_equal(s.inheritable, status_mask("CapInh"));
        assert_int_equal(s.bounding, status_mask("CapBnd"));
        assert_int_equal(s.ambient, status_mask("CapAmb"));
}

/* ---- applying, in children ---- */

/*
 * Whether this process may set up the sets the tests ask for; if not, the
 * test notes why and passes.  Not skip(): cmocka 1.1.5's TAP output says
 * "not ok N # SKIP", which meson counts as a failure.
 */
static bool can_apply(uint64_t needed) {
        struct caps_sets cur;

        assert_int_equal(caps_get_current(&cur), 0);
        if (!(cur.effective & BIT(CAP_SETPCAP)) || (cur.permitted & needed) != needed ||
            (cur.bounding & needed) != needed) {
                test_note("SKIP: needs CAP_SETPCAP and %#" PRIx64 " (have effective %#" PRIx64 ", permitted %#" PRIx64
                          ")",
                          needed, cur.effective, cur.permitted);
                return false;
        }
        return true;
}

#define CHILD_CHECK(cond)                                                                                              \
        do {                                                                                                           \
                if (!(cond)) {                                                                                         \
                        dprintf(fd, "line %d: %s (errno %d)", __LINE__, #cond, errno);                                 \
                        return 1;                                                                                      \
                }                                                                                                      \
        } while (0)

/* Runs fn(fd) in a forked child; a nonzero exit fails the test with what fn wrote to fd. */
static void run_child(int (*fn)(int fd)) {
        char msg[1024];
        int pipefd[2], status;
        ssize_t n;
        pid_t pid;

        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(pipefd[0]);
                _exit(fn(pipefd[1]));
        }
        close(pipefd[1]);
        n = read(pipefd[0], msg, sizeof(msg) - 1);
        msg[n > 0 ? n : 0] = '\0';
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("child (status 0x%x): %s", status, msg);
}

#define KEPT (BIT(CAP_SYS_ADMIN) | BIT(CAP_CHOWN))
#define BOUND (KEPT | BIT(CAP_SETPCAP))

static int child_apply(int fd) {
        /* Bit 63 is beyond any kernel: ignored. */
        struct caps_sets want = {
                .bounding = BOUND | BIT(63),
                .effective = KEPT | BIT(63),
                .permitted = KEPT,
                .inheritable = 0,
                .ambient = 0,
        };
        struct caps_sets got;
        struct km_error err = {};

        if (caps_apply(&want, &err) < 0) {
                dprintf(fd, "caps_apply: %s", err.message);
                return 1;
        }
        CHILD_CHECK(caps_get_current(&got) == 0);
        CHILD_CHECK(got.bounding == BOUND);
        CHILD_CHECK(got.effective == KEPT);
        CHILD_CHECK(got.permitted == KEPT);
        CHILD_CHECK(got.inheritable == 0);
        CHILD_CHECK(got.ambient == 0);
        CHILD_CHECK(status_mask("CapBnd") == BOUND);
        CHILD_CHECK(status_mask("CapEff") == KEPT);
        CHILD_CHECK(status_mask("CapPrm") == KEPT);
        CHILD_CHECK(status_mask("CapInh") == 0);
        CHILD_CHECK(status_mask("CapAmb") == 0);
        return 0;
}

static void test_apply(void **state) {
        if (!can_apply(BOUND))
                return;
        run_child(child_apply);
}

static int child_apply_ambient(int fd) {
        struct caps_sets want = {
                .bounding = BOUND,
                .effective = KEPT,
                .permitted = KEPT,
                .inheritable = KEPT,
                .ambient = BIT(CAP_CHOWN),
        };
        struct caps_sets got;
        struct km_error err = {};

        if (caps_apply(&want, &err) < 0) {
                dprintf(fd, "caps_apply: %s", err.message);
                return 1;
        }
        CHILD_CHECK(caps_get_current(&got) == 0);
        CHILD_CHECK(got.inheritable == KEPT);
        CHILD_CHECK(got.ambient == BIT(CAP_CHOWN));
        CHILD_CHECK(status_mask("CapAmb") == BIT(CAP_CHOWN));

        /* Applying again clears what is no longer asked for. */
        want.ambient = 0;
        if (caps_apply(&want, &err) < 0) {
                dprintf(fd, "caps_apply again: %s", err.message);
                return 1;
        }
        CHILD_CHECK(status_mask("CapAmb") == 0);
        CHILD_CHECK(status_mask("CapInh") == KEPT);
        return 0;
}

static void test_apply_ambient(void **state) {
        if (!can_apply(BOUND))
                return;
        run_child(child_apply_ambient);
}

static int child_ambient_needs_inheritable(int fd) {
        struct caps_sets want = {
                .bounding = BOUND,
                .effective = KEPT,
                .permitted = KEPT,
                .inheritable = BIT(CAP_CHOWN),
                .ambient = BIT(CAP_SYS_ADMIN) | BIT(CAP_CHOWN),
        };
        struct km_error err = {};
        int r = caps_apply(&want, &err);

        CHILD_CHECK(r == -EPERM);
        CHILD_CHECK(err.code == -EPERM);
        if (strcmp(err.message, "capabilities: raise CAP_SYS_ADMIN in the ambient set: Operation not permitted") != 0) {
                dprintf(fd, "unexpected message: %s", err.message);
                return 1;
        }
        /* The steps before it happened, CAP_CHOWN (a lower number) included. */
        CHILD_CHECK(status_mask("CapAmb") == BIT(CAP_CHOWN));
        CHILD_CHECK(status_mask("CapBnd") == BOUND);
        return 0;
}

static void test_apply_ambient_needs_inheritable(void **state) {
        if (!can_apply(BOUND))
                return;
        run_child(child_ambient_needs_inheritable);
}

static int child_bounding_needs_setpcap(int fd) {
        struct caps_sets first = {
                .bounding = BOUND,
                .effective = KEPT,
                .permitted = KEPT,
        };
        struct caps_sets second = first;
        struct km_error err = {};
        int r;

        if (caps_apply(&first, &err) < 0) {
                dprintf(fd, "caps_apply: %s", err.message);
                return 1;
        }
        /* CAP_SETPCAP is gone from the effective set now: shrinking the bounding set fails. */
        second.bounding = KEPT;
        r = caps_apply(&second, &err);
        CHILD_CHECK(r == -EPERM);
        if (strcmp(err.message, "capabilities: drop CAP_SETPCAP from the bounding set: Operation not permitted") != 0) {
                dprintf(fd, "unexpected message: %s", err.message);
                return 1;
        }
        /* Regaining a dropped permitted capability fails at the capset step. */
        second.bounding = BOUND;
        second.permitted = second.effective = KEPT | BIT(CAP_KILL);
        r = caps_apply(&second, &err);
        CHILD_CHECK(r == -EPERM);
        if (!strstr(err.message, "capabilities: set the effective, permitted and inheritable sets: ")) {
                dprintf(fd, "unexpected message: %s", err.message);
                return 1;
        }
        return 0;
}

static void test_apply_steps_fail_with_their_name(void **state) {
        if (!can_apply(BOUND))
                return;
        run_child(child_bounding_needs_setpcap);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names_round_trip),
                cmocka_unit_test(test_names_junk),
                cmocka_unit_test(test_get_current_matches_proc),
                cmocka_unit_test(test_apply),
                cmocka_unit_test(test_apply_ambient),
                cmocka_unit_test(test_apply_ambient_needs_inheritable),
                cmocka_unit_test(test_apply_steps_fail_with_their_name),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
