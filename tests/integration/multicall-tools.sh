#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The multi-call tools (issue 11, point 4): a kubelet container whose view has
# no blkid, mkfs, fsck or resize tools of its own, with the links of
# build/libexec-bin first in its PATH, formats, checks and resizes ext4 and
# xfs on loop devices as mount-utils' SafeFormatAndMount and resizer do; each
# tool runs from the fuse-tools image with only the devices it names.  Their
# output is compared with the host's own tools.  Needs the image that
# scripts/build-images makes (scripts/test builds it first).
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the kubelet's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images fuse-tools
MC=${KM_MULTICALL_DIR:-${KM_BUILD_DIR:-}/libexec-bin}
[[ -L $MC/blkid ]] || bail_out "no multi-call links in $MC (ninja builds them: build/libexec-bin)"
node_sandbox "$@"
need_tools losetup truncate blkid mkfs.ext4 dumpe2fs debugfs fsck blockdev xfs_io

source "$(dirname "${BASH_SOURCE[0]}")/../lib/loops.sh" || bail_out "cannot load tests/lib/loops.sh"

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
import_images fuse-tools

# The kubelet: the host's /usr read-only with /usr/sbin (util-linux's blkid
# and fsck, e2fsprogs, xfsprogs) hidden, and the links first in its PATH.
ctr_up kubelet "/:/rootfs:rslave" "$KUBELET_DIR:$KUBELET_DIR:rshared" "$MC:$MC:rprivate" ||
        bail_out "kubelet container did not start"
in_kubelet mount -t tmpfs -o ro,mode=755 no-sbin /usr/sbin || bail_out "cannot hide /usr/sbin in the kubelet"
KPATH=$MC:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
run in_kubelet env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh -c \
        'for t in blkid mkfs.ext4 mkfs.xfs fsck e2fsck resize2fs xfs_growfs xfs_repair dumpe2fs xfs_io blockdev; do
                command -v $t; done'
is "$OUT" "" "the kubelet's own view has no blkid, mkfs, fsck or resize tools"
# kt TOOL ARGS...: what the kubelet runs, found through its PATH.
kt() { in_kubelet env PATH="$KPATH" "$@"; }
run kt sh -c 'command -v mkfs.ext4'
is "$OUT" "$MC/mkfs.ext4" "its PATH finds mkfs.ext4 in the multi-call dir"

# ---- ext4: GetDiskFormat, format, check, resize -------------------------------------
new_loop "$NODE/ext4.img" 64M
EXT=$DEV
run kt blkid -p -s TYPE -s PTTYPE -o export "$EXT"
is "$RC:$OUT:$ERR" "2::" "blkid on a blank device: exit 2, no output (mount-utils: unformatted)"
run blkid -p -s TYPE -s PTTYPE -o export "$EXT"
is "$RC:$OUT" "2:" "... as the host's blkid"
check "mkfs.ext4 -F -m0 formats it" kt mkfs.ext4 -F -m0 -L kmext4 "$EXT"
run kt blkid -p -s TYPE -s PTTYPE -o export "$EXT"
got="$RC:$OUT:$ERR"
run blkid -p -s TYPE -s PTTYPE -o export "$EXT"
is "$got" "0:$OUT:" "blkid prints what the host's prints"
like "$OUT" $'(^|\n)TYPE=ext4($|\n)' "... TYPE=ext4"
check "fsck -a exits 0" kt fsck -a "$EXT"
check "e2fsck -n exits 0" kt e2fsck -n "$EXT"
run kt blockdev --getsize64 "$EXT"
is "$RC:$OUT" "0:$((64 << 20))" "blockdev --getsize64 (NeedResize)"
run kt dumpe2fs -h "$EXT"
got=$OUT
run dumpe2fs -h "$EXT"
is "$got" "$OUT" "dumpe2fs -h prints what the host's prints"
blocks() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Block count/ { gsub(/ /, "", $2); print $2 }'; }
before=$(blocks "$EXT")
truncate -s 96M "$NODE/ext4.img" && losetup -c "$EXT"
check "resize2fs grows it offline" kt resize2fs "$EXT"
after=$(blocks "$EXT")
((after > before)) && ok "... from $before to $after blocks" || not_ok "resize2fs grew the filesystem ($before -> $after)"

