#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 11, points 1 and 2: a FUSE mount the kubelet asks for with
# `kubemount mount -t fuse.bindfs SOURCE TARGET`, served by the fuse-tools
# image in a container named after the mount that lives as long as the
# mount: the host and a pod read it; the kubelet's container dies and the
# volume still serves; an agent restart keeps the association; `kubemount
# umount` ends the container; a umount the kubelet made with its own umount
# leaves an orphan that gc (and the agent's timer) removes; ps shows the
# digest and the target; a mount already being served is refused; the
# nsenter shim's routed mount and umount take the same path.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images fuse-tools
node_sandbox "$@"

node_up
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
import_images fuse-tools
pod_up a
KM_K=("$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" --host-mount-ns=/rootfs/proc/1/ns/mnt)
# The kubelet's own view of the environment: the state dir and the store are the host's.
in_k() { in_kubelet env KUBEMOUNT_STATE_DIR="$KUBEMOUNT_STATE_DIR" KUBEMOUNT_STORE_DIR="$KUBEMOUNT_STORE_DIR" "$@"; }
ps_field() { # NAME FIELD: a field of NAME's ps --json entry
        km ps -a --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d if isinstance(d, list) else d.get("containers", []):
    if c.get("name") == sys.argv[1]:
        v = c
        for k in sys.argv[2].split("."):
            v = v.get(k) if isinstance(v, dict) else None
        print(v if v is not None else "")' "$1" "$2"
}
route_name() { # TARGET: the container that serves it (as route_container_name() names it)
        km ps -a --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d if isinstance(d, list) else d.get("containers", []):
    if (c.get("mount") or {}).get("target") == sys.argv[1]:
        print(c["name"])' "$1"
}

mkdir -p "$KUBELET_DIR/export" "$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/v"
echo "served by a VCS container" >"$KUBELET_DIR/export/data"
V=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/v

# 1. The mount, from the kubelet's container, policy container (--vcs-image).
run in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest -v mount -t fuse.bindfs "$KUBELET_DIR/export" "$V"
is "$RC" 0 "kubemount mount -t fuse.bindfs from the kubelet's container: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
like "$ERR" "in container mount-v-" "-v names the container"
is "$(cat "$V/data" 2>&1)" "served by a VCS container" "the host reads the volume"
is "$(in_pod a cat "$V/data" 2>&1)" "served by a VCS container" "a pod reads it"
NAME=$(route_name "$V")
like "$NAME" "^mount-v-[0-9a-f]{16}$" "ps: one container serves $V, named after it ($NAME)"
like "$(ps_field "$NAME" digest)" "^sha256:[0-9a-f]{64}$" "ps --json: its image digest"
is "$(ps_field "$NAME" image)" "docker.io/library/fuse-tools:latest" "ps --json: its image"
like "$(km ps 2>&1)" "$V" "ps: the target it serves"

# 2. A second mount of the same target is refused, the first keeps serving.
run in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs "$KUBELET_DIR/export" "$V"
is "$RC" 32 "a second mount of $V: exit 32"
like "$ERR" "already mounted|serving it already" "... it says why"
is "$(grep -c " $V " /proc/self/mountinfo)" 1 "... and nothing was stacked"

# 2a. A routed mount at (or below) a running `run` container's --mount-target is refused, naming
# it: no two containers share a mount's place (the run container's broker could unmount it).
mkdir -p "$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/held/sub"
HELD=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/held
check "a run container holds --mount-target $HELD" km run -d --name holder --image fuse-tools:latest \
        --mount-target "$HELD" -- sleep 600
for t in "$HELD" "$HELD/sub"; do
        run in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs "$KUBELET_DIR/export" "$t"
        is "$RC" 32 "a routed mount at $t, the run container's target or below it, is refused (exit 32)"
        like "$ERR" "container holder has $HELD" "... naming the container and its target"
        check_fails "... nothing is mounted at $t" is_mounted host "$t"
done
check "... the run container's rm -f" km rm -f holder

# 2b. The mount(8) is its container's command, and config.json, state.json and ps show its argv
# only masked: a source with a URL's password (a directory here) keeps the password out of them.
SECRET_DIR="$KUBELET_DIR/s3/x:/"
mkdir -p "$SECRET_DIR/u:Hunter2Secret@h" "$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/w"
W=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi/w
echo secret-source >"$SECRET_DIR/u:Hunter2Secret@h/data"
run in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs "$SECRET_DIR/u:Hunter2Secret@h" "$W"
is "$RC" 0 "a mount whose source holds a URL's password: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
is "$(cat "$W/data" 2>&1)" "secret-source" "... it serves"
W_NAME=$(route_name "$W")
like "$(ps_field "$W_NAME" command)" "mount.*fuse.bindfs.*<masked>" "ps --json: its command is the mount(8), masked"
is "$(grep -rl Hunter2Secret "$KUBEMOUNT_STATE_DIR/containers/$W_NAME" 2>&1)" "" \
        "... and no file of its state dir holds the password"
check "umount $W" in_k "${KM_K[@]}" umount "$W"

# 3. The kubelet's container dies: the volume keeps serving.
kill -KILL "${KM_CTR_PID[kubelet]}"
wait "${KM_CTR_PID[kubelet]}" 2>/dev/null
is "$(cat "$V/data" 2>&1)" "served by a VCS container" "the kubelet's container is gone: the volume still serves"

