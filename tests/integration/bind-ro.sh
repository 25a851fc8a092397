#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Read-only bind mounts: kubemount mount --bind -o ro SRC DST, and the
# kubelet's two calls (-o bind, then -o bind,remount,ro), give a read-only
# view (EROFS) while the source stays writable.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
pod_up a
S=$KUBELET_DIR/plugins/src
mkdir -p "$S"
echo data >"$S/file"

# ro_checks LABEL DST
ro_checks() {
        is "$(cat "$2/file" 2>&1)" data "$1: the bind shows the source"
        run touch "$2/new"
        if ((RC != 0)) && [[ $ERR == *"Read-only file system"* ]]; then
                ok "$1: writing through it fails with EROFS"
        else
                not_ok "$1: writing through it fails with EROFS"
                diag "exit $RC: $ERR"
        fi
        like "$(findmnt -no VFS-OPTIONS --mountpoint "$2")" '(^|,)ro(,|$)' "$1: the mount is ro"
        check "$1: the source stays writable" touch "$S/written-$1"
        is "$(mounts_in host "$2" | wc -l)" 1 "$1: exactly one mount at the target"
}

D1=$KUBELET_DIR/pods/p/volumes/one
mkdir -p "$D1"
check "host: kubemount mount --bind -o ro" "$KUBEMOUNT" mount --bind -o ro "$S" "$D1"
ro_checks one-call "$D1"

D2=$KUBELET_DIR/pods/p/volumes/two
mkdir -p "$D2"
check "host: kubemount mount -o bind" "$KUBEMOUNT" mount -o bind "$S" "$D2"
check "host: kubemount mount -o bind,remount,ro" "$KUBEMOUNT" mount -o bind,remount,ro "$S" "$D2"
ro_checks two-call "$D2"

D3=$KUBELET_DIR/pods/p/volumes/three
mkdir -p "$D3"
check "kubelet: kubemount mount -o bind" in_kubelet "$KUBEMOUNT" mount -o bind "$S" "$D3"
check "kubelet: kubemount mount -o bind,remount,ro" in_kubelet "$KUBEMOUNT" mount -o bind,remount,ro "$S" "$D3"
ro_checks kubelet-two-call "$D3"

D4=$KUBELET_DIR/pods/p/volumes/four
mkdir -p "$D4"
check "host: kubemount mount --bind -r" "$KUBEMOUNT" mount --bind -r "$S" "$D4"
ro_checks short-option "$D4"

# A pod created after the mount gets its view from the host's ro mount.
pod_up late
run in_pod late touch "$D1/from-late-pod"
like "$ERR" "Read-only file system" "a pod started after the mount sees it read-only"

# The copies that propagation makes in the kubelet's namespace and in running
# pods must be read-only too: kubemount sets the flags before attaching the
# bind (open_tree + mount_setattr + move_mount), as a later remount would not
# propagate.
run in_kubelet touch "$D1/from-kubelet"
like "$ERR" "Read-only file system" "one-call ro bind: read-only in the kubelet's namespace too"
run in_pod a touch "$D1/from-pod"
like "$ERR" "Read-only file system" "one-call ro bind: read-only in a running pod too"

for d in "$D1" "$D2" "$D3" "$D4"; do
        check "kubemount umount $(basename "$d")" "$KUBEMOUNT" umount "$d"
done
is "$(mounts_in host "$KUBELET_DIR/pods")" "" "no mounts left under pods/"
node_down "bind ro"
done_testing
