#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A kubelet with another --root-dir (here $NODE/var/lib/kubelet) and a
# kubemount that was not told: confinement would silently not apply, so a
# pod's symlink could send a mount anywhere.  kubemount fails closed: a
# target outside the default /var/lib/kubelet needs the kubelet dir named
# (--kubelet-dir or KUBEMOUNT_KUBELET_DIR), else mount and umount exit 1
# with one line saying so; nothing is mounted or unmounted.  Named, the
# same targets work and a symlink below the dir is refused; a target outside
# a named dir is not confined (mount(8)'s behaviour).  The same through the
# nsenter shim, and below the default dir when it is the kubelet's.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
SHIM=${NSENTER_COMPAT:-}
[[ -n $SHIM && -x $SHIM ]] || { echo "Bail out! no nsenter-compat binary: set NSENTER_COMPAT (meson test sets it)"; exit 1; }

node_up
unset KUBEMOUNT_KUBELET_DIR # what this test is about: nobody named it
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir
OUTSIDE=$NODE/outside
ELSEWHERE=$NODE/elsewhere
mkdir -p "$V/vol" "$OUTSIDE" "$ELSEWHERE"
ln -s "$OUTSIDE" "$V/evil"

# refused DESC CMD...: exit 1, one line naming the path and the way out, no mount changed.
refused() {
        local desc=$1 before
        shift
        before=$(cat /proc/1/mountinfo)
        run "$@"
        is "$RC" 1 "$desc: exit 1"
        is "$(wc -l <<<"$ERR")" 1 "$desc: one line"
        like "$ERR" "outside the kubelet dir /var/lib/kubelet" "$desc: says the target is outside the default kubelet dir"
        like "$ERR" "--kubelet-dir=DIR or KUBEMOUNT_KUBELET_DIR" "$desc: says how to name it"
        if [[ $(cat /proc/1/mountinfo) == "$before" ]]; then ok "$desc: mount table unchanged"; else
                not_ok "$desc: mount table unchanged"
                diag "$(diff <(echo "$before") /proc/1/mountinfo)"
        fi
}
km_unnamed() { "$KUBEMOUNT" "$@"; }
km_kubelet_unnamed() { in_kubelet env -u KUBEMOUNT_KUBELET_DIR "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt "$@"; }

# ---- not named: refused --------------------------------------------------
for who in host kubelet; do
        km=km_unnamed
        [[ $who == kubelet ]] && km=km_kubelet_unnamed
        refused "[$who] mount on a volume of a kubelet dir nobody named" $km mount -t tmpfs -o size=1m x "$V/vol"
        refused "[$who] mount through a pod's symlink to outside" $km mount -t tmpfs -o size=1m x "$V/evil"
        check_fails "[$who] ... nothing landed outside" is_mounted host "$OUTSIDE"
        refused "[$who] bind onto a volume" $km mount --bind "$ELSEWHERE" "$V/vol"
        refused "[$who] --make-rshared of a volume" $km mount --make-rshared "$V/vol"
        refused "[$who] a target outside every kubelet dir" $km mount -t tmpfs -o size=1m x "$ELSEWHERE"
done
mount -t tmpfs held "$V/vol"
mkdir -p "$V/vol/inner"
mount -t tmpfs held-inner "$V/vol/inner"
for who in host kubelet; do
        km=km_unnamed
        [[ $who == kubelet ]] && km=km_kubelet_unnamed
        refused "[$who] umount of a volume" $km umount "$V/vol"
        refused "[$who] umount -R of a volume" $km umount -R "$V/vol"
        refused "[$who] umount -l of a volume" $km umount -l "$V/vol"
done
check "... still mounted" is_mounted host "$V/vol/inner"
# Nothing to unmount is no confinement matter: mount-utils' safe-not-mounted probe (umount of a fresh
# directory of $TMPDIR, looking for "not mounted") must get umount(8)'s answer, or the kubelet's
# Unmount of an unmounted volume fails for ever.
PROBE=$OUTSIDE/kubelet-detect-safe-umount123
mkdir -p "$PROBE"
for who in host kubelet; do
        km=km_unnamed
        [[ $who == kubelet ]] && km=km_kubelet_unnamed
        run $km umount "$PROBE"
        is "$RC" 32 "[$who] umount of a directory outside, where nothing is mounted: exit 32"
        like "$ERR" "umount: $PROBE: not mounted\.\$" "[$who] ... umount(8)'s 'not mounted.'"
done

# ---- named: works, and confines ------------------------------------------
check "--kubelet-dir named: umount -R of the volume" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount -R "$V/vol"
check_fails "... gone" is_mounted host "$V/vol"
check "--kubelet-dir named: mount on a volume" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m x "$V/vol"
check "... mounted" is_mounted host "$V/vol"
check "... and umount" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount "$V/vol"
run "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m x "$V/evil"
is "$RC" 32 "--kubelet-dir named: a pod's symlink below it is refused (exit 32)"
like "$ERR" "'evil' is a symlink" "... saying so"
check "KUBEMOUNT_KUBELET_DIR named: mount from the kubelet container" \
        in_kubelet env KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt \
        mount -t tmpfs -o size=1m x "$V/vol"
check "... and umount" in_kubelet env KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" "$KUBEMOUNT" \
        --host-mount-ns=/rootfs/proc/1/ns/mnt umount "$V/vol"
run env KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" "$KUBEMOUNT" mount -t tmpfs -o size=1m x "$V/evil"
is "$RC" 32 "KUBEMOUNT_KUBELET_DIR named: a pod's symlink below it is refused (exit 32)"
check "named: a target outside it is allowed, unconfined" \
        "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount -t tmpfs -o size=1m x "$ELSEWHERE"
check "... and unmounts" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount "$ELSEWHERE"
check_fails "nothing ever landed outside" is_mounted host "$OUTSIDE"

# ---- the nsenter shim: KUBEMOUNT_KUBELET_DIR ------------------------------
shim() { "$SHIM" --mount=/proc/1/ns/mnt -- "$@"; }
shim_named() { env KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR" "$SHIM" --mount=/proc/1/ns/mnt -- "$@"; }
refused "[nsenter] mount with no KUBEMOUNT_KUBELET_DIR" shim mount -t tmpfs -o size=1m x "$V/vol"
refused "[nsenter] mount through the symlink" shim mount -t tmpfs -o size=1m x "$V/evil"
mount -t tmpfs held "$V/vol"
refused "[nsenter] umount with no KUBEMOUNT_KUBELET_DIR" shim umount "$V/vol"
check "[nsenter] KUBEMOUNT_KUBELET_DIR named: umount" shim_named umount "$V/vol"
check "[nsenter] ... mount" shim_named mount -t tmpfs -o size=1m x "$V/vol"
check "[nsenter] ... umount" shim_named umount "$V/vol"

# ---- the default is the kubelet's: below it, confined, no name needed ----
# /var/lib of this sandbox only (a tmpfs over it), so /var/lib/kubelet exists.
mount -t tmpfs km-var-lib /var/lib || { echo "Bail out! cannot mount a tmpfs on /var/lib in the sandbox"; exit 1; }
D=/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~empty-dir
mkdir -p "$D/vol"
ln -s "$OUTSIDE" "$D/evil"
check "default kubelet dir: mount below it, nothing named" "$KUBEMOUNT" mount -t tmpfs -o size=1m x "$D/vol"
check "... umount -R" "$KUBEMOUNT" umount -R "$D/vol"
run "$KUBEMOUNT" mount -t tmpfs -o size=1m x "$D/evil"
is "$RC" 32 "default kubelet dir: a pod's symlink below it is refused (exit 32)"
check "... through the nsenter shim too: mount" shim mount -t tmpfs -o size=1m x "$D/vol"
check "... umount" shim umount "$D/vol"
umount /var/lib
check_fails "nothing ever landed outside" is_mounted host "$OUTSIDE"

node_down "kubelet dir"
done_testing
