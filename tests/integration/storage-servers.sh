#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The network storage servers of tests/lib/servers.sh, in a sandbox with a
# network of its own: glusterd with gv0 and sshd.  The host's clients mount
# them (mount -t glusterfs, sshfs, mount -t fuse.sshfs) and pods read the
# mounts; hide_host_clients then leaves the host, the kubelet and pods
# without usable clients; the VCS images glusterfs and fuse-tools (from
# scripts/build-images; skipped, each, when $KM_BUILD_DIR/images/NAME is not
# there) mount the same volumes from detached containers instead.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/servers.sh" || { echo "Bail out! cannot load tests/lib/servers.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox --net "$@"
need_tools sshfs mount.glusterfs glusterfs

node_up
is "$(ip -o link show | awk -F': ' '{ print $2 }')" "lo" "the sandbox's network has lo alone"

gluster_up || bail_out "gluster_up failed"
ok "glusterd serves $GLUSTER_VOLUME (ready in $GLUSTER_READY_MS ms)"
sshd_up || bail_out "sshd_up failed"
# The client key is the unprivileged containers' root's (host uid 1879048192): theirs to read at
# 0600, and the host's root reads it too (ssh checks the mode of a key its own user owns only).
chown -R 1879048192:1879048192 "$SSHD_KEY_DIR"
ok "sshd serves $SSHD_SOURCE on port $SSHD_PORT (ready in $SSHD_READY_MS ms)"

# ---- the host's clients ---------------------------------------------------

# Volumes of a pod's, mounted by the host under the rshared kubelet dir.
VOLS=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi
G=$VOLS/gluster S=$VOLS/sshfs
mkdir -p "$G" "$S"
pod_up a

t0=$(now_ms)
check "mount -t glusterfs $GLUSTER_VOLUME" mount -t glusterfs "$GLUSTER_VOLUME" "$G"
diag "mount -t glusterfs: $(($(now_ms) - t0)) ms"
check "... write a file" sh -c "echo from the host >'$G/host-file'"
is "$(cat "$GLUSTER_BRICK/host-file" 2>&1)" "from the host" "... it is on the brick"
echo "from the server" >"$GLUSTER_BRICK/server-file"
is "$(cat "$G/server-file" 2>&1)" "from the server" "... a file of the brick's reads through the mount"
is "$(in_pod a cat "$G/host-file" 2>&1)" "from the host" "... the pod reads the volume"
check "... umount" umount "$G"
# The client daemon ends once unmounted (the leak check at the end counts it).
wait_for 10 sh -c '! pgrep -x glusterfs >/dev/null'
check_fails "... its client daemon is gone" pgrep -x glusterfs
check "mount -t glusterfs 127.0.0.1:/$GLUSTER_VOLNAME (the volume file server on 127.0.0.1)" \
        mount -t glusterfs "127.0.0.1:/$GLUSTER_VOLNAME" "$G"
is "$(cat "$G/server-file" 2>&1)" "from the server" "... reads"
check "... umount" umount "$G"

