#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bundle-libs.sh PREFIX: makes the installed tree PREFIX (bin/kubemount,
# libexec/kubemount/nsenter) run on a host without kubemount's libraries.
# kubemount links only libc and dlopen()s the others by soname
# (src/lib/*/…-dl.c): those and what they need, but glibc's own, go to
# PREFIX/lib, and both executables get an rpath to it.  DT_RPATH, not
# DT_RUNPATH (--force-rpath): only the former also serves the libraries'
# own dependencies.  Needs patchelf and the libraries installed (Containerfile).
set -eu

prefix=$1
sonames="libmount.so.1 libcap.so.2 libseccomp.so.2 libjansson.so.4 libcurl.so.4 libarchive.so.13 libcrypto.so.3 libmd.so.0"
mkdir -p "$prefix/lib"
glibc='^(ld-linux.*|linux-vdso.*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl)\.so'

for so in $sonames; do
        path=$(ldconfig -p | awk -v so="$so" '$1 == so { print $NF; exit }')
        [ -n "$path" ] || { echo "bundle-libs: $so is not installed" >&2; exit 1; }
        echo "$path"
        ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
        base=${lib##*/}
        echo "$base" | grep -Eq "$glibc" && continue
        cp -L "$lib" "$prefix/lib/$base"
done

# The development files (header, libkubemount.so, pkg-config) are not for the host.
rm -rf "$prefix/include" "$prefix/lib/pkgconfig" "$prefix"/lib/*-linux-gnu* "$prefix"/lib/libkubemount.*

patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$prefix/bin/kubemount"
patchelf --force-rpath --set-rpath '$ORIGIN/../../lib' "$prefix/libexec/kubemount/nsenter"
