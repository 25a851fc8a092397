#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No source file over 800 lines (STYLE.md's guide), TAP: src/, include/,
# nsenter-compat/, scripts/ and tests/ (C, headers, shell, Python, and the
# scripts with no suffix); a file that grows past the guide is split along a
# seam a reader would name.
# Usage: file-length.sh SOURCE_ROOT
set -u -o pipefail
cd "$1" || { echo "Bail out! cannot enter $1"; exit 1; }
max=800
mapfile -t files < <(find src include nsenter-compat scripts tests -type f -not -path 'tests/fuzz/corpus/*' \
        -not -path 'tests/data/*' \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' -o ! -name '*.*' \) |
        LC_ALL=C sort)
[[ ${#files[@]} -gt 50 ]] || { echo "Bail out! only ${#files[@]} files under $1"; exit 1; }
long=()
for f in "${files[@]}"; do
        n=$(wc -l <"$f")
        ((n > max)) && long+=("$f: $n lines")
done
echo "1..1"
if ((${#long[@]} == 0)); then
        echo "ok 1 - none of the ${#files[@]} files of src, include, nsenter-compat, scripts and tests is over $max lines"
else
        echo "not ok 1 - ${#long[@]} files over $max lines:"
        printf '#   %s\n' "${long[@]}"
fi