# Online, as NodeExpandVolume does: the device is mounted at a volume's global mount.
GM=$KUBELET_DIR/plugins/kubernetes.io/csi/pv/ext4-pv/globalmount
mkdir -p "$GM" && mount "$EXT" "$GM" || bail_out "cannot mount $EXT"
echo data >"$GM/file"
before=$after
truncate -s 128M "$NODE/ext4.img" && losetup -c "$EXT"
run kt resize2fs "$EXT"
like "$OUT$ERR" "is mounted on $GM; on-line resizing required" "resize2fs finds the device mounted at the global mount"
after=$(blocks "$EXT")
if ((RC == 0 && after > before)); then
        ok "resize2fs grows it online, from $before to $after blocks"
else
        # kubemount makes EXT4_IOC_RESIZE_FS itself (no container holds CAP_SYS_RESOURCE of the host),
        # which root lacks on some machines (TESTBED.md); the node tier's j-iscsi grows one for real.
        kt_out="exit $RC: $OUT $ERR"
        run resize2fs "$EXT"
        if ((RC != 0)) && [[ $ERR == *"Permission denied to resize"* ]]; then
                skip "resize2fs grows it online" "the host's own resize2fs cannot either here (no CAP_SYS_RESOURCE)"
                like "$kt_out" "kubemount: resize2fs: Permission denied to resize filesystem \\($GM\\)" \
                        "... kubemount's own grow got the same answer from the kernel"
        else
                not_ok "resize2fs grows it online ($before -> $after blocks)"
                diag "$kt_out" "the host's resize2fs: exit $RC"
        fi
fi
is "$(cat "$GM/file")" "data" "... the data is still there"
check_fails "mkfs.ext4 refuses the mounted device" kt mkfs.ext4 -F -m0 "$EXT"
is "$(blkid -p -s TYPE -o value "$EXT")" "ext4" "... which keeps its filesystem"
umount "$GM"

# fsck's own status 1 (errors corrected), which mount-utils takes as fine: a wrong free
# blocks count in a filesystem marked not clean; the host's fsck fixes a copy.
truncate -s 32M "$NODE/bad.img" && mkfs.ext4 -q -F "$NODE/bad.img" &&
        debugfs -w -R "ssv free_blocks_count 7" "$NODE/bad.img" 2>/dev/null &&
        debugfs -w -R "ssv state 0" "$NODE/bad.img" 2>/dev/null &&
        cp --sparse=always "$NODE/bad.img" "$NODE/bad-copy.img" || bail_out "cannot make a damaged ext4"
run fsck -a "$NODE/bad-copy.img"
host_rc=$RC
new_loop "$NODE/bad.img" 32M
run kt fsck -a "$DEV"
is "$RC:$host_rc" "1:1" "fsck -a that corrects errors exits 1, as the host's"

