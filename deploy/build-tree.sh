#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# build-tree.sh SRC STAGE: the tree of deploy/Containerfile's image, built
# from the source tree SRC: kubemount configured with prefix /opt/kubemount,
# built and installed into STAGE/opt/kubemount with sync-vcs-map and the
# libraries it loads (bundle-libs.sh), so that the tree runs as it is on the
# host the DaemonSet's init container copies it to.  The Containerfile's build
# stage runs it; so does the node tier (tests/node), which builds the tree
# outside the VM and the image's last stage in it.  Needs the build
# dependencies and patchelf installed.
set -eu

src=$1 stage=$2
build=$(mktemp -d "${TMPDIR:-/tmp}/kubemount-tree.XXXXXX")
trap 'rm -rf "$build"' EXIT
meson setup "$build" "$src" --prefix=/opt/kubemount --buildtype=release -Dtests=disabled \
        -Dintegration_tests=false -Dman=disabled
ninja -C "$build"
DESTDIR=$stage meson install -C "$build" --no-rebuild
install -m 0755 "$src/deploy/sync-vcs-map.sh" "$stage/opt/kubemount/libexec/kubemount/sync-vcs-map"
sh "$src/deploy/bundle-libs.sh" "$stage/opt/kubemount"
