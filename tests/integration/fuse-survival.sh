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
node_sandbox "$@"

command -v bindfs >/dev/null || skip_all "bindfs is not installed"
[[ -x ${NSENTER_COMPAT:-} ]] || skip_all "no nsenter-compat binary: set NSENTER_COMPAT (meson test sets it)"
[[ -x /sbin/mount.fuse || -x /usr/sbin/mount.fuse ]] || skip_all "mount.fuse (fuse3) is not installed"
if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then CG2=/sys/fs/cgroup; else CG2=/sys/fs/cgroup/unified; fi
[[ -w $CG2/cgroup.procs ]] || skip_all "no writable cgroup v2 hierarchy"

node_up
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~csi
mkdir -p "$V"/{src,vol,vol2}
echo "served by bindfs" >"$V/src/data"
# The kubelet's cgroups, like a container runtime makes them.
KCG=(km-test-kubelet-$$)
mkdir "$CG2/${KCG[0]}"
if [[ ! -f $CG2/${KCG[0]}/cgroup.kill ]]; then
        rmdir "$CG2/${KCG[0]}"
        skip_all "cgroup.kill is not available (Linux < 5.14)"
fi
V1PIDS=/sys/fs/cgroup/pids
[[ -d $V1PIDS && $(stat -fc %T $V1PIDS) == cgroupfs ]] && mkdir "$V1PIDS/${KCG[0]}" || V1PIDS=""

# run_kubelet CMD: CMD in the kubelet container, inside the kubelet's cgroups, then it idles.
run_kubelet() {
        # shellcheck disable=SC2016 # expanded by the container's sh
        spawn --in kubelet sh -c 'echo $$ >"$1/cgroup.procs"; [ -n "$2" ] && echo $$ >"$2/cgroup.procs"; shift 2
                "$@" >/tmp/out 2>&1; echo "exit $?" >>/tmp/out; exec sleep infinity' sh \
                "$CG2/${KCG[0]}" "${V1PIDS:+$V1PIDS/${KCG[0]}}" "$@"
}
kill_kubelet_cgroups() {
        echo 1 >"$CG2/${KCG[0]}/cgroup.kill"
        [[ -n $V1PIDS ]] && xargs -r kill -KILL <"$V1PIDS/${KCG[0]}/cgroup.procs"
        wait_for 5 test ! -s "$CG2/${KCG[0]}/cgroup.procs"
}
daemon_of() { pgrep -f "bindfs.*$1" | head -n1; }
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
        unlike "$cg" "${KCG[0]}" "[$via] ... not in the kubelet's"

        kill_kubelet_cgroups
        check_fails "[$via] every process of the kubelet's cgroup is gone" kill -0 "$kubelet"
        wait "$kubelet" 2>/dev/null
        check "[$via] the FUSE daemon survived" kill -0 "$daemon"
        is "$(cat "$T/data" 2>&1)" "served by bindfs" "[$via] the volume keeps serving reads"

        kill -KILL "$daemon"
        wait_for 5 bash -c "! kill -0 $daemon 2>/dev/null"
        run "$KUBEMOUNT" is-mountpoint "$T"
        is "$RC" 3 "[$via] with the daemon killed the mount is corrupted (exit 3)"
        check "[$via] ... and kubemount umount cleans it" "$KUBEMOUNT" umount "$T"
done

rmdir "$CG2/${KCG[0]}"
[[ -n $V1PIDS ]] && rmdir "$V1PIDS/${KCG[0]}"
node_down "fuse survival"
km_cgroups_remove
check_fails "kubemount's daemon cgroups are gone" ls -d "$CG2/$KUBEMOUNT_CGROUP_PARENT"
done_testing