# ---- xfs -----------------------------------------------------------------------------
# By default the host's xfsprogs (policy host: mkfs.xfs and xfs_growfs need CAP_SYS_ADMIN of
# the host, and a privileged default of a mutable tag would be host root for whoever pushes
# it); a root-owned vcs.d entry opts in to the image, privileged, pinned by digest.
new_loop "$NODE/xfs.img" 320M
XFS=$DEV
run km vcs list
like "$OUT" $'(^|\n)xfs +- +host ' "vcs list: xfs is the host's by default (policy host, no image)"
run kt mkfs.xfs -N "$XFS"
is "$RC" 0 "mkfs.xfs -N (policy host) runs the host's mkfs.xfs"
export KUBEMOUNT_VCS_DIR=$NODE/vcs.d
mkdir -p "$KUBEMOUNT_VCS_DIR"
FT=$(km image import --json "oci:$KM_BUILD_DIR/images/fuse-tools" fuse-tools:latest |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"])')
check "image fuse-tools@$FT" km image import -q "oci:$KM_BUILD_DIR/images/fuse-tools" "fuse-tools@$FT"
echo '{"mappings": [{"types": ["xfs"], "image": "fuse-tools@'"$FT"'", "privileged": true}]}' \
        >"$KUBEMOUNT_VCS_DIR/xfs.json"
run km vcs list
like "$OUT" $'(^|\n)xfs +fuse-tools@'"$FT"$' [^\n]*\\(privileged\\)' "vcs list: the vcs.d entry maps xfs to the pinned image, privileged"
run kt blkid -p -s TYPE -s PTTYPE -o export "$XFS"
is "$RC:$OUT:$ERR" "2::" "blkid on a blank device for xfs: exit 2"
check "mkfs.xfs formats it" kt mkfs.xfs -L kmxfs "$XFS"
run kt blkid -p -s TYPE -s PTTYPE -o export "$XFS"
got="$RC:$OUT:$ERR"
run blkid -p -s TYPE -s PTTYPE -o export "$XFS"
is "$got" "0:$OUT:" "blkid prints TYPE=xfs as the host's does"
check "xfs_repair -n exits 0" kt xfs_repair -n "$XFS"
check "fsck -a on xfs exits 0 (fsck.xfs)" kt fsck -a "$XFS"
GX=$KUBELET_DIR/plugins/kubernetes.io/csi/pv/xfs-pv/globalmount
mkdir -p "$GX" && mount "$XFS" "$GX" || bail_out "cannot mount $XFS"
datablocks() { xfs_io -c statfs "$1" | awk -F' = ' '/^geom.datablocks/ { print $2 }'; }
before=$(datablocks "$GX")
run kt xfs_io -c statfs "$GX"
like "$OUT" "geom.datablocks = $before" "xfs_io -c statfs MOUNTPOINT (NeedResize) sees the mounted filesystem"
truncate -s 400M "$NODE/xfs.img" && losetup -c "$XFS"
check "xfs_growfs -d MOUNTPOINT grows it" kt xfs_growfs -d "$GX"
after=$(datablocks "$GX")
((after > before)) && ok "... from $before to $after blocks" || not_ok "xfs_growfs grew it ($before -> $after)"
umount "$GX"

# ---- a read-only blank device is refused, as on the host -------------------------------
new_loop "$NODE/ro.img" 64M -r
RO=$DEV
run kt blkid -p -s TYPE -s PTTYPE -o export "$RO"
is "$RC:$OUT" "2:" "blkid on a read-only blank device: exit 2"
run mkfs.ext4 -F -m0 "$RO"
host_rc=$RC
run kt mkfs.ext4 -F -m0 "$RO"
((RC != 0)) && ok "mkfs.ext4 on a read-only device fails (exit $RC; the host's: $host_rc)" ||
        not_ok "mkfs.ext4 on a read-only device fails"
run blkid -p -s TYPE -o value "$RO"
is "$RC:$OUT" "2:" "... and it stays blank"

# ---- the container sees the devices named, nothing else ------------------------------
run blkid -c /dev/null -L kmxfs
is "$OUT" "$XFS" "the host's blkid finds the xfs volume by label"
run kt blkid -c /dev/null -L kmxfs
is "$RC:$OUT" "2:" "the tool's container, given no device, finds no disk of the host"
run kt blkid -c /dev/null -L kmxfs "$EXT"
is "$RC:$OUT" "2:" "... nor, given the ext4 device, the xfs one"
run kt blkid -c /dev/null -L kmext4 "$EXT"
is "$RC:$OUT" "0:$EXT" "... which it finds by its label"

# ---- argv passes through unchanged ---------------------------------------------------
LINKS="$KUBELET_DIR/plugins/dev links"
mkdir -p "$LINKS" && ln -s "$EXT" "$LINKS/disk one"
run kt blkid -p -o export "$LINKS/disk one"
got="$RC:$OUT"
run blkid -p -o export "$LINKS/disk one"
is "$got" "$RC:$OUT" "a device named by a symlink with a space: blkid prints what the host's prints"
label=$'a b"\'$*\\;'
check "mkfs.ext4 -L with quotes, a space, \$, * and \\" kt mkfs.ext4 -q -F -L "$label" "$LINKS/disk one"
is "$(blkid -p -s LABEL -o value "$EXT")" "$label" "... the label reached mkfs as given"

# ---- devices a tool may not be given: refused before anything runs --------------------
# A block node outside /dev (here through a symlink in the kubelet dir), a mounted device
# for a tool that writes, and any device on a disk that holds a filesystem of the host
# mounted outside the kubelet dir (the root disk; a partitioned loop device stands in too).
# (A container run and removed would not show here; that the refusal line is the device check's
# own, made before the container is planned, is what says none ran.)
never_ran() { is "$(km ps -a --json | grep -c '"name"')" 0 "$1: no container is left"; }
label_of() { blkid -p -s LABEL -o value "$1" 2>/dev/null; }
mknod "$NODE/blk-outside" b "$(stat -c '0x%t' "$EXT")" "$(stat -c '0x%T' "$EXT")" &&
        ln -s "$NODE/blk-outside" "$LINKS/outside" || bail_out "mknod $NODE/blk-outside"
before=$(label_of "$EXT")
run kt mkfs.ext4 -F "$LINKS/outside"
is "$RC" 125 "mkfs.ext4 on a symlink to a block node outside /dev: exit 125"
is "$ERR" "kubemount: mkfs.ext4: $LINKS/outside: is $NODE/blk-outside, which is not in /dev: refused" \
        "... one line naming the path and where it leads"
is "$(label_of "$EXT")" "$before" "... the device is as it was"
never_ran "symlink out of /dev"
run kt blkid -p "$NODE"
is "$RC" 2 "a directory where a device is wanted: the tool's own answer (blkid: exit 2)"

VOL=$KUBELET_DIR/pods/uid-dev/volumes/kubernetes.io~csi/pv-dev/mount
mkdir -p "$VOL" && mount "$EXT" "$VOL" || bail_out "mount $EXT"
for tool in "mkfs.ext4 -F" "e2fsck -f -y" "fsck -a"; do
        read -ra t <<<"$tool"
        run kt "${t[@]}" "$EXT"
        is "$RC:$ERR" "125:kubemount: ${t[0]}: $EXT: is mounted at $VOL: refused" "${t[0]} on a device mounted at a volume: refused, naming the mount"
done
run kt blkid -p -s TYPE -o value "$EXT"
is "$RC:$OUT" "0:ext4" "blkid (it only reads) on the mounted device still works"
umount "$VOL"

HOSTDATA=$NODE/host-data # outside the kubelet dir: a filesystem of the host's
mkdir -p "$HOSTDATA" && mount "$EXT" "$HOSTDATA" || bail_out "mount $EXT"
for tool in "blkid -p" "mkfs.ext4 -F" "dumpe2fs -h"; do
        read -ra t <<<"$tool"
        run kt "${t[@]}" "$EXT"
        is "$RC:$ERR" "125:kubemount: ${t[0]}: $EXT: is on the disk of the host's $HOSTDATA (not a volume of the kubelet dir $KUBELET_DIR): refused" \
                "${t[0]} on a device of a host filesystem: refused"
done
umount "$HOSTDATA"
never_ran "refused devices"

# A disk with two partitions, the first mounted outside the kubelet dir (as /boot would be):
# neither the second partition nor the whole disk may be given to a tool.
truncate -s 40M "$NODE/parts.img"
python3 - "$NODE/parts.img" <<'PY' || bail_out "cannot write a partition table"
import struct, sys
def entry(start, count):  # a Linux partition (type 0x83), LBA only
    return struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, count)