# 4. An agent restart keeps the association.
AGENTS=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids
kill -TERM $AGENTS
wait_for 10 sh -c "! kill -0 ${AGENTS//$'\n'/ } 2>/dev/null"
is "$(ps_field "$NAME" mount.target)" "$V" "a new agent knows what $NAME serves"
is "$(cat "$V/data" 2>&1)" "served by a VCS container" "... and the volume serves on"

# 5. kubemount umount ends the container.
kubelet_up || bail_out "no kubelet container"
run in_k "${KM_K[@]}" umount "$V"
is "$RC" 0 "kubemount umount from the kubelet's container: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
check_fails "the volume is gone from the host" is_mounted host "$V"
is "$(ps_field "$NAME" name)" "" "its container is gone"

# 6. The kubelet unmounts with its own umount: gc removes the orphan.
check "mount again" in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs \
        "$KUBELET_DIR/export" "$V"
NAME=$(route_name "$V")
check "the host's own umount" umount "$V"
run km gc --json
like "$OUT" '"released-orphan"' "gc: the orphan is released"
wait_for 10 sh -c "! ls '$KUBEMOUNT_STATE_DIR/containers' | grep -qx '$NAME'"
is "$(ps_field "$NAME" name)" "" "... and removed"

# 6b. The container's daemon dies (kill -9 of its PID 1): the mount is dead; one gc unmounts it
# and removes the exited container too (scripts/soak found it left in ps -a for good).
check "mount again" in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs \
        "$KUBELET_DIR/export" "$V"
NAME=$(route_name "$V")
pid=$(ps_field "$NAME" pid)
check "kill -9 of $NAME's PID 1 ($pid)" kill -9 "$pid"
dead() { "$KUBEMOUNT" is-mountpoint "$V"; [[ $? == 3 ]]; }
check "... the mount is dead (is-mountpoint exit 3)" wait_for 10 dead
run km gc --json
like "$OUT" '"unmounted-dead-fuse"' "gc: the dead mount is unmounted"
like "$OUT" "\"released-orphan\",[^}]*\"name\": \"$NAME\"" "... and its exited container released"
check_fails "... gone from the host" is_mounted host "$V"
is "$(ps_field "$NAME" name)" "" "... and the container from ps -a"

# 7. The same by the agent's own timer (KUBEMOUNT_GC_INTERVAL=1 for a fresh agent).
AGENTS=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids
kill -TERM $AGENTS
wait_for 10 sh -c "! kill -0 ${AGENTS//$'\n'/ } 2>/dev/null"
export KUBEMOUNT_GC_INTERVAL=1
check "mount again (a fresh agent, gc every second)" in_k env KUBEMOUNT_GC_INTERVAL=1 "${KM_K[@]}" \
        --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs "$KUBELET_DIR/export" "$V"
NAME=$(route_name "$V")
check "the host's own umount" umount "$V"
if wait_for 10 sh -c "! ls '$KUBEMOUNT_STATE_DIR/containers' | grep -qx '$NAME'"; then
        ok "the agent's timer released the orphan"
else
        not_ok "the agent's timer released the orphan"
        diag "$(km ps -a 2>&1)"
fi

# 8. A legacy kubelet's `nsenter --mount=... -- mount`: the shim routes through the same call
# (its mapping from the environment: a vcs.d file with policy container).
mkdir -p "$NODE/vcs.d"
echo '{"mappings": [{"types": ["fuse.bindfs"], "image": "fuse-tools:latest", "policy": "container"}]}' \
        >"$NODE/vcs.d/bindfs.json"
# (the shim as the kubelet container sees the host's tree)
SHIM=(env KUBEMOUNT_VCS_DIR="$NODE/vcs.d" "/rootfs$(realpath "$NSENTER_COMPAT")" --mount=/rootfs/proc/1/ns/mnt --)
run in_k "${SHIM[@]}" mount -t fuse.bindfs "$KUBELET_DIR/export" "$V"
is "$RC" 0 "the shim: nsenter --mount=... -- mount -t fuse.bindfs: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
is "$(in_pod a cat "$V/data" 2>&1)" "served by a VCS container" "... a pod reads it"
like "$(route_name "$V")" "^mount-v-" "... served by a container of the image"
check "the shim: umount" in_k "${SHIM[@]}" umount "$V"
check_fails "... gone from the host" is_mounted host "$V"
is "$(route_name "$V")" "" "... and its container"

# 9. Back to back, as a node's kubelet mounts and unmounts: after the first, each mount is served by
# a spare container of the image (agent-spare.h), whose mount broker serves its own target.
bad=0 spared=0
for i in 1 2 3 4 5 6; do
        if ! in_k "${KM_K[@]}" --vcs-image fuse.bindfs=fuse-tools:latest mount -t fuse.bindfs \
                "$KUBELET_DIR/export" "$V" 2>"$KM_SCRATCH/b2b.err" ||
                [[ $(in_pod a cat "$V/data" 2>&1) != "served by a VCS container" ]]; then
                bad=$((bad + 1))
                diag "round $i: $(cat "$KM_SCRATCH/b2b.err")"
        fi
        pid=$(pgrep -xn bindfs)
        [[ -n $pid ]] && grep -q '/ctr-spare-' "/proc/$pid/cgroup" 2>/dev/null && spared=$((spared + 1))
        in_k "${KM_K[@]}" umount "$V" || bad=$((bad + 1))
done
is "$bad" 0 "six routed mount+umount back to back: each mounted, read and unmounted"
((spared >= 3)) && ok "... most served by a spare ($spared of 6)" || not_ok "... most served by a spare ($spared of 6)"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "route-fuse"
done_testing
