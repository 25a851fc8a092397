#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 2 and 33: a pod swaps a directory of a volume path for a symlink to
# a directory outside the kubelet dir and back (race-swap: millions of times)
# while kubemount mounts on that path, unmounts it and unmounts it
# recursively, hundreds of times each.  No mount may stay outside the kubelet
# dir, a mount reported as done must be on the checked directory, and a
# canary mount tree outside the kubelet dir must survive every unmount.
#
# The volume path is V/v/sub: V/v is the pod's directory, V/v.alt a symlink
# to OUTSIDE, and the two trade places (or sub and sub.alt, a symlink to
# OUTSIDE/sub).  A mount through libmount by path - a mount.TYPE helper, or a
# bind on a kernel without open_tree (KUBEMOUNT_COMPAT=no-mount-api) - lands
# wherever the path leads at the time of the system call: kubemount must find
# its mount by the mount ID of what it checked and undo a stray one by its
# mount ID.  An unmount must not walk the path again after its check.
# KM_RACE_ROUNDS sets the number of tries of each (default 150).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
SWAP=${RACE_SWAP:-}
[[ -n $SWAP && -x $SWAP ]] || { echo "Bail out! no race-swap binary: set RACE_SWAP (meson test sets it)"; exit 1; }
ROUNDS=${KM_RACE_ROUNDS:-150}

# A private kubelet dir: with a shared one, hundreds of binds of a directory
# of it stacked inside it would multiply through propagation.
node_up --private --no-kubelet
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir/scratch
SRC=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir/source
OUTSIDE=$NODE/outside
mkdir -p "$V/v/sub" "$SRC" "$OUTSIDE/sub"
touch "$SRC/from-the-source"
ln -s "$OUTSIDE" "$V/v.alt"
ln -s "$OUTSIDE/sub" "$V/v/sub.alt"