mbr = bytearray(512)
mbr[446:478] = entry(2048, 32768) + entry(34816, 40960)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
new_loop "$NODE/parts.img" 40M -P
PARTS=$DEV
# Probed, not assumed: some kernels split no MBR (this machine's 6.18 has no
# CONFIG_MSDOS_PARTITION); the node tier's j-iscsi runs the same on Debian's 6.1.
if wait_for 5 test -b "${PARTS}p2"; then
        mkfs.ext4 -q "${PARTS}p1" && mkdir -p "$NODE/host-boot" && mount "${PARTS}p1" "$NODE/host-boot" ||
                bail_out "mount ${PARTS}p1"
        for dev in "${PARTS}p2" "$PARTS"; do
                run kt mkfs.ext4 -F "$dev"
                is "$RC:$ERR" "125:kubemount: mkfs.ext4: $dev: is on the disk of the host's $NODE/host-boot (not a volume of the kubelet dir $KUBELET_DIR): refused" \
                        "mkfs.ext4 on $dev, of the disk whose p1 the host has mounted: refused"
        done
        umount "$NODE/host-boot"
        run kt mkfs.ext4 -q -F "${PARTS}p2"
        is "$RC" 0 "... once p1 is unmounted, ${PARTS}p2 is a volume's to format"
