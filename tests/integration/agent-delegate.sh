#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount-agent.service with Delegate=yes: what systemd does for the unit,
# played in the sandbox.  A group km-test-systemd-ID/system.slice/
# kubemount-agent.service in every hierarchy systemd manages (not v1 cpuset
# or freezer), marked trusted.delegate=1 in the v2 one as systemd >= 251
# marks it; the agent started in it with INVOCATION_ID set and no
# $KUBEMOUNT_CGROUP_PARENT.  Then: the agent moves into UNIT/agent and records
# UNIT in the state dir; a detached container goes to UNIT/ctr-NAME and a FUSE
# helper's daemon, from a `kubemount mount` run apart from the agent (as the
# kubelet runs it), to UNIT/mount-PID, in every hierarchy; the agent is killed
# and a new one is started in the unit's own group (systemd's restart): the
# container and the mount keep serving, the new agent adopts the container
# and leaves for UNIT/agent; stopping the container removes its group.
# (The machine's root-level kubemount/ tree is not compared before and after:
# other kubemounts of the machine use it meanwhile.  Every process of the test
# is checked to be below the unit's group instead.)
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

need_tools bindfs setfattr getfattr python3
[[ -x /sbin/mount.fuse || -x /usr/sbin/mount.fuse ]] || need_tools mount.fuse
cgroup_v2
node_up --no-kubelet
vcs_setup
# The delegated parent, not the sandbox's kubemount-test-ID (empty counts as unset).
export KUBEMOUNT_CGROUP_PARENT=""

UNIT=km-test-systemd-$KM_RUN_ID/system.slice/kubemount-agent.service
# The hierarchies in sight: the v2 one, and on a hybrid layout the v1 ones.
HIERS=()
if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then
        HIERS=(/sys/fs/cgroup) # its subdirectories are groups, not hierarchies
else
        for d in /sys/fs/cgroup/*/; do
                d=${d%/}
                [[ $(stat -fc %T "$d" 2>/dev/null) == cgroup* ]] && HIERS+=("$d")
        done
fi
diag "hierarchies: ${HIERS[*]}"

# What systemd makes for a unit with Delegate=yes: its group in the
# hierarchies of the controllers it manages (v1 cpuset and freezer are not).
for d in "${HIERS[@]}"; do
        case $d in */cpuset | */freezer) continue ;; esac
        mkdir -p "$d/$UNIT" || bail_out "cannot make $d/$UNIT"
done
setfattr -n trusted.delegate -v 1 "$CG2/$UNIT" || bail_out "cannot set trusted.delegate on $CG2/$UNIT"

