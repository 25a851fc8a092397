#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 1: a path component below the kubelet dir is a symlink to /etc, to
# a dir outside the kubelet dir, or climbs out with ../..: kubemount mount
# refuses it (exit 32 or 1, a message saying "symlink"), nothing is mounted
# and the host's mount table is unchanged.  From the host and from the
# kubelet container.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
OUTSIDE=$NODE/outside
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir
mkdir -p "$OUTSIDE/volumes/v" "$V/real" "$KUBELET_DIR/pods/uid-3"
ln -s /etc "$V/to-etc"
ln -s "$OUTSIDE" "$V/to-outside"
ln -s ../../../../../../../../../.. "$V/climb"
ln -s "$OUTSIDE" "$KUBELET_DIR/pods/uid-2"
ln -s ../uid-1/volumes/kubernetes.io~empty-dir/real "$KUBELET_DIR/pods/uid-3/inside"

# refused WHERE DESC TARGET: kubemount mount -t tmpfs on TARGET is refused.
refused() {
        local where=$1 desc=$2 target=$3 before rc
        before=$(cat /proc/1/mountinfo)
        if [[ $where == host ]]; then
                run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m evil "$target"
        else
                run in_kubelet "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m evil "$target"
        fi
        rc=$RC
        if ((rc == 32 || rc == 1)); then ok "[$where] $desc: refused (exit $rc)"; else
                not_ok "[$where] $desc: refused (exit 32 or 1)"
                diag "exit $rc: $ERR"
        fi
        like "$ERR" "symlink" "[$where] $desc: the message says symlink"
        like "$ERR" "$target" "[$where] $desc: ... and names the target"
        if [[ $(cat /proc/1/mountinfo) == "$before" ]]; then ok "[$where] $desc: host mount table unchanged"; else
                not_ok "[$where] $desc: host mount table unchanged"
                diag "$(diff <(echo "$before") /proc/1/mountinfo)"
        fi
        # Undo a mount that slipped through, so the next cases see a clean
        # host (this is the sandbox's /etc, never the machine's).
        if mountpoint -q /etc; then
                umount /etc
                not_ok "[$where] $desc: /etc was mounted over"
        fi
        mountpoint -q "$OUTSIDE" && umount "$OUTSIDE"
        mountpoint -q "$OUTSIDE/volumes/v" && umount "$OUTSIDE/volumes/v"
        mountpoint -q / && [[ $(findmnt -no SOURCE --mountpoint /) == evil ]] && umount /
}

for where in host kubelet; do
        refused "$where" "last component a symlink to /etc" "$V/to-etc"
        refused "$where" "last component a symlink outside the kubelet dir" "$V/to-outside"
        refused "$where" "a symlink that climbs out with ../.." "$V/climb"
        refused "$where" "a pod dir that is a symlink outside" "$KUBELET_DIR/pods/uid-2/volumes/v"
        refused "$where" "a symlink to a dir inside the kubelet dir" "$KUBELET_DIR/pods/uid-3/inside"
        run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m evil "$V/../../uid-2/volumes/v"
        if ((RC == 1 || RC == 32)) && ! mountpoint -q "$OUTSIDE/volumes/v"; then
                ok "[$where] a '..' component below the kubelet dir is refused"
        else
                not_ok "[$where] a '..' component below the kubelet dir is refused"
                diag "exit $RC: $ERR"
                mountpoint -q "$OUTSIDE/volumes/v" && umount "$OUTSIDE/volumes/v"
        fi
done

# Control: a real directory mounts, from both.
check "a target without symlinks mounts" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m ok "$V/real"
check "... and unmounts" "$KUBEMOUNT" umount "$V/real"
check "the same from the kubelet container" \
        in_kubelet "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m ok "$V/real"