else
        skip "a partition of a disk the host has mounted" "this kernel made no ${PARTS}p1 (no MBR support); j-iscsi in the node tier tests it"
fi
root=$(findmnt -no SOURCE --mountpoint / | head -n 1)
if [[ $root == /dev/* && -b $root ]]; then
        run kt blkid -p "$root"
        is "$RC" 125 "blkid on this machine's root device ($root): refused (exit 125)"
        like "$ERR" "is on the disk of the host's /" "... as the disk of the host's /"
else
        diag "the root filesystem is $root, no block device: the partition case above stands in for it"
fi

# ---- exit statuses and kubemount's own failures ----------------------------------------
run e2fsck -n /nonexistent
host_rc=$RC
run kt e2fsck -n /nonexistent
is "$RC" "$host_rc" "e2fsck's own status passes through ($host_rc)"
run kt env KUBEMOUNT_STORE_DIR="$NODE/empty-store" blkid -p "$EXT"
is "$RC" 125 "no image in the store: exit 125"
like "$ERR" "^kubemount: blkid: image fuse-tools:latest .*'kubemount vcs pull' or 'kubemount pull fuse-tools:latest'$" \
        "... and one line naming the image and how to pull it"
# (the mapping files are read where the tool is called: in the kubelet's view)
VCSD=$KUBELET_DIR/test-vcs.d
mkdir -p "$VCSD"
echo '{"mappings": [{"types": ["block-tools", "nosuchfs"], "policy": "host"}]}' >"$VCSD/host.json"
run kt env KUBEMOUNT_VCS_DIR="$VCSD" KUBEMOUNT_STORE_DIR="$NODE/empty-store" \
        blkid -p -s TYPE -s PTTYPE -o export "$XFS"
got="$RC:$OUT:$ERR"
run blkid -p -s TYPE -s PTTYPE -o export "$XFS"
is "$got" "0:$OUT:" "policy host: the host's blkid, no image needed"
ln -s "$KUBEMOUNT" "$KUBELET_DIR/mkfs.nosuchfs"
run kt "$KUBELET_DIR/mkfs.nosuchfs" "$EXT"
is "$RC" 125 "a tool whose type nothing maps: exit 125"
like "$ERR" "no image is mapped to nosuchfs" "... saying so"
run kt env KUBEMOUNT_VCS_DIR="$VCSD" "$KUBELET_DIR/mkfs.nosuchfs" "$EXT"
is "$RC" 127 "policy host and no such tool in the host: exit 127"
is "$(blkid -p -s TYPE -o value "$EXT")" "ext4" "... nothing touched the device"

# ---- iscsiadm: the host's by default; from an image only privileged ---------------------
# (This machine's kernel has no iSCSI; the node tier's j-iscsi logs in to a real target.)
is "$(readlink -f "$MC/iscsiadm")" "$(readlink -f "$KUBEMOUNT")" "iscsiadm is a multi-call link"
run km vcs list
like "$OUT" $'(^|\n)iscsi +- +host ' "vcs list: iscsi is the host's by default (policy host, no image)"
echo '{"mappings": [{"types": ["iscsi"], "image": "fuse-tools:latest"}]}' >"$VCSD/iscsi.json"
run kt env KUBEMOUNT_VCS_DIR="$VCSD" iscsiadm -m session
is "$RC" 125 "iscsiadm from an unprivileged entry: exit 125"
like "$ERR" "^kubemount: iscsiadm: iscsid needs CAP_SYS_ADMIN of the host \\(NETLINK_ISCSI\\): the iscsi entry \\($VCSD/iscsi.json\\) must be privileged" \
        "... one line saying why and what to do"
is "$(km ps -a --json | grep -c '"name"')" 0 "... and no container is left"

detach_loops
vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "multicall-tools"
done_testing
