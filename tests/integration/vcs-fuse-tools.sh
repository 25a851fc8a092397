#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fuse-tools image that scripts/build-images made (images/fuse-tools, a
# Debian root filesystem as an OCI layout in $KM_BUILD_DIR/images): imported
# into the store, its tools run from it, and a bindfs FUSE volume made by a
# detached container from it reaches the host and a pod.  scripts/test builds
# the image first; run alone without it, the test bails out saying so.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images fuse-tools
node_sandbox "$@"

node_up
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store

import_images fuse-tools
run km images --json
like "$OUT" '"ref": "docker.io/library/fuse-tools:latest"' "named by the layout: fuse-tools:latest"
# (exit statuses vary: squashfuse prints its usage with 254; only "cannot run" counts)
for tool in "bindfs --version" "sshfs --version" "squashfuse --version" "mkfs.ext4 -V" "mkfs.xfs -V" "fusermount3 -V"; do
        run km run --image fuse-tools -- $tool
        ((RC != 125 && RC != 126 && RC != 127)) && [[ $OUT$ERR != *"not found"* ]] && ok "the image runs $tool (exit $RC)" ||
                { not_ok "the image runs $tool"; diag "exit $RC" "$OUT" "$ERR"; }
done

# A volume of the pod's, served by bindfs from the image in a detached container.
V=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/v
mkdir -p "$V" "$KUBELET_DIR/export"
echo "from the fuse-tools image" >"$KUBELET_DIR/export/data"
pod_up a
# Unprivileged (the default): bindfs's mount(2) is made by the broker, which allows it by --allow-mount.
check "run -d bindfs from the image" km run -d --name fuse-v --image fuse-tools \
        --allow-mount fuse --allow-mount fuse.bindfs --mount-target "$V" --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- \
        bindfs -f /var/lib/kubelet/export /var/lib/kubelet/pods/uid-a/volumes/kubernetes.io~csi/v
wait_for 10 is_mounted host "$V"
is "$(cat "$V/data" 2>&1)" "from the fuse-tools image" "the host reads the volume"
is "$(in_pod a cat "$V/data" 2>&1)" "from the fuse-tools image" "the pod reads it"
check "stop" km stop fuse-v
wait_for 5 sh -c "! grep -q ' $V ' /proc/1/mountinfo"
check_fails "... the volume is gone from the host" is_mounted host "$V"
check "rm" km rm fuse-v

# The broker across an agent restart: the container mounts through the first agent, unmounts
# through the next, which took the listener back from the container's PID 1 and the list of
# what the broker mounted for it from its state.
T=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~empty-dir/t
mkdir -p "$T"
rm -f "$KUBELET_DIR/go" "$KUBELET_DIR/gone"
check "run -d a client that mounts a tmpfs, then unmounts it when told" km run -d --name late --image fuse-tools \
        --allow-mount tmpfs --mount-target "$T" --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- sh -c \
        'mount -t tmpfs late /var/lib/kubelet/pods/uid-a/volumes/kubernetes.io~empty-dir/t && echo mounted
         while [ ! -e /var/lib/kubelet/gone ]; do sleep 0.1; done
         umount /var/lib/kubelet/pods/uid-a/volumes/kubernetes.io~empty-dir/t && echo unmounted; sleep 60'
wait_for 10 is_mounted host "$T"
check "the broker mounts for it" is_mounted host "$T"
AGENTS=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids
kill -TERM $AGENTS
wait_for 10 sh -c "! kill -0 ${AGENTS//$'\n'/ } 2>/dev/null"
check "a new agent (ps starts it)" km ps
touch "$KUBELET_DIR/gone"
wait_for 10 sh -c "! grep -q ' $T ' /proc/self/mountinfo"
check_fails "after an agent restart, the broker unmounts it for the container" is_mounted host "$T"
run km logs late
# Whole lines: "unmounted" holds "mounted".
like "$OUT" $'(^|\n)mounted(\n|$)' "the client saw its mount(2) succeed"
like "$OUT" $'(^|\n)unmounted(\n|$)' "... and its umount"
# The new agent took the adopted container's id range from its config.json: a new container gets another.
late=$(km exec late -- cat /proc/self/uid_map | awk '$1 == 0 { print $2 }')
run km run --image fuse-tools -- cat /proc/self/uid_map
new=$(awk '$1 == 0 { print $2 }' <<<"$OUT")
like "$late:$new" '^[0-9]+:[0-9]+$' "the adopted container's root ($late) and a new one's ($new)"
check "... are in different ranges after the agent's restart" test "$late" != "$new"
check "rm -f" km rm -f late
rm -f "$KUBELET_DIR/gone"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "vcs-fuse-tools"
done_testing
