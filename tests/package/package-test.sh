#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The release tarball and the Debian packages, end to end (TAP, as root):
#   meson dist (from the git checkout: HEAD, so uncommitted changes are not in
#   it) -> unpack -> dpkg-buildpackage -b -us -uc -> lintian (errors and
#   warnings fail) -> the three .debs installed with dpkg into a throwaway
#   Debian root (mmdebstrap --variant=apt of the host's suite, with what the
#   .debs depend on, a compiler and pkgconf; cached as a tarball in
#   BUILD/package-cache) -> there: kubemount --version, setup, check, the
#   shim, the multi-call links, the units (enabled, not started), the man
#   page, a program built with libkubemount's pkg-config file, and a purge.
# Everything runs in a mount and pid namespace of its own (unshare), so the
# chroot's mounts and any process a maintainer script started end with it.
#
#   tests/package/package-test.sh SOURCE_ROOT BUILD_ROOT
#
# Environment: KUBEMOUNT_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# KUBEMOUNT_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security).
# shellcheck source=tests/lib/node.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh"

src=$(realpath "${1:?usage: package-test.sh SOURCE_ROOT BUILD_ROOT}")
build=$(realpath "${2:?usage: package-test.sh SOURCE_ROOT BUILD_ROOT}")
mirror=${KUBEMOUNT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${KUBEMOUNT_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

if [[ ${KM_PKG_IN_NS:-} != 1 ]]; then
        ((EUID == 0)) || bail_out "the package test needs root (dpkg-buildpackage into a chroot, mmdebstrap)"
        need_tools git meson ninja dpkg-buildpackage dh dpkg-deb dpkg-parsechangelog lintian mmdebstrap \
                unshare chroot mount umount findmnt tar xz sha256sum
        # --kill-child: killed (meson's timeout), the namespace's PID 1 dies
        # and takes every process and mount of the test with it.
        KM_PKG_IN_NS=1 exec unshare --mount --pid --fork --mount-proc --propagation slave --kill-child \
                -- bash "$0" "$@"
fi

tmp=$(mktemp -d /tmp/kubemount-package.XXXXXX) || bail_out "mktemp failed"
KM_SCRATCH=$tmp/scratch # where run() keeps its output
mkdir "$KM_SCRATCH"
root=$tmp/root
cleanup() {
        # The mounts are this namespace's alone; they go first so that rm
        # cannot reach through them.
        umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null || true
        rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# ---- the release tarball and the packages (shared with tests/node) ----------------------------
debs_dir=$build/debs
tap_embed "" bash "$(dirname "${BASH_SOURCE[0]}")/build-debs.sh" "$src" "$build" "$debs_dir" || done_testing
arch=$(dpkg --print-architecture)
pkgver=$(dpkg-deb -f "$(echo "$debs_dir"/kubemount_*_"$arch".deb)" Version)
debs=()
for p in kubemount libkubemount0 libkubemount-dev; do
        f=$debs_dir/${p}_${pkgver}_$arch.deb
        [[ -f $f ]] || bail_out "build-debs.sh left no $(basename "$f")"
        debs+=("$f")
done
took "the .debs"
changes=$debs_dir/kubemount_${pkgver}_$arch.changes
if lintian --fail-on error,warning "$changes" >"$tmp/lintian.log" 2>&1; then
        ok "lintian: no errors or warnings"
else
        not_ok "lintian: no errors or warnings"
        diag "$(grep -v 'running with root privileges' "$tmp/lintian.log")"
fi
took "lintian"

# ---- the throwaway root -------------------------------------------------------------------
# What the .debs depend on (first alternative, no versions: dpkg -i checks
# those), a compiler and pkgconf: the base root, so that dpkg -i needs no network.
deps=$(for f in "${debs[@]}"; do dpkg-deb -f "$f" Depends; done | tr ',' '\n' |
        sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' | grep -v -x -e '' -e kubemount -e libkubemount0 -e libkubemount-dev |
        LC_ALL=C sort -u | tr '\n' ' ')
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $suite ]] || bail_out "no VERSION_CODENAME in /etc/os-release (the packages are built for the host's suite)"
packages="$deps gcc libc6-dev pkgconf"
key=$({
        printf '%s\n' "$suite" "$mirror" "$security" "$arch" "$packages"
        mmdebstrap --version
} | sha256sum | cut -c1-32)
cache=$build/package-cache
base=$cache/base-$key.tar
if [[ -f $base ]]; then
        diag "base root from the cache: $base"
else
        mkdir -p "$cache"
        if TMPDIR=$tmp mmdebstrap --mode=root --variant=apt --architectures="$arch" --include="${packages// /,}" \
                "$suite" "$tmp/base.tar" \
                "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" \
                >"$tmp/mmdebstrap.log" 2>&1; then
                rm -f "$cache"/base-*.tar
                mv "$tmp/base.tar" "$base"
        else
                fail_with "mmdebstrap --variant=apt $suite (the throwaway root)" "$tmp/mmdebstrap.log"
        fi
fi
mkdir "$root"
tar -xf "$base" -C "$root"
# A mount point of its own (kubemount reads the mount table), /proc of this
# pid namespace, the devices.
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
took "the throwaway root"

mkdir "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
in_root() { chroot "$root" "$@"; }
run in_root dpkg -i /tmp/debs/kubemount_"$pkgver"_"$arch".deb /tmp/debs/libkubemount0_"$pkgver"_"$arch".deb \
        /tmp/debs/libkubemount-dev_"$pkgver"_"$arch".deb
if ((RC == 0)); then ok "dpkg -i of the three packages"; else
        not_ok "dpkg -i of the three packages"
        diag "$OUT" "$ERR"
        done_testing
fi
# Nothing started (no systemd in a chroot: deb-systemd-invoke starts nothing).
started=$(for c in /proc/[0-9]*/comm; do [[ $(cat "$c" 2>/dev/null) == kubemount ]] && echo "$c"; done)
is "$started" "" "installing started no kubemount process"

# ---- what is installed, and that it works ---------------------------------------------------
run in_root kubemount --version
is "$RC:$OUT" "0:kubemount ${pkgver%-*}" "kubemount --version prints the package's version"
mkdir -p "$root/var/lib/kubelet"
run in_root kubemount check
check "kubemount check fails before setup" test "$RC" -ne 0
run in_root kubemount setup
is "$RC" 0 "kubemount setup"
((RC == 0)) || diag "$OUT" "$ERR"
like "$(findmnt -n -o PROPAGATION --target "$root/var/lib/kubelet")" shared "setup made the chroot's /var/lib/kubelet a shared mount"
run in_root kubemount check
is "$RC" 0 "kubemount check after setup"
((RC == 0)) || diag "$OUT" "$ERR"

check "the nsenter shim is /usr/libexec/kubemount/nsenter" \
        test -x "$root/usr/libexec/kubemount/nsenter" -a ! -L "$root/usr/libexec/kubemount/nsenter"
is "$(in_root dpkg -L kubemount | grep '/nsenter$')" /usr/libexec/kubemount/nsenter \
        "kubemount ships no other nsenter (none shadows util-linux's)"
for tool in mount umount mkfs.ext4; do
        is "$(in_root readlink -f "/usr/libexec/kubemount/bin/$tool")" /usr/bin/kubemount \
                "multi-call link /usr/libexec/kubemount/bin/$tool -> /usr/bin/kubemount"
done
for unit in kubemount-setup.service kubemount-agent.service; do
        check "$unit installed" test -f "$root/lib/systemd/system/$unit"
        check "$unit enabled (multi-user.target.wants)" test -L "$root/etc/systemd/system/multi-user.target.wants/$unit"
done
check "man page /usr/share/man/man8/kubemount.8.gz" gzip -t "$root/usr/share/man/man8/kubemount.8.gz"
check "libkubemount0 ships its symbols file" test -f "$root/var/lib/dpkg/info/libkubemount0:$arch.symbols"

cat >"$root/tmp/t.c" <<'C'
#include <kubemount.h>
#include <stdio.h>
int main(void) {
        int r = km_is_mount_point(NULL, "/", NULL);
        printf("%s %d\n", km_version(), r);
        return r == 1 ? 0 : 1;
}
C
# shellcheck disable=SC2016 # expanded by the chroot's sh
run in_root sh -c 'cc /tmp/t.c -o /tmp/t $(pkg-config --cflags --libs libkubemount) && /tmp/t'
is "$RC:$OUT" "0:${pkgver%-*} 1" "a program built with pkg-config libkubemount runs"
((RC == 0)) || diag "$ERR"

run in_root dpkg --purge kubemount libkubemount-dev libkubemount0
is "$RC" 0 "dpkg --purge of the three packages"
left=$(find "$root/etc/systemd/system" "$root/usr/libexec/kubemount" "$root/usr/bin/kubemount" \
        -name 'kubemount*' 2>/dev/null)
is "$left" "" "the purge left no kubemount files or unit links"
took "install, checks, purge"

done_testing
