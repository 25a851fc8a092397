#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The old-kernel fallbacks give the same answers: is-mountpoint (mount point,
# plain dir, self bind, file bind, /, symlink to a mount point, missing path,
# dead FUSE mount), check --json, refs and setup, each run with and without
# KUBEMOUNT_COMPAT=old-kernel: identical stdout, stderr and exit status.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
need_tools bindfs strace
[[ -c /dev/fuse ]] || bail_out "no /dev/fuse (modprobe fuse)"

# same DESC ARGS...: kubemount ARGS with new APIs and with the fallbacks.
same() {
        local desc=$1 new old
        shift
        run "$KUBEMOUNT" "$@"
        new="exit $RC"$'\n'"$OUT"$'\n'"$ERR"
        run env KUBEMOUNT_COMPAT=old-kernel "$KUBEMOUNT" "$@"
        old="exit $RC"$'\n'"$OUT"$'\n'"$ERR"
        if [[ $new == "$old" ]]; then
                ok "$desc: same with KUBEMOUNT_COMPAT=old-kernel (exit $RC)"
        else
                not_ok "$desc: same with KUBEMOUNT_COMPAT=old-kernel"
                diag "new APIs:" "$new" "fallbacks:" "$old"
        fi
}
# mp_case DESC PATH WANT-EXIT [TODO-REASON for the comparisons]
mp_case() {
        run "$KUBEMOUNT" is-mountpoint "$2"
        is "$RC" "$3" "is-mountpoint $1: exit $3"
        KM_TODO=${4:-}
        same "is-mountpoint $1" is-mountpoint "$2"
        same "is-mountpoint --json $1" is-mountpoint --json "$2"
        KM_TODO=""
}

node_up --no-kubelet
P=$KUBELET_DIR/pods/uid-1/volumes
mkdir -p "$P"/{mp,plain,self,fuse,src} "$P/deep/er"
touch "$P/file" "$P/file-target"
mount -t tmpfs -o size=1m mp "$P/mp"
mount --bind "$P/self" "$P/self"
mount --bind "$P/file" "$P/file-target"
mount -t tmpfs -o size=1m deep "$P/deep/er"
ln -s mp "$P/link-to-mp"
ln -s "$P/deep" "$P/link-to-dir"

mp_case "of a tmpfs mount point" "$P/mp" 0
mp_case "of a plain dir" "$P/plain" 1
mp_case "of a dir bound onto itself" "$P/self" 0
# Kubelets bind files too (subPath files, /etc/hosts, termination logs).
mp_case "of a file bound onto a file" "$P/file-target" 0
mp_case "of a plain file" "$P/file" 1
mp_case "of /" / 0
mp_case "of /proc" /proc 0
mp_case "of the kubelet dir (a self bind)" "$KUBELET_DIR" 0
mp_case "of a symlink to a mount point" "$P/link-to-mp" 0
mp_case "through a symlinked dir" "$P/link-to-dir/er" 0
mp_case "of a missing path" "$P/missing" 2
mp_case "of a relative path" "." 1

if command -v bindfs >/dev/null && [[ -c /dev/fuse ]]; then
        spawn bindfs -f "$P/src" "$P/fuse"
        wait_for 10 is_mounted host "$P/fuse"
        "$KUBEMOUNT" is-mountpoint "$P/fuse" >/dev/null
        kill -KILL "$SPAWNED"
        wait "$SPAWNED" 2>/dev/null
        # Past the daemon's attr_timeout, where the new path reports it.
        wait_for 5 eval '"$KUBEMOUNT" is-mountpoint "$P/fuse" 2>/dev/null; (($? == 3))'
        mp_case "of a dead FUSE mount" "$P/fuse" 3
        umount "$P/fuse"
else
        not_ok "is-mountpoint of a dead FUSE mount: bindfs or /dev/fuse missing"
fi

# refs: a tmpfs and two binds of it.
mkdir -p "$P"/{r1,r2,r3}
mount -t tmpfs -o size=1m refs "$P/r1"
mount --bind "$P/r1" "$P/r2"
mount --bind "$P/r1" "$P/r3"
run "$KUBEMOUNT" refs "$P/r1"
is "$OUT" "$P/r2"$'\n'"$P/r3" "refs lists the other two mount points"
same "refs" refs "$P/r1"
same "refs --json" refs --json "$P/r2"
same "refs of a plain dir" refs "$P/plain"
same "list --json" list --json
node_down "is-mountpoint and refs"