# agent_start: the unit's main process as systemd starts it, in the unit's
# own group of every hierarchy where systemd made it; AGENT its pid.
agent_start() {
        rm -f "$KUBEMOUNT_STATE_DIR/agent.sock"
        # shellcheck disable=SC2016 # expanded by that sh
        spawn env INVOCATION_ID=km-test sh -c 'for d; do [ -d "$d" ] && echo $$ >"$d/cgroup.procs"; done
                exec "$KUBEMOUNT" agent' sh "${HIERS[@]/%//$UNIT}" >>"$KM_SCRATCH/agent.log" 2>&1 </dev/null
        AGENT=$SPAWNED
        if wait_for 10 test -S "$KUBEMOUNT_STATE_DIR/agent.sock"; then ok "$1: the agent listens"; else
                not_ok "$1: the agent listens"
                diag "$(cat "$KM_SCRATCH/agent.log")"
        fi
}
# groups_are PID WANT DESC: PID's group is /WANT in every hierarchy in sight.
groups_are() {
        local line path bad=() n=0
        while IFS= read -r line; do
                # With the v2 layout alone in sight, the v1 lines are of hierarchies nobody here uses.
                [[ ${KM_CGROUP_LAYOUT:-host} == v2 && $line != 0::* ]] && continue
                path=${line#*:*:}
                n=$((n + 1))
                [[ $path == /$2 ]] || bad+=("$line") # $2 may be a glob
        done <"/proc/${1:-0}/cgroup"
        if ((n > 0 && ${#bad[@]} == 0)); then ok "$3"; else
                not_ok "$3"
                diag "want /$2, got:" "${bad[@]}"
        fi
}

# ---- the agent in a delegated unit ----
agent_start "first start"
groups_are "$AGENT" "$UNIT/agent" "the agent left the unit's own group for $UNIT/agent, in every hierarchy"
is "$(cat "$KUBEMOUNT_STATE_DIR/cgroup-parent" 2>&1)" "$UNIT" "it recorded the unit's group in the state dir"
is "$(cat "$CG2/$UNIT/cgroup.procs")" "" "the unit's own group holds no process (v2: only groups)"

# ---- a detached container ----
run vcs_run --detach --name d1 -- sh -c 'while :; do sleep 0.2; done'
is "$RC:$OUT" "0:d1" "run --detach d1"
d1=$(vcs_pid d1)
groups_are "$d1" "$UNIT/ctr-d1" "d1 is in $UNIT/ctr-d1, in every hierarchy"

# ---- a FUSE helper's daemon, from a mount the agent does not run ----
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~csi
mkdir -p "$V/src" "$V/vol"
echo "served by bindfs" >"$V/src/data"
run "$KUBEMOUNT" mount -t fuse.bindfs "$V/src" "$V/vol"
is "$RC:$ERR" "0:" "kubemount mount -t fuse.bindfs: no warning"
fuse=$(pgrep -f "^bindfs .*$V/vol( |$)" | head -n1)
[[ -n $fuse ]] && node_track "$fuse"
groups_are "$fuse" "$UNIT/mount-[0-9]*" "its daemon is below the unit's group, in every hierarchy"
like "$(grep '^0::' "/proc/${fuse:-0}/cgroup" 2>&1)" "^0::/$UNIT/mount-[0-9]+$" "... in a mount-PID group of its own"

# ---- systemd's restart: the agent killed, a new one in the unit's own group ----
kill -KILL "$AGENT"
wait "$AGENT" 2>/dev/null
node_untrack "$AGENT"
check "the container survived the agent" kill -0 "$d1"
is "$(cat "$V/vol/data" 2>&1)" "served by bindfs" "the FUSE mount keeps serving"
agent_start "restart"
groups_are "$AGENT" "$UNIT/agent" "the new agent left the unit's own group for $UNIT/agent"
is "$(vcs_status d1):$(vcs_pid d1)" "running:$d1" "the new agent adopted d1 (running, same pid)"
groups_are "$d1" "$UNIT/ctr-d1" "d1 is still in $UNIT/ctr-d1"
run vcs_run --detach --name d2 -- sh -c 'while :; do sleep 0.2; done'
is "$RC:$OUT" "0:d2" "after the restart, run --detach d2"
groups_are "$(vcs_pid d2)" "$UNIT/ctr-d2" "d2 is in $UNIT/ctr-d2"
is "$(cat "$V/vol/data" 2>&1)" "served by bindfs" "the FUSE mount still serves"

# ---- clean-up ----
run km stop --timeout 2 d1
is "$RC" 0 "stop d1 (adopted)"
check_fails "its group is gone" test -d "$CG2/$UNIT/ctr-d1"
vcs_cleanup
check_fails "d2's group is gone" test -d "$CG2/$UNIT/ctr-d2"
check "the FUSE mount unmounts" "$KUBEMOUNT" umount "$V/vol"
wait_for 5 eval "! kill -0 ${fuse:-0} 2>/dev/null"
kill -TERM "$AGENT"
wait "$AGENT" 2>/dev/null
node_untrack "$AGENT"
left=$(find "${HIERS[@]/%//$UNIT}" -name cgroup.procs -exec cat {} + 2>/dev/null)
is "$left" "" "no process is left below the unit's group"
check "the unit's groups can go" _km_cgroups_rmdir "km-test-systemd-$KM_RUN_ID"

node_down
done_testing
