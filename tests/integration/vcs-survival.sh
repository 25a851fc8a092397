#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 10 for VCS containers: the containerized kubelet (own mount
# namespace, and here its own pid namespace and cgroups, as fuse-survival.sh
# makes them) runs `kubemount --host-mount-ns /rootfs/proc/1/ns/mnt run
# --detach` of a bindfs daemon, the agent already running in the host.  Then
# every process of the kubelet's cgroup (so its whole pid namespace) is
# killed: the FUSE mount keeps serving reads in the host and in a pod, the
# VCS container is neither in the kubelet's cgroup nor its pid namespace.
# Then kill -9 of the container's PID 1: ENOTCONN, and kubemount gc cleans it.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by a shell in the container
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"

cgroup_v2

node_up
pod_up a
NL=$'\n'
vcs_setup
vcs_agent_start

P=$KUBELET_DIR/plugins/kubemount-test
C=/var/lib/kubelet/plugins/kubemount-test
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~csi/src
mkdir -p "$P/k" "$V"
echo "served by a VCS" >"$V/data"

# The kubelet container sees the host's / at /rootfs.  The state dir (the
# agent's socket) and the image, at their host paths, as a real deployment
# would mount /run/kubemount and the image into the kubelet's container.
mkdir -p "$KUBEMOUNT_STATE_DIR" # there already if the agent started
in_kubelet sh -c 'for d; do mkdir -p "$d" && mount --bind "/rootfs$d" "$d" || exit 1; done' sh \
        "$KUBEMOUNT_STATE_DIR" "$ROOTFS" ||
        { echo "Bail out! cannot bind the state dir and the image into the kubelet container"; exit 1; }
is "$(in_kubelet readlink /rootfs/proc/1/ns/mnt)" "$(readlink /proc/1/ns/mnt)" \
        "sanity: /rootfs/proc/1/ns/mnt in the kubelet container is the host namespace"

# The kubelet's cgroups, like a container runtime makes them.
test_cgroup kubelet

# run_kubelet CMD: CMD in the kubelet container, in the kubelet's cgroups and
# a pid namespace of its own (unshare's child is its PID 1), then it idles.
run_kubelet() {
        spawn --in kubelet sh -c 'echo $$ >"$1/cgroup.procs"; [ -n "$2" ] && echo $$ >"$2/cgroup.procs"; shift 2
                exec unshare --pid --fork --kill-child -- sh -c "\"\$@\" >/tmp/out 2>&1; echo \"exit \$?\" >>/tmp/out; exec sleep infinity" sh "$@"' \
                sh "$TEST_CG" "$TEST_CG_V1" "$@"
}

run_kubelet timeout 30 "$KUBEMOUNT" --host-mount-ns /rootfs/proc/1/ns/mnt run --detach --name kvcs --rootfs "$ROOTFS" \
        --allow-mount fuse --allow-mount fuse.bindfs --mount-target "$P/k" \
        --mount "$V:/srv" --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- bindfs -f /srv "$C/k"
kubelet=$SPAWNED
if wait_for 10 is_mounted host "$P/k"; then ok "kubelet: run --detach of bindfs; the mount is in the host"; else
        not_ok "kubelet: run --detach of bindfs; the mount is in the host"
        diag "$(in_kubelet cat /tmp/out 2>&1)"
fi
wait_for 5 in_kubelet grep -q '^exit' /tmp/out
is "$(in_kubelet cat /tmp/out 2>&1)" "kvcs${NL}exit 0" "kubelet: the CLI printed the name and exited 0"
is "$(cat "$P/k/data" 2>&1)" "served by a VCS" "host: reads through the VCS mount"
is "$(in_pod a cat "$P/k/data" 2>&1)" "served by a VCS" "pod: reads through the VCS mount"
vpid=$(vcs_pid kvcs)
check "ps (host): kvcs is running with a live PID 1 ($vpid)" kill -0 "$vpid"
# unshare made the pid namespace its child is PID 1 of.
kubelet_pidns=$(readlink "/proc/$kubelet/ns/pid_for_children")
holds "the VCS container is not in the kubelet's pid namespace" test -n "$vpid" -a "$(readlink "/proc/$vpid/ns/pid")" != "$kubelet_pidns"
holds "... nor in the kubelet's cgroup" eval '[[ -n $vpid && $(cat "/proc/$vpid/cgroup") != *km-test-kubelet* ]]'
holds "... nor in the kubelet's mount namespace" test -n "$vpid" -a "$(readlink "/proc/$vpid/ns/mnt")" != "$(in_kubelet readlink /proc/self/ns/mnt)"

check "every process of the kubelet's cgroup is gone" cgroup_kill "$TEST_CG" "$TEST_CG_V1"
wait "$kubelet" 2>/dev/null
is "$?" 137 "... the kubelet's own process died of SIGKILL"
check "the VCS container survived" kill -0 "$vpid"
is "$(vcs_status kvcs)" "running" "ps: kvcs is running"
is "$(cat "$P/k/data" 2>&1)" "served by a VCS" "host: the mount keeps serving reads"
is "$(in_pod a cat "$P/k/data" 2>&1)" "served by a VCS" "pod: the mount keeps serving reads"
echo more >>"$V/data"
is "$(tail -n1 "$P/k/data" 2>&1)" "more" "... and sees new data"

# The kubelet comes back (a new process in its container) and checks on it.
run in_kubelet timeout 30 "$KUBEMOUNT" --host-mount-ns /rootfs/proc/1/ns/mnt ps
like "$OUT" "kvcs[[:space:]]+${vpid}[[:space:]]+running" "a new kubelet process: ps lists kvcs running"

check "kill -9 of the VCS container's PID 1" kill -9 "$vpid"
vcs_wait_status kvcs '^exited'
is "$(vcs_status kvcs)" "exited 137" "ps: kvcs exited 137"
run stat "$P/k/data"
like "$ERR" "not connected" "the mount it left is dead (ENOTCONN)"
run in_kubelet timeout 30 "$KUBEMOUNT" --host-mount-ns /rootfs/proc/1/ns/mnt --kubelet-dir="$KUBELET_DIR" gc
is "$RC" 0 "kubelet: gc exits 0"
like "$OUT" "$P/k" "... and reports the dead mount"
check_fails "... gone from the host" is_mounted host "$P/k"
check_fails "... gone from the pod" is_mounted pod:a "$P/k"
check_fails "... gone from the kubelet" is_mounted kubelet "$P/k"
check "rm kvcs" km rm kvcs

vcs_cleanup
check "the kubelet's cgroups can go" rmdir "$TEST_CG" ${TEST_CG_V1:+"$TEST_CG_V1"}
node_down "vcs survival"
km_cgroups_remove
done_testing
