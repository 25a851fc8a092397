#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion (src/shell-completion/bash/kubemount) offers what the
# program has (TAP), driven as bash drives it (COMP_WORDS, COMP_CWORD,
# COMP_LINE, COMPREPLY), the truth taken from the program itself: every
# command of main.c's dispatch table, the global options of `kubemount --help`,
# the subcommands and options each `kubemount COMMAND --help` names, and every
# long option of the getopt tables of src/cli and mountargs.c; and nothing
# more.  With zsh installed (scripts/deps), the same function under zsh's
# bashcompinit (src/shell-completion/zsh/_kubemount).
# Usage: completion-check.sh SOURCE_ROOT KUBEMOUNT_BINARY
set -u -o pipefail
src=$(cd "$1" && pwd) km=$2
. "$src/tests/docs/help-options.sh"
. "$src/src/shell-completion/bash/kubemount"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# COMPREPLY for the command line LINE (the cursor at its end), its words split
# as bash's default COMP_WORDBREAKS splits them: at blanks, and = and : apart.
complete_line() { # LINE
        local s=$1
        COMP_LINE=$1 COMP_POINT=${#1}
        s=${s//=/ = } s=${s//:/ : }
        read -r -a COMP_WORDS <<<"$s"
        case $1 in *[[:blank:]]) COMP_WORDS+=("") ;; esac
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _kubemount_complete kubemount "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}"
}
# Each word of WANT (newline-separated) is in GOT; else the missing ones on stderr.
has_all() { # GOT WANT
        local -A got=()
        local w missing=
        while IFS= read -r w; do [[ -z $w ]] || got[$w]=1; done <<<"$1"
        while IFS= read -r w; do [[ -z $w || -n ${got[$w]-} ]] || missing+=" $w"; done <<<"$2"
        [[ -z $missing ]] || { echo "# missing:$missing" >&2; return 1; }
}
same() { # GOT WANT
        has_all "$1" "$2" && has_all "$2" "$1"
}

commands=$(table_commands "$src")
[[ -n $commands ]] || { echo "Bail out! no command table found in src/cli/main.c"; exit 1; }
check "the commands of the dispatch table, and only those, after 'kubemount '" \
        same "$(complete_line "$km ")" "$commands"
for p in $(cut -c1-2 <<<"$commands" | sort -u); do
        check "'kubemount $p' narrows to the commands that start with it" \
                same "$(complete_line "$km $p")" "$(grep "^$p" <<<"$commands")"
done

global=$("$km" --help | help_options 1) || { echo "Bail out! $km --help failed"; exit 1; }
[[ -n $global ]] || { echo "Bail out! no global options in kubemount --help"; exit 1; }
check "the global options of --help, and only those, after 'kubemount -'" \
        same "$(complete_line "$km -")" "$global"
check "'kubemount --st' narrows" same "$(complete_line "$km --st")" "$(grep '^--st' <<<"$global")"

# Every command (subcommands for image and vcs) and the options its --help names.
all=$(complete_line "$km -")
for c in $commands; do
        subs=$("$km" "$c" --help 2>&1 | sed -n "s/^\(Usage:\)\? *kubemount \(\[[A-Z ]*\] \)\?$c \([a-z][a-z-]*\)\( .*\)\?$/\3/p" |
                sort -u)
        if [[ -n $subs ]]; then
                check "'kubemount $c ' offers its subcommands ($(echo $subs))" same "$(complete_line "$km $c ")" "$subs"
        fi
        for w in ${subs:-"$c"}; do
                [[ -n $subs ]] && w="$c $w"
                opts=$("$km" $w --help 2>&1 | help_options 0 "$w")
                got=$(complete_line "$km $w -")
                all+=$'\n'$got
                check "'kubemount $w -' offers every option of its --help" has_all "$got" "$opts"
                check "'kubemount $w -' offers nothing else but -h, --help (and run --)" \
                        has_all "$(printf '%s\n' "$opts" -h --help; [[ $w != run ]] || echo --)" "$got"
                check "'kubemount --json $w --' offers the long ones" \
                        has_all "$(complete_line "$km --json $w --")" "$(grep '^--' <<<"$opts")"
        done
done
# A getopt table's option is offered somewhere (an option missing from every help text too).
tables=$(cat "$src"/src/cli/*.c "$src/src/lib/mount/mountargs.c" |
        sed -n 's/{ "\([a-z][a-z0-9-]*\)", \(no\|required\|optional\)_argument/\n--\1\n/gp' | grep '^--' | sort -u)
check "every long option of the getopt tables is offered ($(wc -l <<<"$tables") options)" has_all "$all" "$tables"

# Values: types from vcs list (with the command line's mappings), paths, fixed words.
types=$("$km" --vcs-image=x.test=img:1 vcs list --json | sed -n 's/^ *"type": "\([^"]*\)".*/\1/p')
check "'mount -t ' offers the types of vcs list" has_all "$(complete_line "$km --vcs-image x.test=img:1 mount -t ")" "$types"
check "'mount --types=x.' (split at =) narrows" same "$(complete_line "$km --vcs-image=x.test=img:1 mount --types=x.")" x.test
check "'--vcs-image nf' offers TYPE=" has_all "$(complete_line "$km --vcs-image nf")" "nfs="
check "'vcs pull ' offers the types" has_all "$(complete_line "$km --vcs-image x.test=img:1 vcs pull ")" "$types"
check "'run --net ' offers host and none" same "$(complete_line "$km run --net ")" $'host\nnone'
mkdir -p "$tmp/state/containers/"{runs,ended,.hidden} "$tmp/dir/sub"
echo '{"name": "runs", "status": "running"}' >"$tmp/state/containers/runs/state.json"
echo '{"name": "ended", "status": "exited"}' >"$tmp/state/containers/ended/state.json"
check "'--kubelet-dir=DIR/d' (split at =) completes the path" same "$(complete_line "$km --kubelet-dir=$tmp/d")" "$tmp/dir"
check "'setup --shared DIR/d' completes the path" same "$(complete_line "$km setup --shared $tmp/d")" "$tmp/dir"
check "'image import oci:DIR/d' (split at :) completes the path" \
        same "$(complete_line "$km image import oci:$tmp/d")" "$tmp/dir"
check "'image import o' offers the transports" same "$(complete_line "$km image import o")" $'oci:\noci-archive:'
# Container names from the state dir (ps would start an agent).
check "'stop ' offers the running containers of --state-dir" \
        same "$(complete_line "$km --state-dir $tmp/state stop ")" runs
check "'rm ' offers every container of \$KUBEMOUNT_STATE_DIR" \
        same "$(KUBEMOUNT_STATE_DIR=$tmp/state complete_line "$km rm ")" $'ended\nruns'
check "'exec NAME ' offers --" same "$(complete_line "$km --state-dir $tmp/state exec runs ")" --
check "nothing is offered in the container's command line" \
        same "$(complete_line "$km run --rootfs $tmp -- ls -")" ""
check "completing made no agent socket" test ! -e "$tmp/state/agent.sock"

# zsh: the same function through bashcompinit, as src/shell-completion/zsh/_kubemount loads it.
if [[ -n ${KUBEMOUNT_TEST_NO_ZSH-} ]]; then
        :
elif ! command -v zsh >/dev/null; then
        check "zsh is installed (scripts/deps)" false
else
        zsh_line() { # LINE: what the zsh file's function gives (zsh filters by prefix itself)
                zsh -f -c '
                        autoload -U +X bashcompinit && bashcompinit
                        compdef() { :; } # compinit'"'"'s, which complete calls
                        emulate sh -c "source \"\$1\""
                        COMP_LINE=$2 COMP_WORDS=(${=2}); [[ $2 == *" " ]] && COMP_WORDS+=("")
                        COMP_CWORD=$(( ${#COMP_WORDS} - 1 ))
                        _kubemount_complete
                        print -rl -- $COMPREPLY' zsh "$src/src/shell-completion/bash/kubemount" "$1"
        }
        check "zsh: the commands after 'kubemount '" same "$(zsh_line "$km ")" "$commands"
        check "zsh: 'kubemount mount --' offers mount's options" \
                has_all "$(zsh_line "$km mount --")" "$("$km" mount --help | help_options 0 mount | grep '^--')"
        check "zsh: 'kubemount --state-dir DIR rm ' offers the containers" \
                same "$(zsh_line "$km --state-dir $tmp/state rm ")" $'ended\nruns'
        # The installed file in an interactive zsh (compinit): a TAB completes the subcommand.
        mkdir -p "$tmp/zfunc" "$tmp/bin"
        sed "s|@bashcompletion@|$src/src/shell-completion/bash/kubemount|" \
                "$src/src/shell-completion/zsh/_kubemount.in" >"$tmp/zfunc/_kubemount"
        ln -s "$(realpath "$km")" "$tmp/bin/kubemount"
        check "zsh: a TAB after 'kubemount vcs li' (compinit, _kubemount) gives 'vcs list'" \
                test "$(cd "$tmp" && zsh -f "$src/tests/docs/zsh-tab.zsh" "$tmp/zfunc" "$tmp/bin" 'kubemount vcs li')" \
                = "kubemount vcs list"
fi
tap_done
