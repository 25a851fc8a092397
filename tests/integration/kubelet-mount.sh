#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A containerized kubelet mounts with kubemount: the mount lands in the host
# namespace and reaches the host, the kubelet and a pod (HostToContainer);
# kubemount umount from the kubelet removes it everywhere.  Both ways of
# naming the host namespace: the default /proc/1/ns/mnt (the kubelet
# container's own procfs of the node's pid namespace) and
# --host-mount-ns=/rootfs/proc/1/ns/mnt / $KUBEMOUNT_HOST_MOUNT_NS (what real
# kubelet containers use).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
pod_up a
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir/cache
mkdir -p "$V"

is "$(in_kubelet readlink /proc/1/ns/mnt)" "$(readlink /proc/1/ns/mnt)" \
        "sanity: /proc/1/ns/mnt in the kubelet container is the host namespace"
is "$(in_kubelet readlink /rootfs/proc/1/ns/mnt)" "$(readlink /proc/1/ns/mnt)" \
        "sanity: so is /rootfs/proc/1/ns/mnt"
isnt_ns=$(in_kubelet readlink /proc/self/ns/mnt)
[[ $isnt_ns != "$(readlink /proc/1/ns/mnt)" ]] && ok "sanity: the kubelet runs in a namespace of its own" ||
        not_ok "sanity: the kubelet runs in a namespace of its own"

for how in default option env; do
        case $how in
        default) km=("$KUBEMOUNT") ;;
        option) km=("$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt) ;;
        env) km=(env KUBEMOUNT_HOST_MOUNT_NS=/rootfs/proc/1/ns/mnt "$KUBEMOUNT") ;;
        esac
        check "[$how] kubelet: kubemount mount -t tmpfs exits 0" \
                in_kubelet "${km[@]}" mount -t tmpfs -o size=1m,mode=0750 kubemount-vol "$V"
        check "[$how] the mount is in the host namespace" is_mounted host "$V"
        check "[$how] ... propagated to the kubelet" is_mounted kubelet "$V"
        check "[$how] ... and to the pod" is_mounted pod:a "$V"
        is "$(findmnt -no SOURCE,FSTYPE --mountpoint "$V")" "kubemount-vol tmpfs" "[$how] host: source and type as asked"
        echo "$how" >"$V/data"
        is "$(in_pod a cat "$V/data" 2>&1)" "$how" "[$how] a file the host writes is read in the pod"
        is "$(in_kubelet cat "$V/data" 2>&1)" "$how" "[$how] ... and in the kubelet"
        check "[$how] kubelet: kubemount is-mountpoint says yes" in_kubelet "${km[@]}" is-mountpoint "$V"
        check "[$how] kubelet: kubemount umount exits 0" in_kubelet "${km[@]}" umount "$V"
        check_fails "[$how] gone from the host" is_mounted host "$V"
        check_fails "[$how] gone from the kubelet" is_mounted kubelet "$V"
        check_fails "[$how] gone from the pod" is_mounted pod:a "$V"
        run in_kubelet "${km[@]}" is-mountpoint "$V"
        is "$RC" 1 "[$how] kubelet: kubemount is-mountpoint says no"
done

# Proof that kubemount works in the host's tree, not the kubelet's: a path
# that exists only in the host.
H=$NODE/host-only
mkdir -p "$H"
check_fails "sanity: $H does not exist in the kubelet container" in_kubelet test -e "$H"
check "kubelet: kubemount mounts on a path that only the host has" \
        in_kubelet "$KUBEMOUNT" mount -t tmpfs -o size=1m host-only "$H"
check "... and it is there in the host" is_mounted host "$H"
check "kubelet: kubemount umount of it" in_kubelet "$KUBEMOUNT" umount "$H"
check_fails "... gone" is_mounted host "$H"

# Without entering the host (own namespace): still reaches the host, because
# the kubelet dir is bound rshared (Bidirectional) ...
check "kubelet: a mount in its own namespace (--host-mount-ns=/proc/self/ns/mnt)" \
        in_kubelet "$KUBEMOUNT" --host-mount-ns=/proc/self/ns/mnt mount -t tmpfs -o size=1m own "$V"
check "... reaches the host through the rshared kubelet dir" is_mounted host "$V"
check "... and the pod" is_mounted pod:a "$V"
check "kubelet: umount in its own namespace" in_kubelet "$KUBEMOUNT" --host-mount-ns=/proc/self/ns/mnt umount "$V"
check_fails "... gone from the host" is_mounted host "$V"
# ... while a pod's own mount (rslave) stays in the pod.
check "pod: a mount in its own namespace" \
        in_pod a "$KUBEMOUNT" --host-mount-ns=/proc/self/ns/mnt mount -t tmpfs -o size=1m pod "$V"
check_fails "... does not reach the host (HostToContainer)" is_mounted host "$V"
check_fails "... nor the kubelet" is_mounted kubelet "$V"

run in_kubelet "$KUBEMOUNT" --host-mount-ns=/nonexistent/ns/mnt mount -t tmpfs x "$V"
is "$RC" 2 "a missing host namespace file: exit 2 (system error)"
like "$ERR" "/nonexistent/ns/mnt" "... and the message names it"

# A kubelet pays every library an exec maps: routing asks the type table and the agent's
# state only when a mapping or a routed container may be there, and loads JSON for neither.
# libs_loaded ARGS...: the shared objects `kubemount ARGS` in the kubelet initialised besides
# ld.so and libc, one a line.
libs_loaded() {
        in_kubelet env LD_DEBUG=libs "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt "$@" 2>&1 >/dev/null | sed -n 's|.*calling init: \(.*\)|\1|p' |
                grep -v -e '/ld-linux' -e '/libc\.so' || true
}
is "$(libs_loaded mount -t tmpfs -o size=1m lz "$V")" "" \
        "mount -t tmpfs from the kubelet loads no library but libc"
check "... it mounted" is_mounted host "$V"
is "$(libs_loaded umount "$V")" "" \
        "umount from the kubelet loads no library but libc"
check_fails "... it unmounted" is_mounted host "$V"
# The registry settings file is pull's: a broken one neither stops a mount nor costs it JSON.
echo '{"insecureRegistries": [' >"$KUBELET_DIR/bad-config.json"
is "$(export KUBEMOUNT_CONFIG=$KUBELET_DIR/bad-config.json && libs_loaded mount -t tmpfs -o size=1m lz "$V")" "" \
        "with a broken config.json, mount -t tmpfs still loads no library but libc"
check "... and mounts" is_mounted host "$V"
check "umount" in_kubelet "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt umount "$V"

node_down "kubelet mounts"
done_testing
