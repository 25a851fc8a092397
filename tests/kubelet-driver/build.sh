#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# build.sh OUTPUT: builds kubelet-driver from Debian's packaged Go sources,
# offline (GOPATH mode, no module download, no proxy).  meson runs it when
# tests are enabled; by hand: tests/kubelet-driver/build.sh /tmp/kubelet-driver.
#
# The driver must sit in a GOPATH tree of its own, next to a go.mod: only then
# does GOPATH mode read the library's "k8s.io/klog/v2" as /usr/share/gocode's
# k8s.io/klog (whose go.mod says module k8s.io/klog/v2).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(realpath -m "${1:?usage: build.sh OUTPUT}")
gocode=/usr/share/gocode
work=$(dirname "$out")/kubelet-driver.d

if ! command -v go >/dev/null || [[ ! -f $gocode/src/k8s.io/utils/mount/mount.go ]]; then
        echo "build.sh: needs go and $gocode/src/k8s.io/utils/mount (Debian: golang-go golang-k8s-utils-dev; scripts/deps)" >&2
        exit 1
fi
version=$(dpkg-query -W -f='${Version}' golang-k8s-utils-dev 2>/dev/null || echo unknown)

mkdir -p "$work/gopath/src/kubelet-driver" "$work/cache"
ln -sfn "$src/main.go" "$work/gopath/src/kubelet-driver/main.go"
ln -sfn "$src/go.mod" "$work/gopath/src/kubelet-driver/go.mod"
cd "$work/gopath/src/kubelet-driver"
env -u GOROOT GO111MODULE=off GOPATH="$work/gopath:$gocode" GOCACHE="$work/cache" GOENV=off GOFLAGS= \
        GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
        go build -buildvcs=false -ldflags "-X main.libraryVersion=$version" -o "$out" kubelet-driver
