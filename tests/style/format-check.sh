#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every C file is as .clang-format says (TAP).  Fix with:
#   clang-format -i $(git ls-files '*.c' '*.h')
# Usage: format-check.sh SOURCE_ROOT
set -u -o pipefail
src=$1
command -v clang-format >/dev/null || { echo "Bail out! missing tool clang-format (install: scripts/deps)"; exit 1; }
cd "$src" || exit 1
mapfile -t files < <(find include src nsenter-compat tests -name '*.[ch]' | sort)
[[ ${#files[@]} -gt 100 ]] || { echo "Bail out! only ${#files[@]} C files found under $src"; exit 1; }
echo "1..1"
bad=()
for f in "${files[@]}"; do
        clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [[ ${#bad[@]} -eq 0 ]]; then
        echo "ok 1 - ${#files[@]} C files formatted as .clang-format says"
else
        echo "not ok 1 - ${#bad[@]} of ${#files[@]} C files differ from .clang-format (clang-format -i FILE):"
        printf '#   %s\n' "${bad[@]}"
fi
