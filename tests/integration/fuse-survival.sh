#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 10 / KUBELET.md pain point 2: a FUSE daemon that a mount helper
# leaves behind must outlive the kubelet's container.  The containerized
# kubelet runs in a cgroup of its own (v2, and v1 pids when present), mounts
# a fuse.bindfs volume with kubemount (mount.fuse starts the daemon), then
# every process of its cgroup is killed: the volume keeps serving reads.  It
# can only if kubemount ran the helper in cgroups of its own, as systemd-run
# --scope did for the kubelet.  Also through nsenter-compat, unwrapped.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

need_tools bindfs pgrep strace "${CGROUP_RIVAL:-cgroup-rival}"
[[ -x ${NSENTER_COMPAT:-} ]] || bail_out "no nsenter-compat binary: set NSENTER_COMPAT (meson test sets it)"
[[ -x /sbin/mount.fuse || -x /usr/sbin/mount.fuse ]] || need_tools mount.fuse

node_up
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~csi
mkdir -p "$V"/{src,vol,vol2}
echo "served by bindfs" >"$V/src/data"
# The kubelet's cgroups, like a container runtime makes them.
test_cgroup kubelet

# run_kubelet CMD: CMD in the kubelet container, inside the kubelet's cgroups, then it idles.
run_kubelet() {
        # shellcheck disable=SC2016 # expanded by the container's sh
        spawn --in kubelet sh -c 'echo $$ >"$1/cgroup.procs"; [ -n "$2" ] && echo $$ >"$2/cgroup.procs"; shift 2
                "$@" >/tmp/out 2>&1; echo "exit $?" >>/tmp/out; exec sleep infinity' sh \
                "$TEST_CG" "$TEST_CG_V1" "$@"
}
# The daemon itself (its argv starts with bindfs), not a shell or kubemount with bindfs in theirs;
# once it is the only one: bindfs mounts, then forks its daemon and the parent exits (under load
# the parent was found, and gone a moment later).
daemons_of() { pgrep -f "^bindfs .*$1( |$)"; }
one_daemon() { [[ $(daemons_of "$1" | wc -l) == 1 ]]; }
daemon_of() {
        wait_for 10 one_daemon "$1"
        daemons_of "$1" | head -n1
}
# The shim at its build path inside the kubelet container too.
SHIM_DIR=$(dirname "$(realpath "$NSENTER_COMPAT")")
# shellcheck disable=SC2016 # expanded by the container's sh
in_kubelet sh -c 'mkdir -p "$1" && mount --bind -o ro "/rootfs$1" "$1"' sh "$SHIM_DIR" ||
        { echo "Bail out! cannot bind the shim into the kubelet container"; exit 1; }

for via in kubemount nsenter; do
        T=$V/vol
        [[ $via == nsenter ]] && T=$V/vol2
        if [[ $via == kubemount ]]; then
                run_kubelet "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t fuse.bindfs "$V/src" "$T"
        else
                # The legacy kubelet's form, wrapped as it did, through the shim.
                run_kubelet env KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" "$NSENTER_COMPAT" --mount=/proc/1/ns/mnt -- \
                        /bin/systemd-run "--description=Kubernetes transient mount for $T" --scope -- \
                        /bin/mount -t fuse.bindfs "$V/src" "$T"
        fi
        kubelet=$SPAWNED
        if wait_for 10 is_mounted host "$T"; then ok "[$via] the kubelet mounted fuse.bindfs"; else
                not_ok "[$via] the kubelet mounted fuse.bindfs"
                diag "$(in_kubelet cat /tmp/out 2>&1)"
        fi
        daemon=$(daemon_of "$T")
        [[ -n $daemon ]] && node_track "$daemon"
        cg=$(grep '^0::' "/proc/$daemon/cgroup" 2>/dev/null)
        like "$cg" "/$KUBEMOUNT_CGROUP_PARENT/mount-" "[$via] the daemon is in a cgroup of its own ($cg)"
        unlike "$cg" "km-test-kubelet" "[$via] ... not in the kubelet's"

        check "[$via] every process of the kubelet's cgroup is gone" cgroup_kill "$TEST_CG" "$TEST_CG_V1"
        wait "$kubelet" 2>/dev/null
        is "$?" 137 "[$via] ... the kubelet's own process died of SIGKILL"
        check "[$via] the FUSE daemon survived" kill -0 "$daemon"
        is "$(cat "$T/data" 2>&1)" "served by bindfs" "[$via] the volume keeps serving reads"

        kill -KILL "$daemon"
        wait_for 5 bash -c "! kill -0 $daemon 2>/dev/null"
        run "$KUBEMOUNT" is-mountpoint "$T"
        is "$RC" 3 "[$via] with the daemon killed the mount is corrupted (exit 3)"
        check "[$via] ... and kubemount umount cleans it" "$KUBEMOUNT" umount "$T"
done

check "the kubelet's cgroups can go" rmdir "$TEST_CG" ${TEST_CG_V1:+"$TEST_CG_V1"}

