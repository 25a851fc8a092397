#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 12: what default (unprivileged) VCS containers of the fuse-tools image
# mount through the mount broker, in a sandbox with a network of its own:
#   - bindfs, squashfuse (an image mksquashfs made here) and sshfs (against
#     sshd on loopback, tests/lib/servers.sh, with a key the container's root
#     owns) from detached containers: each mount is in the host below the
#     kubelet dir, the host and a pod read it, `kubemount logs` has the
#     broker's "allowed", the host's mountinfo shows nosuid,nodev and
#     user_id/group_id 1879048192 (the container's root), the daemon runs as
#     that uid; after kill -9 of each daemon its mount is dead (ENOTCONN) and
#     `kubemount gc` removes it;
#   - tmpfs, and ext4 and xfs on loop devices the container is given
#     (--mount /dev/loopN:/dev/loopN): mounted by mount(8) inside, in the
#     host; unmounted from inside (the broker's own mounts); a device the
#     container was not given (its node reached through the kubelet dir) is
#     refused with EPERM and a line in logs;
#   - two containers of the image: what the first writes into its root the
#     second does not see; the file is in the first's writable layer, owned by
#     the mapped root; the store's tree of the image is byte-identical after;
#   - a mount of a type the container may not make: mount(8) gets EPERM
#     ("permission denied", exit 32), and logs has the refusal.
# Needs the fuse-tools image of scripts/build-images (scripts/test builds it).
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/servers.sh" || { echo "Bail out! cannot load tests/lib/servers.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images fuse-tools
node_sandbox --net "$@"
need_tools losetup truncate mkfs.ext4 mkfs.xfs mksquashfs mknod stat sha256sum xargs sort

source "$(dirname "${BASH_SOURCE[0]}")/../lib/loops.sh" || bail_out "cannot load tests/lib/loops.sh"

ROOT_ID=1879048192 # the first container's root on the host (0x70000000, the default id map); each has its own range
# ctr_root NAME: the host id of container NAME's root (its uid_map).
ctr_root() { km exec "$1" -- cat /proc/self/uid_map 2>/dev/null | awk '$1 == 0 { print $2 }'; }
NL=$'\n'
T_START=$(now_ms)

node_up
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
vcs_agent_start
import_images fuse-tools
sshd_up || bail_out "sshd_up failed"
ok "sshd serves $SSHD_SOURCE (ready in $SSHD_READY_MS ms)"
pod_up a

# A pod's volumes, as the host and the container name them.
VOLS=$KUBELET_DIR/pods/uid-a/volumes/kubernetes.io~csi
CVOLS=/var/lib/kubelet/pods/uid-a/volumes/kubernetes.io~csi
# Files the test touches to let a container go on, seen there as /var/lib/kubelet/ctl.
CTL=$KUBELET_DIR/ctl
mkdir -p "$VOLS" "$CTL"
KB=(--mount "$KUBELET_DIR:/var/lib/kubelet:rshared")

