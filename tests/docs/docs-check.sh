#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The documentation lists what the code has (TAP): every command of the
# dispatch table in `kubemount --help` and kubemount(8), every environment
# variable the code reads in kubemount(8), and no stray control characters
# in the man page.  Usage: docs-check.sh SOURCE_ROOT KUBEMOUNT_BINARY
set -u -o pipefail
src=$1 km=$2
man=$(mktemp)
trap 'rm -f "$man"' EXIT
# troff's \- is a plain hyphen for these checks.
sed 's/\\-/-/g' "$src/docs/kubemount.8" >"$man"
n=0 failed=0
check() { # DESC CMD...
        local desc=$1
        shift
        n=$((n + 1))
        if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}

help=$("$km" --help) || { echo "Bail out! $km --help failed"; exit 1; }
commands=$(sed -n 's/^ *{ "\([a-z-]*\)", cmd_[a-z_]*, [A-Z_0-9]* },$/\1/p' "$src/src/cli/main.c")
[[ -n $commands ]] || { echo "Bail out! no command table found in src/cli/main.c"; exit 1; }
for c in $commands; do
        check "--help lists '$c'" grep -qE "^  $c( |$)" <<<"$help"
        check "kubemount(8) describes '$c'" grep -qE "^\.B[IR]? \"?$c\b" "$man"
done

# Variables read by the code: KUBEMOUNT_* and the registry's auth-file ones.
vars=$(grep -rhoE 'getenv\("(KUBEMOUNT_[A-Z_]*|REGISTRY_AUTH_FILE|DOCKER_CONFIG)"\)' \
        "$src/src" "$src/nsenter-compat" | sed 's/getenv("\(.*\)")/\1/' | sort -u)
for v in $vars; do
        check "kubemount(8) ENVIRONMENT has $v" \
                awk -v v="$v" '/^\.SH ENVIRONMENT/{e=1;next} /^\.SH/{e=0} e && $0 ~ "^\\.B " v "$" {f=1} END{exit !f}' "$man"
done

check "kubemount(8) has no control characters" bash -c "! LC_ALL=C grep -q \$'[\\x01-\\x08\\x0b-\\x1f]' '$src/docs/kubemount.8'"
for f in kubemount-setup.service kubemount-agent.service kubemount-gc.service kubemount-gc.timer kubemount.conf \
        config.json; do
        check "kubemount(8) FILES names $f" \
                awk -v f="$f" '/^\.SH FILES/{e=1;next} /^\.SH/{e=0} e && index($0, f) {x=1} END{exit !x}' "$man"
done
echo "1..$n"
exit $((failed > 0))