t0=$(now_ms)
check "sshfs $SSHD_SOURCE" sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
diag "sshfs: $(($(now_ms) - t0)) ms"
is "$(cat "$S/${SSHD_FILE##*/}" 2>&1)" "$SSHD_FILE_CONTENT" "... reads the served file"
is "$(in_pod a cat "$S/${SSHD_FILE##*/}" 2>&1)" "$SSHD_FILE_CONTENT" "... the pod reads it (allow_other)"
like "$(findmnt -no OPTIONS "$S")" 'allow_other' "... mounted with allow_other"
check "... umount" umount "$S"
check "mount -t fuse.sshfs (the form a routed mount takes)" \
        mount -t fuse.sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
is "$(cat "$S/${SSHD_FILE##*/}" 2>&1)" "$SSHD_FILE_CONTENT" "... reads the served file"
check "... umount" umount "$S"
wait_for 10 sh -c '! pgrep -x sshfs >/dev/null'

# ---- no clients on the host ----------------------------------------------

check "hide_host_clients" hide_host_clients
diag "hidden: $KM_HIDDEN_TOOLS"
is "$(readlink /proc/1/ns/mnt)" "$(readlink /proc/self/ns/mnt)" "... in the sandbox's namespace (the node's host)"
# util-linux's mount finds /sbin/mount.glusterfs, its exec fails (EACCES)
# and mount exits 1 without a word.
check_fails "mount -t glusterfs fails on the host" mount -t glusterfs "$GLUSTER_VOLUME" "$G"
check_fails "sshfs fails on the host" sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
is "$RC" 126 "... it cannot be run (exit 126)"
check_fails "mount -t fuse.sshfs fails on the host" mount -t fuse.sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
check_fails "... nothing got mounted" is_mounted host "$S"
check_fails "... nor at $G" is_mounted host "$G"
for t in mount.glusterfs glusterfs sshfs fusermount3 bindfs; do
        p=$(command -v "$t")
        check_fails "the host cannot run $t ($p)" "$p" --version
done
check "the servers keep theirs: gluster volume status" gluster_cli volume status "$GLUSTER_VOLNAME"
for t in /usr/sbin/mount.glusterfs /usr/bin/sshfs /rootfs/usr/sbin/mount.glusterfs /rootfs/usr/bin/sshfs; do
        check_fails "the kubelet cannot run $t" in_kubelet "$t" --version
done
check_fails "mount -t glusterfs fails in the kubelet container" in_kubelet mount -t glusterfs "$GLUSTER_VOLUME" "$G"
check_fails "sshfs fails in the kubelet container" in_kubelet sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
check_fails "... nothing got mounted" is_mounted host "$S"
pod_up b
check_fails "a pod started after it cannot run sshfs either" in_pod b sshfs --version

# ---- the VCS images against the servers ----------------------------------

IMAGES=${KM_BUILD_DIR:-}/images
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store

# vcs_volume NAME IMAGE MOUNT-COMMAND...: a detached container of IMAGE
# that runs MOUNT-COMMAND... (its last argument the target, under the
# kubelet dir) and keeps the client running; on a TERM (kubemount stop) it
# unmounts.  Then the host and pod a read $TARGET/FILE (WANT).
vcs_volume() { # NAME IMAGE FILE WANT MOUNT-COMMAND...
        local name=$1 image=$2 file=$3 want=$4 target t0
        shift 4
        target=${!#}
        t0=$(now_ms)
        # Unprivileged: the broker mounts the client's FUSE types for it.
        check "run -d --image $image -- $*" km run -d --name "$name" --image "$image" \
                --allow-mount fuse --allow-mount fuse.glusterfs --allow-mount fuse.sshfs --mount-target "$target" \
                --mount "$KUBELET_DIR:$KUBELET_DIR:rshared" --mount "$SSHD_KEY_DIR:$SSHD_KEY_DIR:private:ro" -- \
                sh -c 't=$1; shift; "$@" || exit 1; trap "umount \"\$t\"; exit 0" TERM; sleep infinity & wait' \
                sh "$target" "$@"
        if wait_for 20 is_mounted host "$target"; then
                ok "... the volume reaches the host ($(($(now_ms) - t0)) ms from run)"
        else
                not_ok "... the volume reaches the host"
                diag "$(km logs "$name" 2>&1)"
        fi
        is "$(cat "$target/$file" 2>&1)" "$want" "... the host reads it"
        is "$(in_pod a cat "$target/$file" 2>&1)" "$want" "... the pod reads it"
        check "... stop" km stop "$name"
        wait_for 10 sh -c "! grep -q ' $target ' /proc/1/mountinfo"
        check_fails "... the volume is gone from the host" is_mounted host "$target"
        check "... rm" km rm "$name"
}

if [[ -f $IMAGES/glusterfs/index.json ]]; then
        check "image import oci:build/images/glusterfs" km image import "oci:$IMAGES/glusterfs"
        vcs_volume vcs-gluster glusterfs server-file "from the server" \
                mount -t glusterfs "$GLUSTER_VOLUME" "$G"
else
        skip "the glusterfs image mounts $GLUSTER_VOLUME" "no $IMAGES/glusterfs (scripts/build-images glusterfs)"
fi
if [[ -f $IMAGES/fuse-tools/index.json ]]; then
        check "image import oci:build/images/fuse-tools" km image import "oci:$IMAGES/fuse-tools"
        vcs_volume vcs-sshfs fuse-tools "${SSHD_FILE##*/}" "$SSHD_FILE_CONTENT" \
                sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$S"
else
        skip "the fuse-tools image mounts $SSHD_SOURCE with sshfs" "no $IMAGES/fuse-tools (scripts/build-images fuse-tools)"
fi

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents

check "gluster_down" gluster_down
check "sshd_down" sshd_down
check_fails "... nothing listens on 24007 any more" _srv_tcp 127.0.0.1 24007
check_fails "... nor on $SSHD_PORT" _srv_tcp 127.0.0.1 "$SSHD_PORT"
node_down "storage-servers"
check "the host's clients are back after node_down" sshfs --version
done_testing
