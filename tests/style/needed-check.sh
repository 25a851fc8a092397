#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installed binaries and library start with libc alone (TAP): a kubelet pays their
# start-up on every mount, so the libraries of src/lib/*/*-dl.h are loaded on
# first use, never linked.  A NEEDED entry for one of them means a meson
# dependency was linked again (use its *_headers), or a call site bypasses
# its LIB-dl.h.
# Usage: needed-check.sh ELF...   (readelf: binutils, which gcc depends on)
set -u -o pipefail
command -v readelf >/dev/null || { echo "Bail out! missing tool readelf (binutils)"; exit 1; }
lazy='libjansson|libcap|libseccomp|libmount|libcurl|libarchive|libcrypto'
echo "1..$#"
n=0
for bin in "$@"; do
        n=$((n + 1))
        needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p') || { echo "not ok $n - readelf -d $bin"; continue; }
        [[ -n $needed ]] || { echo "not ok $n - $bin: no NEEDED entry (not a dynamic executable?)"; continue; }
        bad=$(grep -E "^($lazy)\.so" <<<"$needed")
        if [[ -z $bad ]]; then
                echo "ok $n - $(basename "$bin") needs only $(tr '\n' ' ' <<<"$needed")"
        else
                echo "not ok $n - $(basename "$bin") links libraries it must load on first use (dl.h):"
                sed 's/^/#   /' <<<"$bad"
        fi
done
