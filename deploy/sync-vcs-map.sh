#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# sync-vcs-map SRC DEST [INTERVAL]: copies the version of the ConfigMap volume
# SRC that SRC/..data names to DEST, as the kubelet lays one out: the keys in
# DEST/..kmNAME/, DEST/..data a symlink to it, swapped by a rename (kubemount
# reads every key through one open of ..data: never half of two versions),
# DEST/KEY -> ..data/KEY.  Older versions go.  With INTERVAL, again every
# INTERVAL seconds when SRC's ..data changes (the DaemonSet's vcs-map
# container); without, once (its init container).  A plain SRC without
# ..data is copied as it is.  POSIX sh and coreutils only.
set -eu

src=$1 dest=$2 interval=${3:-}
last=

sync_once() {
        if [ -L "$src/..data" ]; then
                version=$(readlink "$src/..data")
                # The version itself, not ..data: the kubelet may swap it meanwhile.
                from=$src/$version
                case $version in /*) from=$version ;; esac
        else
                from=$src
                version=plain-$(cat "$src"/* 2>/dev/null | cksum | cut -d' ' -f1)
        fi
        [ "$version" != "$last" ] || return 0
        name="..km$(date +%s)-$$-$(echo "$version" | cksum | cut -d' ' -f1)"
        # Each step checked: in the loop, sync_once runs where set -e does not apply.
        mkdir -p "$dest" || return 1
        rm -rf "${dest:?}/$name"
        mkdir "$dest/$name" || return 1
        for f in "$from"/*; do
                [ -f "$f" ] && [ ! -L "$f" ] || continue
                cp "$f" "$dest/$name/${f##*/}" || return 1
        done
        chmod 0755 "$dest/$name" && ln -sfn "$name" "$dest/..data_tmp" && mv -T "$dest/..data_tmp" "$dest/..data" ||
                return 1
        for f in "$dest/$name"/*; do
                [ -e "$f" ] || continue
                k=${f##*/}
                [ -L "$dest/$k" ] || ln -s "..data/$k" "$dest/$k"
        done
        # Keys the new version lacks, and older versions.
        for f in "$dest"/*; do
                [ -L "$f" ] && [ ! -e "$f" ] && rm -f "$f"
        done
        for d in "$dest"/..km*; do
                [ "${d##*/}" = "$name" ] || rm -rf "$d"
        done
        last=$version
        echo "sync-vcs-map: $dest is now $src's $version"
}

sync_once
[ -n "$interval" ] || exit 0
while sleep "$interval"; do
        sync_once || echo "sync-vcs-map: could not copy $src to $dest; trying again in $interval s" >&2
done