# setup and check: a fresh private node per mode, outputs compared with the
# node's path (and peer group numbers) normalized.
declare -A setup_out
for mode in new old; do
        node_up --private --no-kubelet
        compat=()
        [[ $mode == old ]] && compat=(env KUBEMOUNT_COMPAT=old-kernel)
        km=("${compat[@]}" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR")
        same "[$mode node] check --json before setup" --kubelet-dir="$KUBELET_DIR" check --json
        before=$(mount_count)
        out=""
        for _ in 1 2 3; do
                run "${km[@]}" setup --json
                out+="exit $RC"$'\n'"$OUT"$'\n'"$ERR"$'\n'
        done
        run "${km[@]}" check --json
        out+="exit $RC"$'\n'"$OUT"$'\n'"$ERR"$'\n'
        out+="mounts added: $(($(mount_count) - before))"$'\n'
        out+="propagation: $(findmnt -no PROPAGATION --mountpoint "$KUBELET_DIR")"
        setup_out[$mode]=$(sed -e "s#$NODE#NODE#g" -e 's/peer group [0-9]*/peer group N/' <<<"$out")
        same "[$mode node] check --json after setup" --kubelet-dir="$KUBELET_DIR" check --json
        same "[$mode node] check" --kubelet-dir="$KUBELET_DIR" check
        same "[$mode node] setup again" --kubelet-dir="$KUBELET_DIR" setup
        node_down "setup with $mode APIs"
done
if [[ ${setup_out[new]} == "${setup_out[old]}" ]]; then
        ok "setup x3 + check: same output, exit status, mounts and propagation with the fallbacks"
else
        not_ok "setup x3 + check: same output, exit status, mounts and propagation with the fallbacks"
        diag "new APIs:" "${setup_out[new]}" "fallbacks:" "${setup_out[old]}"
fi
like "${setup_out[old]}" "mounts added: 1" "setup with the fallbacks adds one mount"
like "${setup_out[old]}" "propagation: shared" "setup with the fallbacks makes the kubelet dir shared"

# The fallbacks really are taken: no statmount(2) or mount_setattr(2).
if command -v strace >/dev/null; then
        node_up --private --no-kubelet
        strace -f -qq -o "$KM_SCRATCH/strace.new" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" setup >/dev/null
        "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" check >/dev/null
        umount "$KUBELET_DIR"
        strace -f -qq -o "$KM_SCRATCH/strace.old" env KUBEMOUNT_COMPAT=old-kernel \
                "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" setup >/dev/null
        strace -f -qq -o "$KM_SCRATCH/strace.old-check" env KUBEMOUNT_COMPAT=old-kernel \
                "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" check >/dev/null
        strace -f -qq -o "$KM_SCRATCH/strace.new-check" "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" check >/dev/null
        new_calls=$(cat "$KM_SCRATCH/strace.new" "$KM_SCRATCH/strace.new-check" |
                grep -oE '^[0-9]+ +(statmount|syscall_0x1c9|mount_setattr)' | awk '{print $2}' | sort -u | xargs)
        old_calls=$(cat "$KM_SCRATCH/strace.old" "$KM_SCRATCH/strace.old-check" |
                grep -oE '^[0-9]+ +(statmount|syscall_0x1c9|mount_setattr)' | awk '{print $2}' | sort -u | xargs)
        like "$new_calls" "mount_setattr" "without KUBEMOUNT_COMPAT, setup uses mount_setattr(2)"
        like "$new_calls" "statmount|syscall_0x1c9" "without KUBEMOUNT_COMPAT, check uses statmount(2)"
        is "$old_calls" "" "with KUBEMOUNT_COMPAT=old-kernel, neither statmount(2) nor mount_setattr(2)"
        # Look at the mask asked for (4th argument), not the one the kernel returns.
        if grep -qE 'statx\([^,]*, [^,]*, [^,]*, [A-Z_|]*STATX_MNT_ID' "$KM_SCRATCH/strace.old" \
                "$KM_SCRATCH/strace.old-check"; then
                not_ok "with KUBEMOUNT_COMPAT=old-kernel, no statx(STATX_MNT_ID*)"
        else ok "with KUBEMOUNT_COMPAT=old-kernel, no statx(STATX_MNT_ID*)"; fi
        node_down "strace"
else
        not_ok "the fallbacks are taken: strace is not installed"
fi

# Mounting on each kernel level: 6.x (new mount API), 5.4 (open_tree/fsopen,
# no mount_setattr) and before 5.2 (libmount only).  Same results each time.
node_up --no-kubelet
V=$KUBELET_DIR/pods/uid-1/volumes
mkdir -p "$V"/{src,fs,bind,rbind}
for compat in "" old-kernel no-mount-api; do
        label=${compat:-new-api}
        km=(env KUBEMOUNT_COMPAT=$compat "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR")
        check "[$label] tmpfs with options mounts" "${km[@]}" mount -t tmpfs -o size=2m,nosuid,mode=0750 vol "$V/fs"
        like "$(findmnt -no OPTIONS --mountpoint "$V/fs")" "nosuid.*size=2048k.*mode=750" "[$label] ... with its options"
        check "[$label] a read-only bind mounts" "${km[@]}" mount --bind -o ro "$V/src" "$V/bind"
        run touch "$V/bind/x"
        like "$ERR" "Read-only file system" "[$label] ... read-only"
        check "[$label] an rbind mounts" "${km[@]}" mount --rbind "$V/src" "$V/rbind"
        check "[$label] umount -R of it" "${km[@]}" umount -R "$V/rbind"
        for m in bind fs; do
                check "[$label] umount $m" "${km[@]}" umount "$V/$m"
        done
        run "${km[@]}" mount -t tmpfs -o size=bogus vol "$V/fs"
        is "$RC" 32 "[$label] a bad option: exit 32"
        like "$ERR" "$V/fs" "[$label] ... naming the target"
done
node_down "kernel levels"

done_testing