check "... and unmounts" in_kubelet "$KUBEMOUNT" umount "$V/real"
# The kubelet dir itself may sit behind symlinks (e.g. /var -> /data/var);
# only what lies below it is confined.
ln -s "$KUBELET_DIR" "$NODE/kubelet-link"
check "--kubelet-dir given through a symlink still works" \
        "$KUBEMOUNT" --kubelet-dir="$NODE/kubelet-link" mount -t tmpfs -o size=1m ok "$NODE/kubelet-link/pods/uid-1/volumes/kubernetes.io~empty-dir/real"
"$KUBEMOUNT" umount "$V/real" 2>/dev/null

# umount does not follow a symlink either (UMOUNT_NOFOLLOW).
mkdir -p "$V/mounted"
mount -t tmpfs -o size=1m kept "$V/mounted"
ln -s mounted "$V/to-mounted"
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount "$V/to-mounted"
is "$RC" 32 "umount of a symlink to a mount point: exit 32"
check "... and the mount stays" is_mounted host "$V/mounted"
umount "$V/mounted"

# The walk compares directories by device and inode, so a relative target and
# a target that reaches the kubelet dir through a symlinked prefix are confined
# too.
run sh -c 'cd "$1" && "$2" --kubelet-dir="$1" mount -t tmpfs -o size=1m evil pods/uid-1/volumes/kubernetes.io~empty-dir/to-etc' \
        sh "$KUBELET_DIR" "$KUBEMOUNT"
((RC == 1 || RC == 32)) && ok "a relative target through a symlink is refused" ||
        not_ok "a relative target through a symlink is refused"
mountpoint -q /etc && umount /etc
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m evil "$NODE/kubelet-link/pods/uid-1/volumes/kubernetes.io~empty-dir/to-etc"
((RC == 1 || RC == 32)) && ok "a target under a symlink to the kubelet dir is refused" ||
        not_ok "a target under a symlink to the kubelet dir is refused"
mountpoint -q /etc && umount /etc
# THREATS 3: a bind source (a subPath) below the kubelet dir is walked the same way.
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount --bind "$V/to-etc" "$V/real"
((RC == 1 || RC == 32)) && ok "a bind source that is a symlink to /etc is refused" ||
        not_ok "a bind source that is a symlink to /etc is refused"
mountpoint -q "$V/real" && umount "$V/real"
like "$ERR" "bind source .*symlink" "... saying the bind source is a symlink"
check "a bind source inside the kubelet dir without symlinks mounts" \
        "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount --bind "$V/real" "$V/real"
umount "$V/real"

# --make-* goes through the same walk: a symlink below the kubelet dir cannot
# change the propagation of the host's /etc (or of /).
mount --bind /etc /etc && mount --make-private /etc
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount --make-rshared "$V/to-etc"
((RC == 1 || RC == 32)) && ok "--make-rshared through a symlink to /etc is refused" ||
        not_ok "--make-rshared through a symlink to /etc is refused"
is "$(findmnt -no PROPAGATION --mountpoint /etc)" private "... and /etc stays private"
umount /etc

# umount walks the same way: a mount outside the kubelet dir reached through a
# symlinked pod dir stays.
mount -t tmpfs -o size=1m outside-vol "$OUTSIDE/volumes/v"
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount "$KUBELET_DIR/pods/uid-2/volumes/v"
is "$RC" 32 "umount through a symlinked pod dir: exit 32"
like "$ERR" "symlink" "... saying symlink"
check "... and the mount outside stays" mountpoint -q "$OUTSIDE/volumes/v"
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount -R "$KUBELET_DIR/pods/uid-2/volumes"
is "$RC" 32 "umount -R through a symlinked pod dir: exit 32"
check "... and the mount outside stays" mountpoint -q "$OUTSIDE/volumes/v"
umount "$OUTSIDE/volumes/v"

check_fails "/etc never became a mount point" mountpoint -q /etc
check_fails "nor the dir outside" mountpoint -q "$OUTSIDE"
node_down "symlinks"
done_testing
