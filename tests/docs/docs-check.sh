#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The documentation lists what the code has (TAP): every command of the
# dispatch table in `kubemount --help` and kubemount(8), its subcommands and
# every long option its `kubemount COMMAND --help` names in the command's
# entry of kubemount(8), every environment variable the code reads in
# kubemount(8), and no stray control characters in the man page.
# Usage: docs-check.sh SOURCE_ROOT KUBEMOUNT_BINARY
set -u -o pipefail
src=$1 km=$2
. "$src/tests/docs/help-options.sh"
man=$(mktemp)
trap 'rm -f "$man"' EXIT
# troff's \- is a plain hyphen for these checks, and fonts (\fB...\fR) are nothing.
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$src/docs/kubemount.8" >"$man"

help=$("$km" --help) || { echo "Bail out! $km --help failed"; exit 1; }
commands=$(table_commands "$src")
[[ -n $commands ]] || { echo "Bail out! no command table found in src/cli/main.c"; exit 1; }
for c in $commands; do
        check "--help lists '$c'" grep -qE "^  $c( |$)" <<<"$help"
        check "kubemount(8) describes '$c'" grep -qE "^\.B[IR]? \"?$c\b" "$man"
done

# Each OPTION is a word of TEXT (not the start of a longer option); else the missing ones on stderr.
names_all() { # TEXT OPTION...
        local text=$1 o missing=
        shift
        for o; do
                [[ $text =~ (^|[^a-z-])$o([^a-z-]|$) ]] || missing+=" $o"
        done
        [[ -z $missing ]] || { echo "# missing:$missing" >&2; return 1; }
}
# The entry of WORDS in COMMANDS: from its .B line to the next .TP or .SH.
man_entry() { # WORDS
        awk -v w="$1" '/^\.(TP|SH)/ { e = 0 }
                /^\.B[IR]? / { l = $0; sub(/^\.B[IR]? "?/, "", l); if (index(l, w) == 1 && substr(l, length(w) + 1) ~ /^("| |$)/) e = 1 }
                e' "$man"
}
for c in $commands; do
        subs=$("$km" "$c" --help 2>&1 | sed -n "s/^\(Usage:\)\? *kubemount \(\[[A-Z ]*\] \)\?$c \([a-z][a-z-]*\)\( .*\)\?$/\3/p" |
                sort -u)
        for w in ${subs:-"$c"}; do
                [[ -n $subs ]] && w="$c $w"
                entry=$(man_entry "$w")
                if [[ -n $subs ]]; then
                        check "--help lists '$w'" grep -qE "^  $w( |$)" <<<"$help"
                        check "kubemount(8) describes '$w'" test -n "$entry"
                fi
                opts=$("$km" $w --help 2>&1 | help_options 0 "$w" | grep '^--' | grep -vx -- --help)
                check "kubemount(8) names every long option of '$w --help' in its entry ($(echo $opts))" \
                        names_all "$entry" $opts
        done
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
tap_done
