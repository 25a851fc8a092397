#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The node VM's root filesystem as a tarball, cached: a Debian root of the
# host's suite (the .debs are built for it) with a kernel, systemd as PID 1,
# the storage servers the scenarios run on the VM's loopback, docker.io, and
# what kubemount's .debs depend on, so that installing them needs no network.
#
#   tests/node/make-root.sh CACHE_DIR DEB...
#
# Prints the tarball's path (CACHE_DIR/root-KEY.tar).  KEY is the sha256 of the
# package list, this script, the suite, the mirrors and the architecture: a
# change to any of them builds a new root (~3 minutes) and drops the old one.
# Must run in a mount namespace of its own (mmdebstrap mounts /proc and /dev in
# the root it builds).  Progress and errors on stderr.
#
# Environment: KUBEMOUNT_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# KUBEMOUNT_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security).
set -euo pipefail

cache=${1:?usage: make-root.sh CACHE_DIR DEB...}
shift
mirror=${KUBEMOUNT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${KUBEMOUNT_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
arch=$(dpkg --print-architecture)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $suite ]] || {
        echo "make-root.sh: no VERSION_CODENAME in /etc/os-release" >&2
        exit 1
}

# The node: a kernel and an initramfs that boot from virtio, systemd, the
# servers (NFS, GlusterFS, sshd, smbd, tgt) and clients the scenarios use (the host's
# own cifs-utils and open-iscsi only as the peers of i-cifs's and j-iscsi's timings), docker.io
# (which needs apparmor_parser with Debian's kernel), the usual node tools.
packages=(
        linux-image-amd64 systemd-sysv initramfs-tools udev apparmor
        nfs-kernel-server glusterfs-server openssh-server docker.io fuse3 samba cifs-utils tgt open-iscsi
        iproute2 procps util-linux mount kmod e2fsprogs
)
# What the .debs depend on: first alternative, no versions (dpkg -i checks those).
mapfile -t -O ${#packages[@]} packages < <(for f; do dpkg-deb -f "$f" Depends; done | tr ',' '\n' |
        sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' |
        grep -v -x -e '' -e kubemount -e libkubemount0 -e libkubemount-dev | LC_ALL=C sort -u)
list=$(printf '%s\n' "${packages[@]}" | LC_ALL=C sort -u)

key=$({
        printf '%s\n' "$suite" "$arch" "$mirror" "$security" "$list"
        sha256sum <"${BASH_SOURCE[0]}"
} | sha256sum | cut -c1-32)
out=$cache/root-$key.tar
if [[ -f $out ]]; then
        echo "$out"
        exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf --one-file-system "$tmp"' EXIT

# The node's identity and what a VM with no NIC needs: units that wait for a
# network that never comes are masked, the journal is persistent (boot 2
# reads boot 1's), root logs in on the console without a password.  The
# apt timers would only fight the scenarios for the two emulated CPUs.
setup_root() {
        local r=$1
        echo node >"$r/etc/hostname"
        printf '127.0.0.1\tlocalhost\n127.0.1.1\tnode\n::1\tlocalhost ip6-localhost\n' >"$r/etc/hosts"
        printf '/dev/vda\t/\text4\trw,errors=remount-ro\t0\t1\n' >"$r/etc/fstab"
        chroot "$r" passwd -d root >/dev/null
        mkdir -p "$r/var/log/journal"
        systemctl --root="$r" mask --quiet systemd-networkd-wait-online.service networking.service \
                ifupdown-wait-online.service NetworkManager-wait-online.service \
                apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer
        # A fresh machine id at every boot of a new disk (make-disk.sh writes one).
        : >"$r/etc/machine-id"
}

echo "make-root.sh: building the node root ($suite, $arch: ${#packages[@]} packages)" >&2
# Docs, man pages and translations are of no use to the scenarios; without
# them the tarball and each run's disk are smaller and faster to make.
TMPDIR=$tmp mmdebstrap --mode=root --variant=apt --architectures="$arch" \
        --include="$(printf '%s\n' "${packages[@]}" | paste -sd,)" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook="$(declare -f setup_root); setup_root \"\$1\"" \
        "$suite" "$tmp/root.tar" \
        "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" >&2
rm -f "$cache"/root-*.tar
mv "$tmp/root.tar" "$out"
echo "$out"
