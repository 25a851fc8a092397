#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 11: routed mounts at once.  200 concurrent `kubemount mount` of a
# daemon type (a container each, kept) to distinct targets: every one
# succeeds or fails cleanly, each target is mounted once and served by one
# container.  50 concurrent mounts of one target: exactly one wins, the
# others exit 32 with a reason, nothing is stacked, no container is left
# over.  Then everything is unmounted and no container remains.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

N=${ROUTE_CONCURRENT:-200}
M=${ROUTE_SAME_TARGET:-50}
node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store KUBEMOUNT_VCS_DIR=$NODE/vcs.d
mkdir -p "$KUBEMOUNT_VCS_DIR"
# Privileged: the fake client records its argv in the kubelet dir, which an unprivileged one
# may not write (broker-mounts tests the broker); so its image is pinned by digest.
rootfs_mount_tarball "$NODE/images" kmd || bail_out "rootfs_mount_tarball kmd"
KMD=$(km image import --json "rootfs:$NODE/images/kmd.tar.gz" local/kmd:1 |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"])')
check "image local/kmd@$KMD" km image import -q "rootfs:$NODE/images/kmd.tar.gz" "local/kmd@$KMD"
echo '{"mappings": [{"types": ["kmdaemon"], "image": "local/kmd@'"$KMD"'", "policy": "container", "daemon": true, "privileged": true}]}' \
        >"$KUBEMOUNT_VCS_DIR/kmd.json"
vcs_agent_start
KM_V=("$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR")
V=$KUBELET_DIR/pods/p/volumes
R=$KM_SCRATCH/results
mkdir -p "$R"
for i in $(seq "$N"); do mkdir -p "$V/d$i"; done
mkdir -p "$V/one"

# mount_bg ID TARGET: one kubemount mount in the background, its status and stderr in $R.
PIDS=()
mount_bg() {
        { timeout -k 5 "$VCS_TIMEOUT" "${KM_V[@]}" mount -t kmdaemon x "$2" 2>"$R/$1.err"; echo $? >"$R/$1.rc"; } &
        PIDS+=($!)
}
# (not a bare wait: the agent is a child of this shell too)
wait_all() {
        wait "${PIDS[@]}"
        PIDS=()
}
containers() { km ps --json | grep -c '"target"'; }

# 1. Distinct targets.
for i in $(seq "$N"); do mount_bg "d$i" "$V/d$i"; done
wait_all
ok_n=0 bad=
for i in $(seq "$N"); do
        rc=$(cat "$R/d$i.rc")
        if [[ $rc == 0 ]]; then
                ((ok_n++))
        elif [[ $rc != 32 || ! -s $R/d$i.err ]]; then
                bad+=" d$i:$rc"
        fi
done
is "$ok_n" "$N" "$N concurrent routed mounts to distinct targets: all succeeded"
is "$bad" "" "... and none failed without exit 32 and a message"
is "$(grep -c " $V/d[0-9]* " /proc/self/mountinfo)" "$ok_n" "... each target mounted once"
is "$(containers)" "$ok_n" "... each served by one container"

# 2. One target.
for i in $(seq "$M"); do mount_bg "one$i" "$V/one"; done
wait_all
wins=0 bad=
for i in $(seq "$M"); do
        rc=$(cat "$R/one$i.rc")
        if [[ $rc == 0 ]]; then
                ((wins++))
        elif [[ $rc != 32 ]] || ! grep -Eq "already|serving it" "$R/one$i.err"; then
                bad+=" one$i:$rc:$(head -c 200 "$R/one$i.err")"
        fi
done
is "$wins" 1 "$M concurrent mounts of one target: exactly one succeeded"
is "$bad" "" "... the others exit 32 saying it is mounted or being mounted"
is "$(grep -c " $V/one " /proc/self/mountinfo)" 1 "... one mount, nothing stacked"
is "$(containers)" $((ok_n + 1)) "... one more container, none left over"

# 3. All unmounted (concurrently as well): no container remains.
for i in $(seq "$N"); do
        { "${KM_V[@]}" umount "$V/d$i" 2>"$R/u$i.err"; echo $? >"$R/u$i.rc"; } &
        PIDS+=($!)
done
wait_all
check "umount the one target" "${KM_V[@]}" umount "$V/one"
is "$(cat "$R"/u*.rc | sort | uniq -c | tr -s ' ')" " $N 0" "$N concurrent umounts: all exit 0"
is "$(grep -c " $V/" /proc/self/mountinfo)" 0 "no routed mount is left"
is "$(km ps -a --json | grep -c '"name"')" 0 "no container is left"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "route-concurrency"
done_testing
