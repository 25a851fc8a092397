#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A km_host is safe in multi-threaded callers: hostns-threads.c mounts
# from worker threads into the host namespace while another thread checks
# that it stays in the caller's namespace; run from a namespace of its own.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

PROG=${HOSTNS_THREADS:-}
[[ -n $PROG && -x $PROG ]] || bail_out "no hostns-threads binary: set HOSTNS_THREADS (meson test sets it)"

node_up --no-kubelet
D=$KUBELET_DIR/pods/uid-1/volumes/threads
mkdir -p "$D"/w{0,1,2}
run unshare --mount --propagation slave "$PROG" /proc/1/ns/mnt "$D"
is "$RC" 0 "worker threads mount in the host namespace; no other thread moves"
like "$OUT" "0 failures" "... 600 host mounts, no failure"
[[ -n $ERR ]] && diag "$ERR"
is "$(mounts_in host "$D" | wc -l)" 0 "... and none is left in the host"
node_down "hostns threads"
done_testing
