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
# One clang-format for every file (a process per file takes a minute on a loaded machine);
# it names each file that differs in its "code should be clang-formatted" errors.
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
rc=$?
mapfile -t bad < <(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
if [[ $rc -eq 0 ]]; then
        echo "ok 1 - ${#files[@]} C files formatted as .clang-format says"
elif [[ ${#bad[@]} -gt 0 ]]; then
        echo "not ok 1 - ${#bad[@]} of ${#files[@]} C files differ from .clang-format (clang-format -i FILE):"
        printf '#   %s\n' "${bad[@]}"
else
        echo "not ok 1 - clang-format failed (exit $rc):"
        sed 's/^/#   /' <<<"$out" | head -20
fi
