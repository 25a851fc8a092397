#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount's three .debs from the git checkout's HEAD, as TAP:
#   meson dist (HEAD: uncommitted changes are not in it) -> unpack ->
#   debian/changelog's version is meson.build's -> dpkg-buildpackage -b -us -uc.
# OUT_DIR (default BUILD/debs) then holds kubemount, libkubemount0 and
# libkubemount-dev .debs with their .changes and .buildinfo, and a file `key`.
# They are reused while HEAD, this script, the suite and the architecture are
# the same (a rebuild is 1-2 minutes): the working tree's dirty state is not
# part of the key because meson dist never packs it.
#
#   tests/package/build-debs.sh SOURCE_ROOT BUILD_ROOT [OUT_DIR]
#
# Used by tests/package/package-test.sh and tests/node/node-test.sh, which
# embed its TAP in theirs.  KM_DEBS_REBUILD=1 ignores the cache.
# shellcheck source=tests/lib/node.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh"

src=$(realpath "${1:?usage: build-debs.sh SOURCE_ROOT BUILD_ROOT [OUT_DIR]}")
build=$(realpath "${2:?usage: build-debs.sh SOURCE_ROOT BUILD_ROOT [OUT_DIR]}")
out=${3:-$build/debs}
need_tools git meson ninja dpkg-buildpackage dh dpkg-deb dpkg-parsechangelog tar xz sha256sum

# A checkout owned by another user than root (a CI clone) is still ours to read: git
# would otherwise refuse it as of "dubious ownership" and meson dist with it.
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="*"
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || bail_out "$src is not a git checkout (meson dist needs one)"
head=$(git -C "$src" rev-parse HEAD) || bail_out "git rev-parse HEAD failed in $src"
if [[ -n $(git -C "$src" status --porcelain --untracked-files=no) ]]; then
        diag "uncommitted changes in $src are not in the .debs: meson dist packs HEAD"
fi
arch=$(dpkg --print-architecture)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
key=$(printf '%s\n' "$head" "$arch" "$suite" "$(sha256sum <"${BASH_SOURCE[0]}")" | sha256sum | cut -c1-32)

# have_debs DIR: the three .debs and the .changes are in DIR.
have_debs() {
        local p
        for p in kubemount libkubemount0 libkubemount-dev; do
                compgen -G "$1/${p}_*_$arch.deb" >/dev/null || return 1
        done
        compgen -G "$1/kubemount_*_$arch.changes" >/dev/null
}
if [[ ${KM_DEBS_REBUILD:-} != 1 && $(cat "$out/key" 2>/dev/null) == "$key" ]] && have_debs "$out"; then
        ok "the .debs of HEAD ${head:0:12} (cached in $out)"
        done_testing
fi

tmp=$(mktemp -d /tmp/kubemount-debs.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf --one-file-system "$tmp"' EXIT

# ---- the release tarball -------------------------------------------------------------------
version=$(meson introspect --projectinfo "$build" | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p')
[[ -n $version ]] || bail_out "no project version from meson introspect $build"
dist=$build/meson-dist/kubemount-$version.tar.xz
rm -f "$dist"
if meson dist -C "$build" --no-tests --allow-dirty --formats xztar >"$tmp/dist.log" 2>&1 && [[ -f $dist ]]; then
        ok "meson dist makes kubemount-$version.tar.xz"
else
        fail_with "meson dist makes kubemount-$version.tar.xz" "$tmp/dist.log"
fi
mkdir "$tmp/src"
tar -xf "$dist" -C "$tmp/src"
rm -f "$dist" "$dist.sha256sum"
tree=$tmp/src/kubemount-$version
[[ -f $tree/meson.build && -f $tree/debian/control ]] || bail_out "the tarball has no kubemount-$version/ with meson.build and debian/"
took "meson dist"

# ---- the packages ------------------------------------------------------------------------
pkgver=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)
is "${pkgver%-*}" "$version" "debian/changelog's version ($pkgver) is meson.build's ($version)"
if (cd "$tree" && DEB_BUILD_OPTIONS="parallel=2 ${DEB_BUILD_OPTIONS:-}" \
        dpkg-buildpackage -b -us -uc) >"$tmp/dpkg-buildpackage.log" 2>&1; then
        ok "dpkg-buildpackage -b -us -uc in the unpacked tarball"
else
        fail_with "dpkg-buildpackage -b -us -uc in the unpacked tarball" "$tmp/dpkg-buildpackage.log"
fi
have_debs "$tmp/src" || bail_out "dpkg-buildpackage made no kubemount, libkubemount0 and libkubemount-dev .debs"
took "dpkg-buildpackage"

# Replaced as a whole, so that a reader never sees half a set.
rm -rf "$out.new"
mkdir -p "$out.new"
cp "$tmp"/src/*.deb "$tmp"/src/*.changes "$tmp"/src/*.buildinfo "$tmp/dpkg-buildpackage.log" "$out.new/"
echo "$key" >"$out.new/key"
rm -rf "$out"
mv "$out.new" "$out"
done_testing