# mnt_info PATH: "MOUNT-OPTIONS FSTYPE SOURCE SUPER-OPTIONS" of the (top) mount at PATH in the host.
mnt_info() {
        awk -v p="$1" '$5 == p { for (i = 7; $i != "-"; i++); l = $6 " " $(i + 1) " " $(i + 2) " " $(i + 3) }
                END { if (l == "") exit 1; print l }' /proc/1/mountinfo
}
# ctr_ps NAME: "PID STATUS" of NAME as `kubemount ps -a` lists it ("123 running",
# "123 exited 0"); ctr_status NAME: its STATUS.  Not vcs_status and vcs_pid:
# python3's start alone takes seconds on a busy machine.
ctr_ps() {
        km ps -a 2>/dev/null | awk -v n="$1" '$1 == n { s = $3; if (s == "exited") s = s " " $4; print $2, s; f = 1 }
                END { exit !f }'
}
ctr_status() {
        local l
        l=$(ctr_ps "$1") && echo "${l#* }"
}
# ctr_exited NAME [SECS]: waits (default 15 s) until NAME has exited.
ctr_exited() { wait_for "${2:-15}" _ctr_is_exited "$1"; }
_ctr_is_exited() { [[ $(ctr_status "$1") == exited* ]]; }
# daemon_of NAME: the pid of the first child of NAME's PID 1 (the command it runs).
daemon_of() {
        local p c
        p=$(ctr_ps "$1") && p=${p%% *} && [[ -n $p ]] || return 1
        c=$(cat /proc/"$p"/task/*/children 2>/dev/null) && c=${c%% *} && [[ -n $c ]] || return 1
        echo "$c"
}
# logs_of NAME: kubemount logs NAME, stdout and stderr.
logs_of() { km logs "$1" 2>&1; }
# mount_unique_id PATH: statx's STATX_MNT_ID_UNIQUE of the mount PATH is on, 0 where the kernel has none.
mount_unique_id() {
        python3 - "$1" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
fd = os.open(sys.argv[1], os.O_PATH)
UNIQUE = 0x4000
if libc.statx(fd, b"", 0x1000 | 0x2000, UNIQUE, buf) != 0:  # AT_EMPTY_PATH | AT_STATX_DONT_SYNC
    sys.exit("statx: " + os.strerror(ctypes.get_errno()))
mask = int.from_bytes(buf.raw[0:4], "little")
print(int.from_bytes(buf.raw[0x90:0x98], "little") if mask & UNIQUE else 0)
PY
}
# has_opts OPTIONS WORD...: each WORD is one of the comma-separated OPTIONS.
has_opts() {
        local o=,$1, w
        shift
        for w; do [[ $o == *",$w,"* ]] || return 1; done
}

# ---- FUSE: bindfs, squashfuse, sshfs --------------------------------------

mkdir -p "$KUBELET_DIR/export" "$NODE/sq-src/sub" "$KUBELET_DIR/plugins/kubemount-test"
echo "served by bindfs" >"$KUBELET_DIR/export/data"
echo "served by squashfuse" >"$NODE/sq-src/sub/data"
SQFS=$KUBELET_DIR/plugins/kubemount-test/vol.sqfs
mksquashfs "$NODE/sq-src" "$SQFS" -noappend -all-root -quiet >/dev/null && chmod 0644 "$SQFS" ||
        bail_out "mksquashfs $NODE/sq-src $SQFS"
# The client's key is given to the sshfs container's root once it runs (fuse_volume; each
# container has an id range of its own), as it would own a key it was given.

FUSE_NAMES=()
declare -A FUSE_TARGET=() FUSE_FILE=() FUSE_DAEMON=()
# fuse_volume NAME TYPE FILE WANT [RUN-OPTIONS...] -- COMMAND...: a detached
# container of fuse-tools that may mount fuse and fuse.TYPE runs COMMAND, a
# daemon in the foreground whose last argument is $CVOLS/NAME; the volume
# $VOLS/NAME must hold FILE with WANT.
fuse_volume() {
        local name=$1 type=$2 file=$3 want=$4 t0 info opts super daemon root
        local target=$VOLS/$name
        shift 4
        mkdir -p "$target"
        FUSE_NAMES+=("$name")
        FUSE_TARGET[$name]=$target FUSE_FILE[$name]=$file
        t0=$(now_ms)
        check "[$name] run -d --image fuse-tools --allow-mount fuse --allow-mount fuse.$type" \
                km run -d --name "$name" --image fuse-tools --allow-mount fuse --allow-mount "fuse.$type" \
                --mount-target "$target" "${KB[@]}" "$@"
        root=$(ctr_root "$name")
        like "$root" '^[0-9]+$' "[$name] its root is host id $root"
        if [[ $name == sshfs ]]; then
                chown -R "$root:$root" "$SSHD_KEY_DIR" && touch "$SSHD_KEY_DIR/.ready" || bail_out "chown $SSHD_KEY_DIR"
        fi
        if wait_for 20 is_mounted host "$target"; then
                ok "[$name] the mount is in the host below the kubelet dir ($(($(now_ms) - t0)) ms from run)"
        else
                not_ok "[$name] the mount is in the host below the kubelet dir"
                diag "$(logs_of "$name")" "$(tail -n 20 "$KM_SCRATCH/agent.log")"
        fi
        is "$(cat "$target/$file" 2>&1)" "$want" "[$name] the host reads it"
        is "$(in_pod a cat "$target/$file" 2>&1)" "$want" "[$name] the pod reads it"
        like "$(logs_of "$name")" "kubemount: mount broker: mount -t fuse(\.$type)? [^$NL]* on $target \([^$NL]*\): allowed" \
                "[$name] logs: the broker's line, allowed"
        info=$(mnt_info "$target")
        read -r opts _ _ super <<<"$info"
        holds "[$name] mountinfo: nosuid,nodev ($opts)" has_opts "$opts" nosuid nodev
        holds "[$name] mountinfo: user_id=$root,group_id=$root (the container's root), allow_other" \
                has_opts "$super" "user_id=$root" "group_id=$root" allow_other
        [[ $info == *"user_id=$root"* ]] || diag "mountinfo: $info"
        daemon=$(daemon_of "$name")
        FUSE_DAEMON[$name]=$daemon
        is "$(stat -c '%u %g' "/proc/$daemon" 2>&1) $(cat "/proc/$daemon/comm" 2>&1)" "$root $root $type" \
                "[$name] its daemon (pid $daemon, PID 1's child) runs as the container's root"
        # The container sees what it mounted (the kubelet dir is bound rslave into it).
        is "$(km exec "$name" -- cat "${CVOLS}/$name/$file" 2>&1)" "$want" "[$name] the container reads its own mount"
}

fuse_volume bindfs bindfs data "served by bindfs" -- bindfs -f /var/lib/kubelet/export "$CVOLS/bindfs"
fuse_volume squashfuse squashfuse sub/data "served by squashfuse" -- \
        squashfuse -f "/var/lib/kubelet/plugins/kubemount-test/vol.sqfs" "$CVOLS/squashfuse"
# (It waits for its key; exec keeps its pid, PID 1's child.)
fuse_volume sshfs sshfs "${SSHD_FILE##*/}" "$SSHD_FILE_CONTENT" --mount "$SSHD_KEY_DIR:$SSHD_KEY_DIR:private:ro" -- \
        sh -c 'while [ ! -e "$1/.ready" ]; do sleep 0.05; done; shift; exec "$@"' sh "$SSHD_KEY_DIR" \
        sshfs -f -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" "$CVOLS/sshfs"
# Each of the three had a range of its own, none overlapping another's.
roots=$(for n in bindfs squashfuse sshfs; do stat -c %u "/proc/${FUSE_DAEMON[$n]}"; done | sort -un | xargs)
is "$(wc -w <<<"$roots")" 3 "[idmap] the three daemons run as three host ids ($roots)"
first=${roots%% *}
is "$first" "$ROOT_ID" "[idmap] ... the first range starts at $ROOT_ID (the default id map)"
for r in $roots; do
        (((r - ROOT_ID) % 65536 == 0)) && ok "[idmap] ... $r is the start of a range of 65536" ||
                not_ok "[idmap] ... $r is the start of a range of 65536"
done
like "$(mnt_info "$VOLS/sshfs")" "^[^ ]+ fuse\.sshfs $SSHD_SOURCE " "[sshfs] mountinfo: fuse.sshfs from $SSHD_SOURCE"

# kill -9 of each daemon: its mount is dead until gc removes it.
for name in "${FUSE_NAMES[@]}"; do
        t=${FUSE_TARGET[$name]}
        check "[$name] kill -9 of its daemon (${FUSE_DAEMON[$name]})" kill -9 "${FUSE_DAEMON[$name]}"
        ctr_exited "$name" || diag "$name: $(ctr_status "$name")"
        run stat "$t/${FUSE_FILE[$name]}"
        like "$RC:$ERR" "^1:.*not connected" "[$name] the mount it left is dead (ENOTCONN)"
done
run km gc
is "$RC" 0 "gc exits 0"
GC_OUT=$OUT GC_ERR=$ERR
for name in "${FUSE_NAMES[@]}"; do
        t=${FUSE_TARGET[$name]}
        like "$GC_OUT" "$t" "[$name] gc reports the dead mount"
        check_fails "[$name] ... gone from the host" is_mounted host "$t"
        check_fails "[$name] ... and from the pod" is_mounted pod:a "$t"
        check "[$name] rm" km rm "$name"
done
[[ $GC_OUT == *"$VOLS"* ]] || diag "gc: $GC_OUT" "$GC_ERR"

# ---- tmpfs, ext4 and xfs: mount(8) inside, umount from inside ----------------

# The command of a container that mounts, says so, waits for $CTL/NAME, unmounts:
# sh -c "$MOUNT_WAIT" sh NAME MOUNT-ARGS... (the last one the target).
MOUNT_WAIT='go=/var/lib/kubelet/ctl/$1; shift; for t; do :; done
        mount "$@" || exit $?; echo mounted
        while [ ! -e "$go" ]; do sleep 0.1; done
        umount "$t"; r=$?; echo "umount exit $r"; exit $r'
# kernel_volume NAME TYPE [RUN-OPTIONS...] -- MOUNT-ARGS...: a detached container
# that may mount TYPE mounts with MOUNT-ARGS (their last the container's
# path of $VOLS/NAME); the mount is in the host and the pod (READ: a file
# it must hold, "" for none), then the container unmounts it.
kernel_volume() {
        local name=$1 type=$2 read=$3 target=$VOLS/$1 t0 info opts fstype
        shift 3
        local run=()
        while (($#)) && [[ $1 != -- ]]; do
                run+=("$1")
                shift
        done
        shift
        mkdir -p "$target"
        t0=$(now_ms)
        check "[$name] run -d --image fuse-tools --allow-mount $type -- mount $*" \
                km run -d --name "$name" --image fuse-tools --allow-mount "$type" --mount-target "$target" "${KB[@]}" "${run[@]}" -- \
                sh -c "$MOUNT_WAIT" sh "$name" "$@"
        if wait_for 20 is_mounted host "$target"; then
                ok "[$name] the mount is in the host ($(($(now_ms) - t0)) ms from run)"
        else
                not_ok "[$name] the mount is in the host"
                diag "$(logs_of "$name")"
        fi
        info=$(mnt_info "$target")
        read -r opts fstype source _ <<<"$info"
        is "$fstype" "$type" "[$name] mountinfo: type $type"
        is "$source" "${*: -2:1}" "[$name] mountinfo: the source is ${*: -2:1}, as mount(8) named it"
        holds "[$name] mountinfo: nosuid,nodev ($opts)" has_opts "$opts" nosuid nodev
        check "[$name] the pod sees it" is_mounted pod:a "$target"
        [[ -z $read ]] || is "$(in_pod a cat "$target/$read" 2>&1)" "on $name" "[$name] the pod reads $read"
        like "$(logs_of "$name")" "mount broker: mount -t $type [^$NL]* on $target [^$NL]*: allowed" \
                "[$name] logs: the broker's line, allowed"
        touch "$CTL/$name"
        ctr_exited "$name"
        is "$(ctr_status "$name")" "exited 0" "[$name] umount from inside: the container exits 0"
        run logs_of "$name"
        like "$OUT" "mount broker: umount $target: allowed" "[$name] logs: umount, allowed"
        like "$OUT" "umount exit 0" "[$name] ... umount(8) exits 0"
        check_fails "[$name] ... gone from the host" is_mounted host "$target"
        check_fails "[$name] ... and from the pod" is_mounted pod:a "$target"
        check "[$name] rm" km rm "$name"
}

kernel_volume tmpfs tmpfs "" -- -t tmpfs -o size=1m,mode=0755 km-broker-tmpfs "$CVOLS/tmpfs"

mkdir -p "$NODE/ext4-src" && echo "on ext4" >"$NODE/ext4-src/hello"
new_loop "$NODE/ext4.img" 64M
EXT=$DEV
mkfs.ext4 -q -F -d "$NODE/ext4-src" "$EXT" || bail_out "mkfs.ext4 $EXT"
kernel_volume ext4 ext4 hello --mount "$EXT:$EXT" -- -t ext4 "$EXT" "$CVOLS/ext4"

new_loop "$NODE/xfs.img" 320M
XFS=$DEV
mkfs.xfs -q -f "$XFS" || bail_out "mkfs.xfs $XFS"
kernel_volume xfs xfs "" --mount "$XFS:$XFS" -- -t xfs "$XFS" "$CVOLS/xfs"

# A device it was not given: the xfs loop device's node, reached through the
# kubelet dir (the container cannot make one), in a container given the ext4 one.
mkdir -p "$KUBELET_DIR/devs" "$VOLS/notgiven"
read -r major minor < <(stat -c '0x%t 0x%T' "$XFS")
mknod "$KUBELET_DIR/devs/other" b "$major" "$minor" || bail_out "mknod of $XFS's node"
run km run -d --name notgiven --image fuse-tools --allow-mount xfs --allow-mount ext4 --mount-target "$VOLS/notgiven" --mount "$EXT:$EXT" "${KB[@]}" -- \
        mount -t xfs /var/lib/kubelet/devs/other "$CVOLS/notgiven"
is "$RC:$OUT" "0:notgiven" "[notgiven] run -d: mount -t xfs of a device node it was not given"
ctr_exited notgiven
is "$(ctr_status notgiven)" "exited 32" "[notgiven] mount(8) fails (exit 32)"
run logs_of notgiven
like "$OUT" "[Pp]ermission denied" "[notgiven] ... permission denied (EPERM)"
like "$OUT" "mount broker: mount -t xfs [^$NL]* on $VOLS/notgiven[^$NL]*: refused: device [0-9]+:[0-9]+ was not given to this container" \
        "[notgiven] logs: the broker's refusal names the device"
diag "logs notgiven: ${OUT//$NL/ | }"
check_fails "[notgiven] nothing is mounted in the host" is_mounted host "$VOLS/notgiven"
check "[notgiven] rm" km rm notgiven
# A type the kernel has not loaded (jfs: no module here) with a ':' in the device's path, as
# /dev/block/MAJ:MIN and /dev/disk/by-path/pci-0000:... have: a block filesystem all the same, so
# the device check refuses it before mount(2) sees it (a ':' once passed for a network address).
grep -qw jfs /proc/filesystems && diag "jfs is in this kernel: the device check applies as to any listed block type"
ln "$KUBELET_DIR/devs/other" "$KUBELET_DIR/devs/pci-0000:00:1f.2-other"
run km run -d --name colon --image fuse-tools --allow-mount jfs --mount-target "$VOLS/notgiven" --mount "$EXT:$EXT" "${KB[@]}" -- \
        mount -t jfs "/var/lib/kubelet/devs/pci-0000:00:1f.2-other" "$CVOLS/notgiven"
is "$RC:$OUT" "0:colon" "[colon] run -d: mount -t jfs of a device node with a ':' in its path, not given"
ctr_exited colon
run logs_of colon
like "$OUT" "mount broker: mount -t jfs [^$NL]* on $VOLS/notgiven[^$NL]*: refused: device [0-9]+:[0-9]+ was not given to this container" \
        "[colon] logs: the device check refused it (not 'allowed, but failed')"
check_fails "[colon] nothing is mounted in the host" is_mounted host "$VOLS/notgiven"
check "[colon] rm" km rm colon
rm -f "$KUBELET_DIR/devs/other" "$KUBELET_DIR/devs/pci-0000:00:1f.2-other"

# ---- paths outside every bind, an fd= that is not /dev/fuse --------------------------------

# A container given no bind of the kubelet dir names another pod's volume by its host path,
# made in its own tree: that is no host path, and is refused (it was once taken as one).
mkdir -p "$VOLS/nobind"
run km run -d --name nobind --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/nobind" -- \
        sh -c "mkdir -p '$VOLS/nobind' && mount -t tmpfs -o size=1m km-nobind '$VOLS/nobind'"
is "$RC:$OUT" "0:nobind" "[nobind] run -d (no bind): mount -t tmpfs at the host path of a volume"
ctr_exited nobind
run logs_of nobind
like "$OUT" "mount broker: mount -t tmpfs km-nobind on $VOLS/nobind[^$NL]*: refused: target $VOLS/nobind is in none of the container's binds" \
        "[nobind] logs: refused, the target is in none of its binds"
check_fails "[nobind] nothing is mounted in the host" is_mounted host "$VOLS/nobind"
check "[nobind] rm" km rm nobind

# fd= naming a regular file, not /dev/fuse: refused before anything is mounted (a file of the
# container's own FUSE mount would have hung the broker's FUSE_DEV_IOC_CLONE on it).
mkdir -p "$VOLS/fdfile"
run km run -d --name fdfile --image fuse-tools --allow-mount fuse --mount-target "$VOLS/fdfile" "${KB[@]}" -- \
        sh -c "mount -i -t fuse -o fd=0,rootmode=40000,user_id=0,group_id=0 km-fdfile '$CVOLS/fdfile' </etc/passwd"
is "$RC:$OUT" "0:fdfile" "[fdfile] run -d: mount -t fuse with fd=0 a regular file"
ctr_exited fdfile
run logs_of fdfile
like "$OUT" "mount broker: mount -t fuse km-fdfile on $VOLS/fdfile[^$NL]*: refused: fd=0 is not /dev/fuse" \
        "[fdfile] logs: refused, fd=0 is not /dev/fuse"
check_fails "[fdfile] nothing is mounted in the host" is_mounted host "$VOLS/fdfile"
check "[fdfile] rm" km rm fdfile

# The container cannot move its bind, but it can rename the directories above it in its own
# tree and make new ones in their place: the path then names none of the host's, and the
# broker (which walks the caller's own paths) refuses it rather than mount in the container's tree.
mkdir -p "$VOLS/moved"
# (/k is made at its start, in its own layer: a directory of the image would not rename on overlayfs.)
run km run -d --name moved --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/moved" \
        --mount "$KUBELET_DIR:/k/kubelet:rshared" -- \
        sh -c "mv /k /k.away && mkdir -p '/k/kubelet/${VOLS#"$KUBELET_DIR"/}/moved' &&
                mount -t tmpfs -o size=1m km-moved '/k/kubelet/${VOLS#"$KUBELET_DIR"/}/moved'"
is "$RC:$OUT" "0:moved" "[moved] run -d: rename /k (above its kubelet bind /k/kubelet), mount at the same path"
ctr_exited moved
run logs_of moved
like "$OUT" "mount broker: mount -t tmpfs km-moved on $VOLS/moved[^$NL]*: refused: /k/kubelet is not the bind of $KUBELET_DIR it was given" \
        "[moved] logs: refused, the path is not where its bind is"
check_fails "[moved] nothing is mounted in the host" is_mounted host "$VOLS/moved"
check "[moved] rm" km rm moved

# A relative target is the caller's cwd's: mount.cifs chdir()s into its target and mounts on ".".
mkdir -p "$VOLS/rel"
run km run -d --name rel --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/rel" "${KB[@]}" -- \
        sh -c "cd '$CVOLS/rel' && mount -c -t tmpfs -o size=1m,mode=1777 km-rel . && cd '$CVOLS/rel' &&
                mkdir a b && echo in-a >a/f && mount -c --bind a b && exec sleep 600"
is "$RC:$OUT" "0:rel" "[relative] run -d: cd into the target, mount -c -t tmpfs on '.', then mount -c --bind a b"
if wait_for 15 is_mounted host "$VOLS/rel/b"; then ok "[relative] both mounts are in the host, below the target"; else
        not_ok "[relative] both mounts are in the host, below the target"
        diag "$(logs_of rel)"
fi
like "$(logs_of rel)" "mount broker: mount -t tmpfs km-rel on $VOLS/rel [^$NL]*: allowed" "[relative] logs: allowed, on the absolute target"
is "$(cat "$VOLS/rel/b/f" 2>&1)" "in-a" "[relative] the relative bind source is the caller's cwd's a"
check "[relative] rm -f" km rm -f rel
umount "$VOLS/rel/b" "$VOLS/rel" 2>/dev/null

# ---- the scope: its --mount-target paths, and below them -----------------------------------

# Given the whole kubelet dir and --mount-target of its own volume, a container may not mount over
# another pod's secret, nor the kubelet's pki/; with no --mount-target it mounts nowhere.
VICTIM=$KUBELET_DIR/pods/uid-victim/volumes/kubernetes.io~secret/tok
mkdir -p "$VICTIM" "$KUBELET_DIR/pki" "$VOLS/mine"
echo "victim's token" >"$VICTIM/token"
for t in "$VICTIM" "$KUBELET_DIR/pki" "$VOLS"; do
        c=${t#"$KUBELET_DIR"/}
        run km run --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/mine" "${KB[@]}" -- \
                mount -t tmpfs -o size=1m km-scope "/var/lib/kubelet/$c"
        is "$RC" 32 "[scope] --mount-target of its own volume: mount over ${c} fails (exit 32)"
        check_fails "[scope] ... nothing is mounted there" is_mounted host "$t"
done
is "$(cat "$VICTIM/token" 2>&1)" "victim's token" "[scope] the victim's secret is as it was"
run km run -d --name scope --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/mine" "${KB[@]}" -- \
        sh -c "mount -t tmpfs -o size=1m km-scope '/var/lib/kubelet/${VICTIM#"$KUBELET_DIR"/}'; exec sleep 600"
if wait_for 10 vcs_logs_has scope "refused: target"; then ok "[scope] logs: a refusal"; else not_ok "[scope] logs: a refusal"; fi
like "$(logs_of scope)" "refused: target $VICTIM is not at or below its mount target $VOLS/mine" \
        "[scope] logs: the target is not at or below its mount target"
run km run -d --name scope2 --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/mine/sub" "${KB[@]}" -- sleep 1
is "$RC" 125 "[scope] a second container's --mount-target below a running one's is refused"
like "$ERR" "--mount-target $VOLS/mine/sub: container scope has $VOLS/mine" "[scope] ... naming the other container"
check "[scope] rm -f" km rm -f scope
run km run --image fuse-tools --allow-mount tmpfs "${KB[@]}" -- mount -t tmpfs -o size=1m km-none "$CVOLS/mine"
is "$RC" 32 "[scope] no --mount-target: the mount fails (exit 32)"
check_fails "[scope] ... nothing is mounted" is_mounted host "$VOLS/mine"
for t in "$KUBELET_DIR/pki" "$KUBELET_DIR/pods/uid-a" "$KUBELET_DIR" /etc/x "$VICTIM/../../../../../pki"; do
        run km run --image fuse-tools --allow-mount tmpfs --mount-target "$t" "${KB[@]}" -- true
        is "$RC" 125 "[scope] run --mount-target $t is refused (exit 125, as docker run)"
        like "$ERR" "--mount-target $t: " "[scope] ... with an error naming it"
done

# ---- umount of what host root mounted over the container's mount ------------------------

# The container mounts at T; host root (the kubelet) then mounts its own volume over T: the
# container's umount of T must not take the kubelet's mount away (only the one it made).
mkdir -p "$VOLS/over"
check "[over] run -d: mount -t tmpfs, then stay" km run -d --name over --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/over" "${KB[@]}" -- \
        sh -c "mount -t tmpfs -o size=1m km-over '$CVOLS/over' && exec sleep 600"
wait_for 15 is_mounted host "$VOLS/over" || diag "logs over: $(logs_of over)"
# The record names the mount by the ID the kernel never gives again where it has one
# (statx STATX_MNT_ID_UNIQUE, 6.8): mountinfo's ID of a mount gone goes to the next.
is "$(mount_unique_id "/proc/$(vcs_pid over)/root$CVOLS/over")" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("brokered_unique_ids", [0])[0])' \
                "$KUBEMOUNT_STATE_DIR/containers/over/state.json")" \
        "[over] the record holds the unique ID of the mount it made (0 on a kernel without one)"
mount -t tmpfs -o size=1m km-kubelets "$VOLS/over"
check_fails "[over] the container's umount of T with the kubelet's mount on top fails" \
        km exec over -- umount "$CVOLS/over"
is "$(findmnt -no SOURCE --mountpoint "$VOLS/over" | tail -n 1)" km-kubelets "[over] ... the kubelet's mount is still on top"
like "$(logs_of over)" "mount broker: umount [^$NL]*$VOLS/over[^$NL]*: refused: the mount on top of the target \(ID [0-9]+\) is not the one it made" \
        "[over] logs: refused, the mount on top is not the one it made"
umount "$VOLS/over"
check "[over] with the kubelet's gone, the container's umount of its own works" km exec over -- umount "$CVOLS/over"
check_fails "[over] nothing is mounted at T" is_mounted host "$VOLS/over"
check "[over] rm -f" km rm -f over

# Back to back from one caller: a mount stacked on its own, then both umounts. The kept worker
# answers each call itself, then tells the agent; the agent must take its record of a mount before it hands the
# caller's next call out (the top mount's umount is refused when the record lacks it). An agent whose
# kept workers wait 100 ms between answer and outcome: each next call comes in that window.
# agent_restart [MS]: the agent ends (its containers serve on); the next one's kept workers wait MS.
agent_restart() {
        kill "$AGENT"
        wait_for 15 sh -c '! kill -0 "$1" 2>/dev/null' sh "$AGENT" || bail_out "agent $AGENT did not end"
        node_untrack "$AGENT"
        KUBEMOUNT_TEST_BROKER_REPLY_MS=${1:-} vcs_agent_start
}
agent_restart 100
mkdir -p "$VOLS/stack"
run km run --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/stack" "${KB[@]}" -- \
        sh -c "i=0; while [ \$i -lt 10 ]; do mount -t tmpfs -o size=1m km-s1 '$CVOLS/stack' &&
                mount -t tmpfs -o size=1m km-s2 '$CVOLS/stack' && umount '$CVOLS/stack' &&
                umount '$CVOLS/stack' || exit 1; i=\$((i + 1)); done"
is "$RC" 0 "[stack] 10 times: mount, a mount on top of it, umount, umount, each in the window before its record"
check_fails "[stack] nothing is mounted at T" is_mounted host "$VOLS/stack"
agent_restart
# The page the agent shares with a kept worker is that worker's alone: a container started
# after it (its PID 1 a fork of the agent's) does not map it (a shared anonymous page shows
# as /dev/zero in maps).
check "[page] run -d: a mount, then stay (its kept worker forked)" km run -d --name page1 --image fuse-tools \
        --allow-mount tmpfs --mount-target "$VOLS/stack" "${KB[@]}" -- \
        sh -c "mount -t tmpfs -o size=1m km-page '$CVOLS/stack' && exec sleep 600"
wait_for 15 is_mounted host "$VOLS/stack" || diag "logs page1: $(logs_of page1)"
check "[page] run -d: a second container" km run -d --name page2 --image fuse-tools -- sleep 600
is "$(grep -c /dev/zero "/proc/$(vcs_pid page2)/maps")" 0 "[page] its PID 1 maps no page of the first one's worker"
check "[page] rm -f page1" km rm -f page1
check "[page] rm -f page2" km rm -f page2

# ---- a flood of refused calls ---------------------------------------------------

# 300 refused mounts as fast as the container can make them: its log gets at most 20
# refusals a second and a count of the others, which add up; the container's log stays small.
mkdir -p "$VOLS/flood"
check "[flood] run -d: 300 refused mounts" km run -d --name flood --image fuse-tools --allow-mount ext4 --mount-target "$VOLS/flood" "${KB[@]}" -- \
        sh -c "i=0; while [ \$i -lt 300 ]; do mount -t tmpfs km-flood '$CVOLS/flood' 2>/dev/null; i=\$((i + 1)); done"
ctr_exited flood 120
run logs_of flood
logged=$(grep -c 'mount broker: mount -t tmpfs km-flood .*refused' <<<"$OUT")
left_out=$(grep -o '[0-9]* more refused or failed calls not logged' <<<"$OUT" | awk '{ n += $1 } END { print n + 0 }')
is "$((logged + left_out))" 300 "[flood] every refusal is logged or counted ($logged logged, $left_out counted)"
check "[flood] ... most were counted, not logged" test "$left_out" -gt 0 -a "$logged" -lt 150
check "[flood] rm" km rm flood

# Calls their flags alone refuse (MS_REMOUNT here) are answered in the agent's loop: nothing is
# read and no worker forked for them, so a flood of them costs the agent a notification each.
mkdir -p "$VOLS/flags" "$VOLS/kept"
AGENT=$(vcs_agent_pids | head -n 1)
# run_counting_forks CMD...: run CMD; FORKS = the process or thread starts of the agent itself meanwhile
# (strace -f prefixes each line with its pid; the container's shell forks too); RECEIVED = the
# messages its children received (recvmsg: a kept broker worker's calls).
run_counting_forks() {
        strace -f -qq -e trace=clone,clone3,fork,vfork,recvmsg -o "$KM_SCRATCH/agent.clones" -p "$AGENT" 2>/dev/null &
        local st=$!
        wait_for 5 test -s "/proc/$st/status"
        sleep 0.3
        run "$@"
        kill "$st" 2>/dev/null
        wait "$st" 2>/dev/null
        FORKS=$(grep -c "^$AGENT .*\(clone\|fork\)" "$KM_SCRATCH/agent.clones")
        RECEIVED=$(grep -v "^$AGENT " "$KM_SCRATCH/agent.clones" | grep -c ' recvmsg(')
}
run_counting_forks km run --name flags --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/flags" "${KB[@]}" -- \
        sh -c "i=0; n=0; while [ \$i -lt 100 ]; do mount -o remount,ro '$CVOLS/flags' 2>/dev/null || n=\$((n + 1)); i=\$((i + 1)); done; echo \$n refused"
is "$RC:$OUT" "0:100 refused" "[flags] 100 remounts from a container: each refused"
check "[flags] ... and the agent forked no worker per call ($FORKS process or thread starts of its own for the run and its 100 calls)" \
        test "$FORKS" -lt 30
check "[flags] ... nor gave them to the kept worker: they were answered in the loop ($RECEIVED messages to its children)" \
        test "$RECEIVED" -lt 10

# Calls it serves go to the container's kept worker, forked once: 30 mounts and umounts, no fork each.
run_counting_forks km run --name kept --image fuse-tools --allow-mount tmpfs --mount-target "$VOLS/kept" "${KB[@]}" -- \
        sh -c "i=0; n=0; while [ \$i -lt 30 ]; do mount -t tmpfs -o size=1m km-kept '$CVOLS/kept' && umount '$CVOLS/kept' && n=\$((n + 1)); i=\$((i + 1)); done; echo \$n served"
is "$RC:$OUT" "0:30 served" "[kept] 30 tmpfs mounts and umounts from a container: each served"
check "[kept] ... by its kept worker: the agent forked $FORKS times for the run and its 60 calls" test "$FORKS" -lt 20
check "[kept] ... which received each ($RECEIVED messages to the agent's children)" test "$RECEIVED" -ge 60
holds "[kept] ... and nothing is left mounted there" test -z "$(mounts_in host "$VOLS/kept")"

# ---- a type the container may not mount ------------------------------------

mkdir -p "$VOLS/refused"
run km run -d --name refused --image fuse-tools --allow-mount ext4 --mount-target "$VOLS/refused" "${KB[@]}" -- \
        mount -t tmpfs -o size=1m km-refused "$CVOLS/refused"
is "$RC:$OUT" "0:refused" "[refused] run -d --allow-mount ext4 -- mount -t tmpfs"
ctr_exited refused
is "$(ctr_status refused)" "exited 32" "[refused] mount(8) exits 32"
run logs_of refused
like "$OUT" "[Pp]ermission denied" "[refused] ... permission denied (EPERM)"
like "$OUT" "mount broker: mount -t tmpfs km-refused on $VOLS/refused [^$NL]*refused: fstype tmpfs is not allowed for this container" \
        "[refused] logs: the broker's refusal"
diag "logs refused: ${OUT//$NL/ | }"
check_fails "[refused] nothing is mounted in the host" is_mounted host "$VOLS/refused"
check "[refused] rm" km rm refused

# ---- two containers of one image ---------------------------------------------

# tree_sum DIR: names, types, modes, owners, sizes, times and contents of DIR's tree.
tree_sum() {
        (
                cd "$1" || exit 1
                find . -printf '%y %m %U %G %s %T@ %C@ %p -> %l\n' | LC_ALL=C sort
                find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
        ) | sha256sum
}
check "[layers] run -d w1: waits, then writes /etc/kmtest and /root/x" \
        km run -d --name w1 --image fuse-tools "${KB[@]}" -- sh -c \
        'while [ ! -e /var/lib/kubelet/ctl/w1 ]; do sleep 0.1; done
        echo first >/etc/kmtest && echo first >/root/x && echo written; exec sleep 1000'
STORE_ROOT=$(vcs_json "(get('w1') or {}).get('rootfs')")
like "$STORE_ROOT" "^$KUBEMOUNT_STORE_DIR/" "[layers] ps --json: w1's rootfs is the store's tree ($STORE_ROOT)"
[[ -d $STORE_ROOT ]] || bail_out "no store tree at '$STORE_ROOT'"
SUM_BEFORE=$(tree_sum "$STORE_ROOT")
touch "$CTL/w1"
if wait_for 10 vcs_logs_has w1 '^written$'; then ok "[layers] w1 wrote into its root"; else
        not_ok "[layers] w1 wrote into its root"
        diag "$(logs_of w1)"
fi
run km run --name w2 --image fuse-tools -- sh -c 'cat /etc/kmtest /root/x; r=$?; echo second >/etc/kmtest && cat /etc/kmtest && exit $r'
like "$RC:$OUT:$ERR" "^1:second:.*/etc/kmtest: No such file.*/root/x: No such file" \
        "[layers] w2 sees neither /etc/kmtest nor /root/x of w1's, and writes its own"
is "$(km exec w1 -- cat /etc/kmtest /root/x 2>&1)" "first${NL}first" "[layers] w1 still reads its own"
LAYER=$KUBEMOUNT_STATE_DIR/containers/w1/layer/upper
W1=$(ctr_root w1)
is "$(stat -c '%u %g' "$LAYER/etc/kmtest" "$LAYER/root/x" 2>&1)" "$W1 $W1${NL}$W1 $W1" \
        "[layers] w1's files are in its writable layer, owned by the container's root ($W1)"

# One compromised client owns nothing of another's: a running container's root and a second
# one's are different host ids, so a file the first keeps to itself (0600) in a dir both are
# given is not the second's to read (with one id map for all, it was).
SHARED=$KUBELET_DIR/plugins/kubemount-test/shared
mkdir -p "$SHARED" && chmod 1777 "$SHARED"
run km exec w1 -- sh -c "umask 077 && echo w1-secret >/var/lib/kubelet/plugins/kubemount-test/shared/own && echo kept"
is "$RC:$OUT" "0:kept" "[idmap] w1 keeps a file of its own (0600) in a dir both are given"
is "$(stat -c %u "$SHARED/own" 2>&1)" "$W1" "[idmap] ... owned by w1's root ($W1)"
run km run --name w3 --image fuse-tools "${KB[@]}" -- sh -c 'cat /proc/self/uid_map; cat /var/lib/kubelet/plugins/kubemount-test/shared/own'
unlike "$OUT" "w1-secret" "[idmap] a second container's root cannot read it"
like "$OUT$ERR" "[Pp]ermission denied" "[idmap] ... permission denied"
W3=$(awk '$1 == 0 { print $2 }' <<<"$OUT")
check "[idmap] ... its root ($W3) is another range than w1's ($W1)" test "$W3" -ge $((W1 + 65536)) -o $((W3 + 65536)) -le "$W1"
is "$(cat "$LAYER/etc/kmtest" 2>&1)" "first" "[layers] ... with what it wrote"
check_fails "[layers] the store's tree has no /etc/kmtest" test -e "$STORE_ROOT/etc/kmtest"
check "[layers] rm -f w1" km rm -f w1
is "$(tree_sum "$STORE_ROOT")" "$SUM_BEFORE" "[layers] the store's tree of the image is byte-identical after both"

vcs_cleanup
detach_loops
is "$(losetup -a | grep -c "$NODE/")" 0 "the loop devices are detached"
check "sshd_down" sshd_down
node_down "broker-mounts"
km_cgroups_remove
diag "broker-mounts: $(($(now_ms) - T_START)) ms"
done_testing
