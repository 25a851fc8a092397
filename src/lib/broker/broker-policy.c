/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount broker's decisions (see broker-policy.h). */
#include "broker-policy.h"

int broker_decide(const struct broker_policy *p, const struct broker_call *c, struct broker_verdict *v) {
        (void)p;
        (void)c;
        *v = (struct broker_verdict){ .action = BROKER_DENY, .error = EPERM, .fuse_fd = -1 };
        snprintf(v->why, sizeof(v->why), "not implemented yet");
        return 0;
}

void broker_verdict_done(struct broker_verdict *v) {
        free(v->data);
        v->data = NULL;
}

char *broker_describe(const struct broker_call *c, const struct broker_verdict *v) {
        (void)c;
        (void)v;
        return NULL;
}
