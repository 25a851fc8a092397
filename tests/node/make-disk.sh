#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One run's disks for the node VM, from the cached root (make-root.sh):
#   the root unpacked -> kubemount's .debs installed with dpkg -i in a chroot
#   (their maintainer scripts enable the units; nothing starts in a chroot) ->
#   the VCS images, the runner, the scenarios and node-test.service copied in
#   -> OUT_DIR/disk.img (ext4 made with mkfs.ext4 -d: nothing is mounted on
#   this machine), OUT_DIR/scenarios.list (bootN/NAME a line), OUT_DIR/results.img (zeros, the guest writes a tar to it),
#   OUT_DIR/vmlinuz and OUT_DIR/initrd.img (qemu boots them directly).
#
#   tests/node/make-disk.sh ROOT_TAR DEBS_DIR IMAGES_DIR OUT_DIR
#
# IMAGES_DIR holds OCI layouts (scripts/build-images): each IMAGES_DIR/NAME
# becomes /opt/node-test/images/NAME.  Must run in a mount and pid namespace of
# its own: the chroot's /proc, /sys and /dev mounts, and anything a maintainer
# script might start, end with it.  Progress and errors on stderr.
# KUBEMOUNT_NODE_BENCH (kubemount-bench) and KUBEMOUNT_NODE_BENCH_ROOTFS (the test
# root filesystem of tests/lib/rootfs.sh) become /opt/node-test/bench/,
# KUBEMOUNT_NODE_DAEMONSET (node-test.sh's DaemonSet directory) /opt/node-test/daemonset/.
# KUBEMOUNT_NODE_ONLY (an ERE over bootN/NAME) keeps only the scenarios it matches.
set -euo pipefail

usage="usage: make-disk.sh ROOT_TAR DEBS_DIR IMAGES_DIR OUT_DIR"
tarball=${1:?$usage}
debs=${2:?$usage}
images=${3:?$usage}
out=${4:?$usage}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
size=${KUBEMOUNT_NODE_DISK_SIZE:-6G}

mkdir -p "$out"
tmp=$(mktemp -d "$out/disk-root.XXXXXX")
root=$tmp/root
cleanup() {
        # The mounts first, so that rm cannot reach through them.
        umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null || true
        rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

mkdir "$root"
tar -xf "$tarball" -C "$root" --xattrs --xattrs-include='*' --numeric-owner

# ---- kubemount's packages ----------------------------------------------------------------
mkdir "$root/tmp/debs"
for p in kubemount libkubemount0 libkubemount-dev; do
        f=$(compgen -G "$debs/${p}_*.deb" | head -n 1) || {
                echo "make-disk.sh: no $p .deb in $debs" >&2
                exit 1
        }
        cp "$f" "$root/tmp/debs/"
done
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
chroot "$root" sh -c 'dpkg -i /tmp/debs/*.deb' >&2
rm -rf "$root/tmp/debs"
# Unmounted before mkfs.ext4 -d copies the tree: it would copy /proc too.
umount -R "$root/proc" "$root/sys" "$root/dev"

# ---- the test's own files ------------------------------------------------------------------
node=$root/opt/node-test
mkdir -p "$node/images" "$node/scenarios"
for d in "$images"/*/; do
        [[ -f $d/index.json ]] && cp -a "${d%/}" "$node/images/"
done
# The benchmark driver and the test root filesystem it runs (scenario y-bench), when given.
if [[ -n ${KUBEMOUNT_NODE_BENCH:-} ]]; then
        mkdir -p "$node/bench"
        install -m 0755 "$KUBEMOUNT_NODE_BENCH" "$node/bench/kubemount-bench"
        cp -a "${KUBEMOUNT_NODE_BENCH_ROOTFS:?KUBEMOUNT_NODE_BENCH_ROOTFS names no root filesystem}" "$node/bench/rootfs"
fi
# The DaemonSet's tree, Containerfile and docker commands (scenario g-daemonset), when given.
if [[ -n ${KUBEMOUNT_NODE_DAEMONSET:-} ]]; then
        cp -a "$KUBEMOUNT_NODE_DAEMONSET" "$node/daemonset"
fi
install -m 0755 "$here/guest/run" "$node/run"
install -m 0644 "$here/scenarios/lib.sh" "$node/lib.sh"
# What went onto the disk is what the host expects results of (OUT_DIR/scenarios.list:
# bootN/NAME), not what the tree holds by the time the VM is done.
: >"$out/scenarios.list"
for d in "$here"/scenarios/boot*/; do
        cp -a "${d%/}" "$node/scenarios/"
        for f in "$d"*; do
                [[ -f $f && -x $f ]] || continue
                name=$(basename "$d")/$(basename "$f")
                # KUBEMOUNT_NODE_ONLY (an ERE): only the scenarios it matches, for a quicker run.
                if [[ -n ${KUBEMOUNT_NODE_ONLY:-} && ! $name =~ $KUBEMOUNT_NODE_ONLY ]]; then
                        rm -f "$node/scenarios/$name"
                        continue
                fi
                echo "$name" >>"$out/scenarios.list"
        done
done
install -m 0644 "$here/guest/node-test.service" "$root/etc/systemd/system/node-test.service"
ln -s /etc/systemd/system/node-test.service "$root/etc/systemd/system/multi-user.target.wants/node-test.service"
# A machine id of this disk's own: journald keeps boot 1's journal under it for boot 2.
tr -d - </proc/sys/kernel/random/uuid >"$root/etc/machine-id"

# ---- the disks and the kernel ----------------------------------------------------------
kernel=$(compgen -G "$root/boot/vmlinuz-*" | sort -V | tail -n 1) || {
        echo "make-disk.sh: no kernel in the root's /boot" >&2
        exit 1
}
initrd=$root/boot/initrd.img-${kernel##*/vmlinuz-}
[[ -f $initrd ]] || {
        echo "make-disk.sh: no $initrd for $kernel" >&2
        exit 1
}
cp "$kernel" "$out/vmlinuz"
cp "$initrd" "$out/initrd.img"
rm -f "$out/disk.img" "$out/results.img"
mkfs.ext4 -q -F -L node-root -d "$root" "$out/disk.img" "$size" >&2
truncate -s 64M "$out/results.img"
