#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every raw system call is wrapped once, with its fallback, in
# src/lib/basic/syscalls.c (TAP): no syscall() in any other C file of the
# library, the CLI or the shim.  Fix: add a sys_NAME() wrapper there.
# Usage: raw-syscalls.sh SOURCE_ROOT
set -u -o pipefail
src=$1
cd "$src" || exit 1
home=src/lib/basic/syscalls.c
[[ -f $home ]] || { echo "Bail out! no $home under $src"; exit 1; }
# syscall( as a call, not the end of a longer name (seccomp_syscall_resolve_name).
pattern='(^|[^A-Za-z0-9_])syscall[[:space:]]*\('

echo "1..2"
if grep -qE "$pattern" "$home"; then
        echo "ok 1 - the check sees the wrappers in $home"
else
        echo "not ok 1 - no syscall( found in $home: the pattern is broken"
fi
mapfile -t files < <(find src nsenter-compat -name '*.[ch]' ! -path "$home" | sort)
mapfile -t hits < <(grep -nE "$pattern" "${files[@]}")
if [[ ${#hits[@]} -eq 0 ]]; then
        echo "ok 2 - no syscall( in the ${#files[@]} other C files under src/ and nsenter-compat/"
else
        echo "not ok 2 - syscall( outside $home (use or add a sys_NAME() wrapper there):"
        printf '#   %s\n' "${hits[@]}"
fi