# A mount.kmrace helper (what mount.nfs is to nfs): a tmpfs, mounted by path
# by mount(8) in a process of its own.  On an overlay of /usr/sbin (and
# /sbin, where it is a directory of its own) in this sandbox only.
HELPER='#!/bin/sh
exec mount -i -t tmpfs -o size=1m "$1" "$2"'
for d in /usr/sbin /sbin; do
        [[ -L $d ]] && continue
        u=$NODE/overlay${d//\//-}
        mkdir -p "$u/upper" "$u/work"
        printf '%s\n' "$HELPER" >"$u/upper/mount.kmrace"
        chmod 755 "$u/upper/mount.kmrace"
        mount -t overlay -o "lowerdir=$d,upperdir=$u/upper,workdir=$u/work" km-sbin "$d" ||
                { echo "Bail out! cannot add the mount.kmrace helper to $d"; exit 1; }
done

# swap_start A B / swap_stop: the swapper; after it, A is the directory again.
swap_start() {
        SWAP_A=$1 SWAP_B=$2
        "$SWAP" "$SWAP_A" "$SWAP_B" >"$KM_SCRATCH/swaps" &
        SWAPPER=$!
        node_track "$SWAPPER"
}
# SIGSTOP is delivered when the swapper leaves its renameat2(): wait until it has stopped (state T),
# or one more exchange lands after the check looked (seen under load, as a "not where reported").
swap_pause() {
        kill -STOP "$SWAPPER"
        local state=
        while [[ $state != T && -e /proc/$SWAPPER ]]; do state=$(sed 's/.*) //; s/ .*//' "/proc/$SWAPPER/stat" 2>/dev/null); done
}
swap_resume() { kill -CONT "$SWAPPER"; }
swap_stop() {
        kill -CONT "$SWAPPER"
        kill -TERM "$SWAPPER"
        wait "$SWAPPER"
        SWAPS=$(<"$KM_SCRATCH/swaps")
        [[ -L $SWAP_A ]] && "$SWAP" --once "$SWAP_A" "$SWAP_B"
}
# The pod's directory, wherever it is now (the swapper paused).
real_v() { if [[ -L $V/v ]]; then echo "$V/v.alt"; else echo "$V/v"; fi; }
outside_mounts() { mounts_in host "$OUTSIDE" | wc -l; }
# Unmounts everything at a path (stacked mounts too).
umount_all() { while is_mounted host "$1"; do umount -l "$1" || return; done; }

# ---- mount ----------------------------------------------------------------

# mount_rounds DESC SWAP-A SWAP-B ENV... -- MOUNT-ARGS...: ROUNDS mounts on
# V/v/sub while SWAP-A and SWAP-B trade places.  After each the swapper
# pauses: a mount reported as done must be on the pod's directory, a failed
# one must have left nothing there, and nothing may be outside.
mount_rounds() {
        local desc=$1 a=$2 b=$3 i rc landed=0 strays=0 wrong=0 dir envs=()
        shift 3
        while [[ $1 != -- ]]; do
                envs+=("$1")
                shift
        done
        shift
        swap_start "$a" "$b"
        for ((i = 0; i < ROUNDS; i++)); do
                env "${envs[@]}" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" mount "$@" "$V/v/sub" \
                        2>>"$KM_SCRATCH/mount.err"
                rc=$?
                swap_pause
                dir=$(real_v)/sub
                [[ -L $dir ]] && dir+=.alt # the target itself swapped
                if is_mounted host "$dir"; then
                        ((rc == 0)) || { wrong=$((wrong + 1)) && diag "failed (exit $rc), yet mounted on $dir"; }
                        umount_all "$dir"
                elif ((rc == 0)); then
                        wrong=$((wrong + 1))
                        diag "done, yet not on $dir"
                fi
                ((rc == 0)) && landed=$((landed + 1))
                if [[ $(outside_mounts) != 0 ]]; then
                        strays=$((strays + 1))
                        mounts_in host "$OUTSIDE" | tac | while read -r m; do umount -l "$m"; done
                fi
                swap_resume
        done
        swap_stop
        diag "$desc: $ROUNDS mounts, $landed done, $wrong not where reported, $strays left outside; $SWAPS swaps"
        is "$strays" 0 "$desc: no mount stays outside the kubelet dir ($ROUNDS tries)"
        is "$wrong" 0 "$desc: a mount reported as done is on the checked directory, a failed one is not"
        ((landed > 0)) && ok "$desc: some mounts went through ($landed of $ROUNDS)" ||
                not_ok "$desc: some mounts went through (0 of $ROUNDS: the race was not exercised)"
        unlike "$(sort -u "$KM_SCRATCH/mount.err")" "could not be undone|ssertion|dumped" \
                "$desc: failures are refusals or undone mounts"
        diag "$(sed -E 's/^kubemount: (warning: )?mount:? [^:]*: //' "$KM_SCRATCH/mount.err" | sort | uniq -c | sort -rn | head -5)"
        : >"$KM_SCRATCH/mount.err"
}
mount_rounds "bind by path, a directory above swapped" "$V/v" "$V/v.alt" KUBEMOUNT_COMPAT=no-mount-api -- --bind "$SRC"
mount_rounds "bind by path, the target swapped" "$V/v/sub" "$V/v/sub.alt" KUBEMOUNT_COMPAT=no-mount-api -- --bind "$SRC"
mount_rounds "mount.TYPE helper, a directory above swapped" "$V/v" "$V/v.alt" -- -t kmrace kmrace-src
mount_rounds "bind on the held fd (open_tree), a directory above swapped" "$V/v" "$V/v.alt" -- --bind "$SRC"

# ---- umount and umount -R: a canary tree outside must survive -------------

# umount_rounds DESC ENV... -- UMOUNT-ARGS...: ROUNDS unmounts of V/v/sub (a
# tmpfs with a tmpfs inside) while V/v and V/v.alt swap; OUTSIDE/sub holds the
# same tree.
umount_rounds() {
        local desc=$1 i done=0 lost=0 d envs=()
        shift
        while [[ $1 != -- ]]; do
                envs+=("$1")
                shift
        done
        shift
        mount -t tmpfs canary "$OUTSIDE/sub" && mkdir "$OUTSIDE/sub/x" && mount -t tmpfs canary-x "$OUTSIDE/sub/x" ||
                { echo "Bail out! cannot mount the canary"; exit 1; }
        swap_start "$V/v" "$V/v.alt"
        for ((i = 0; i < ROUNDS; i++)); do
                swap_pause
                d=$(real_v)/sub
                if ! is_mounted host "$d"; then
                        mount -t tmpfs victim "$d" && mkdir -p "$d/x" && mount -t tmpfs victim-x "$d/x"
                fi
                if ! is_mounted host "$OUTSIDE/sub/x"; then
                        lost=$((lost + 1))
                        umount_all "$OUTSIDE/sub"
                        mount -t tmpfs canary "$OUTSIDE/sub" && mkdir -p "$OUTSIDE/sub/x" &&
                                mount -t tmpfs canary-x "$OUTSIDE/sub/x"
                fi
                swap_resume
                env "${envs[@]}" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" umount "$@" "$V/v/sub" \
                        2>>"$KM_SCRATCH/umount.err" && done=$((done + 1))
        done
        swap_stop
        is_mounted host "$OUTSIDE/sub/x" || lost=$((lost + 1))
        diag "$desc: $ROUNDS unmounts, $done done, canary lost $lost times; $SWAPS swaps"
        is "$lost" 0 "$desc: the canary outside the kubelet dir survives ($ROUNDS tries)"
        ((done > 0)) && ok "$desc: some unmounts went through ($done of $ROUNDS)" ||
                not_ok "$desc: some unmounts went through (0 of $ROUNDS: the race was not exercised)"
        diag "$(sed -E 's/^kubemount: umount: [^:]*: //' "$KM_SCRATCH/umount.err" | sort | uniq -c | sort -rn | head -5)"
        umount_all "$OUTSIDE/sub/x"
        umount_all "$OUTSIDE/sub"
        umount_all "$V/v/sub/x"
        umount_all "$V/v/sub"
        : >"$KM_SCRATCH/umount.err"
}
umount_rounds "umount -l" -- -l
umount_rounds "umount -R" -- -R
# Kernels before 5.2 have neither the mount API nor openat2: the walk of kubemount's own.
umount_rounds "umount -R, kernel without openat2" KUBEMOUNT_COMPAT=no-mount-api -- -R
for d in /usr/sbin /sbin; do [[ -L $d ]] || umount "$d"; done

is "$(mounts_in host "$NODE" | grep -vx -e "$NODE" -e "$KUBELET_DIR")" "" "nothing left mounted on the node"
node_down "mount race"
done_testing