# ---- the daemon's cgroups when other kubemounts mount at the same time ----
# Each kubemount that starts a FUSE helper removes the empty mount-* groups
# next to its own, and another one may be between making its group and
# entering it.  Every daemon must land in a group of its own all the same,
# in every hierarchy, without a warning.
# daemon_cgroups_ok T DESC: the daemon of T is in kubemount's groups (v2, and v1 pids where mounted).
daemon_cgroups_ok() {
        local d cg want="/$KUBEMOUNT_CGROUP_PARENT/mount-"
        d=$(daemon_of "$1")
        cg=$(grep -E '^0::|^[0-9]+:pids:' "/proc/${d:-0}/cgroup" 2>/dev/null)
        if [[ -n $d && $cg == *"0::$want"* && ( -z $TEST_CG_V1 || $cg == *":pids:$want"* ) ]]; then ok "$2"; else
                not_ok "$2"
                diag "daemon ${d:-(none)}: ${cg//$'\n'/ }"
        fi
}
# N mounts at once, as a kubelet mounts a pod's volumes.
N=8
for i in $(seq 1 $N); do mkdir -p "$V/par$i"; done
pids=()
for i in $(seq 1 $N); do
        "$KUBEMOUNT" mount -t fuse.bindfs "$V/src" "$V/par$i" 2>"$KM_SCRATCH/par$i.err" &
        pids+=($!)
done
wait "${pids[@]}"
for i in $(seq 1 $N); do
        daemon_cgroups_ok "$V/par$i" "$N mounts at once, #$i: its daemon is in a group of its own"
        is "$(<"$KM_SCRATCH/par$i.err")" "" "... no warning"
done
for i in $(seq 1 $N); do "$KUBEMOUNT" umount "$V/par$i"; done
# The worst moment, every time: cgroup-rival removes each mount-* group the
# moment it appears, as another kubemount's clean-up may.
dirs=()
for d in /sys/fs/cgroup /sys/fs/cgroup/*/; do
        [[ $(stat -fc %T "$d") == cgroup* ]] && dirs+=("${d%/}/$KUBEMOUNT_CGROUP_PARENT")
done
mkdir -p "${dirs[@]}"
"${CGROUP_RIVAL:-cgroup-rival}" "${dirs[@]}" >"$KM_SCRATCH/rival" 2>&1 &
rival=$!
wait_for 5 grep -qx ready "$KM_SCRATCH/rival" || bail_out "cgroup-rival did not start: $(<"$KM_SCRATCH/rival")"
# The rival acts between kubemount's mkdir of its group and its move into it
# every time, not only when it happens to win the race: strace holds each
# mkdirat's return 200 ms (ample for the rival's inotify), and lets go of each
# process at its execve (the helper, its daemon), so it ends with the mount.
rivals=3
for i in $(seq 1 $rivals); do
        mkdir -p "$V/rival$i"
        run strace -f -qq -o /dev/null --detach-on=execve -e trace=mkdirat -e inject=mkdirat:delay_exit=200000 \
                "$KUBEMOUNT" mount -t fuse.bindfs "$V/src" "$V/rival$i"
        daemon_cgroups_ok "$V/rival$i" "with a rival's clean-up, mount #$i: its daemon is in a group of its own"
        is "$RC:$ERR" "0:" "... exit 0, no warning"
done
kill "$rival"
wait "$rival" 2>/dev/null
took=$(grep -c '^took' "$KM_SCRATCH/rival")
check "... the rival took a group from each mount ($took)" test "$took" -ge $rivals
for i in $(seq 1 "$rivals"); do "$KUBEMOUNT" umount "$V/rival$i"; done

# A daemon that cannot get a group of its own is said, through the shim too
# (a cgroup file as the parent: no group can be made below it).
for via in kubemount nsenter; do
        mkdir -p "$V/nogroup-$via"
        if [[ $via == kubemount ]]; then
                run env KUBEMOUNT_CGROUP_PARENT=cgroup.procs "$KUBEMOUNT" mount -t fuse.bindfs "$V/src" "$V/nogroup-$via"
        else
                run env KUBEMOUNT_CGROUP_PARENT=cgroup.procs KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" \
                        "$NSENTER_COMPAT" --mount=/proc/1/ns/mnt -- /bin/mount -t fuse.bindfs "$V/src" "$V/nogroup-$via"
        fi
        is "$RC" 0 "[$via] a daemon without a group of its own: the mount is made"
        like "$ERR" "warning: .*cgroup" "[$via] ... and a warning says so"
        "$KUBEMOUNT" umount "$V/nogroup-$via"
done

# Once their daemons have ended, the daemons' groups go with kubemount gc (scripts/soak
# found them left until the next FUSE helper's start removed them).
export KUBEMOUNT_AGENT_BINARY=$KUBEMOUNT # gc asks the agent, which this build's kubemount starts
daemon_groups() { ls -d /sys/fs/cgroup/"$KUBEMOUNT_CGROUP_PARENT"/mount-* /sys/fs/cgroup/*/"$KUBEMOUNT_CGROUP_PARENT"/mount-* 2>/dev/null; }
check "the daemons' groups were there" test -n "$(daemon_groups)"
# (a group empties once its daemon is reaped: gc again until then)
gc_clean() { "$KUBEMOUNT" gc >/dev/null && [[ -z $(daemon_groups) ]]; }
if wait_for 10 gc_clean; then ok "gc removed the daemons' empty groups, in every hierarchy"; else
        not_ok "gc removed the daemons' empty groups, in every hierarchy"
        diag "$(daemon_groups)"
fi
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent gc started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "fuse survival"
km_cgroups_remove
check_fails "kubemount's daemon cgroups are gone" ls -d "$CG2/$KUBEMOUNT_CGROUP_PARENT"
done_testing
