#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 9, item 19: an agent that `kubemount run` starts on demand does not
# inherit its caller.  A caller that is a copy of kubemount, with a fake runc
# first in PATH, junk in its environment (INVOCATION_ID, LD_LIBRARY_PATH,
# HOME), umask 077, SIGHUP and SIGUSR1 ignored, a working directory of its
# own and lowered or raised soft rlimits starts an agent that runs
# KUBEMOUNT_AGENT_BINARY (never the caller's own binary) with exactly PATH,
# KUBEMOUNT_READY_FD and the kubemount settings it shares with the caller,
# umask 0022, cwd /, no signal ignored or blocked, soft rlimits reset
# (core 0, files and the rest at the hard limit, stack 8 MiB); --runtime runc
# runs the system's runc, not the caller's.  Without KUBEMOUNT_AGENT_BINARY
# the agent is the installed kubemount, not the caller's copy; a relative,
# group-writable, foreign-owned or non-file KUBEMOUNT_AGENT_BINARY is refused
# with a message naming it, and no agent starts.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

need_tools runc python3 prlimit stat

node_up --no-kubelet
vcs_setup
FIXED_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# The caller: a copy of kubemount (named kubemount) and a fake runc first in its PATH.
CALLER=$NODE/caller
mkdir -p "$CALLER/bin" "$CALLER/cwd"
cp "$KUBEMOUNT" "$CALLER/bin/kubemount"
cat >"$CALLER/bin/runc" <<EOF
#!/bin/sh
echo "\$@" >>"$CALLER/fake-runc-ran"
exec /bin/false
EOF
chmod 755 "$CALLER/bin/runc"

# agents_of DIR: pids of `kubemount agent` processes serving state dir DIR.
agents_of() {
        local p
        for p in $(vcs_agent_pids); do
                tr '\0' '\n' <"/proc/$p/cmdline" | grep -qxF "$1" && echo "$p"
        done
}

# as_caller CMD...: CMD from the odd caller (its umask, signals, rlimits, environment, cwd).
as_caller() {
        (
                cd "$CALLER/cwd" || exit 1
                umask 077
                trap '' HUP USR1
                ulimit -S -n 64
                ulimit -S -c "$(ulimit -H -c)"
                ulimit -S -f 100000
                [[ $(ulimit -H -s) == unlimited ]] && ulimit -S -s unlimited
                exec env PATH="$CALLER/bin:$PATH" INVOCATION_ID=0123456789abcdef LD_LIBRARY_PATH=/nonexistent \
                        HOME="$CALLER" KM_TEST_JUNK=caller-only KUBEMOUNT_STORE_DIR="$NODE/store" "$@"
        )
}

# ---- an agent started by the odd caller ----
export KUBEMOUNT_STATE_DIR=$NODE/run/km-odd
run as_caller timeout 30 "$CALLER/bin/kubemount" run --rootfs "$ROOTFS" -- true
is "$RC" 0 "run from the odd caller starts an agent and runs (exit 0)"
[[ $RC == 0 ]] || diag "$ERR"
agent=$(agents_of "$KUBEMOUNT_STATE_DIR")
# shellcheck disable=SC2086 # a list of pids
[[ -n $agent ]] && node_track $agent
like "$agent" '^[0-9]+$' "one agent serves $KUBEMOUNT_STATE_DIR ($agent)"
[[ $agent =~ ^[0-9]+$ ]] || { echo "Bail out! no agent to look at"; exit 1; }

is "$(readlink "/proc/$agent/exe")" "$KUBEMOUNT" "its binary is KUBEMOUNT_AGENT_BINARY, not the caller's copy"
is "$(tr '\0' '\n' <"/proc/$agent/environ" | sed 's/=.*//' | sort | tr '\n' ' ')" \
        "KUBEMOUNT_CGROUP_PARENT KUBEMOUNT_READY_FD KUBEMOUNT_STORE_DIR PATH " \
        "its environment: PATH, KUBEMOUNT_READY_FD and the settings it shares with the caller only"
is "$(tr '\0' '\n' <"/proc/$agent/environ" | grep '^PATH=')" "PATH=$FIXED_PATH" "its PATH is the fixed one"
is "$(tr '\0' '\n' <"/proc/$agent/environ" | grep '^KUBEMOUNT_STORE_DIR=')" "KUBEMOUNT_STORE_DIR=$NODE/store" \
        "KUBEMOUNT_STORE_DIR is passed on"
is "$(awk '/^Umask:/ { print $2 }' "/proc/$agent/status")" "0022" "its umask is 0022"
is "$(readlink "/proc/$agent/cwd")" "/" "its working directory is /"
is "$(awk '/^SigIgn:/ { print $2 }' "/proc/$agent/status")" "0000000000000000" "it ignores no signal"
is "$(awk '/^SigBlk:/ { print $2 }' "/proc/$agent/status")" "0000000000000000" "it blocks no signal"

# limit RESOURCE SOFT|HARD: the agent's limit (prlimit's names).
limit() { prlimit --pid "$agent" --noheadings --raw --output "$2" "--$1" 2>/dev/null | tr -d ' '; }
hard_nofile=$(limit nofile HARD)
want_nofile=$hard_nofile
[[ $hard_nofile == unlimited ]] || ((hard_nofile <= 1048576)) || want_nofile=1048576
is "$(limit nofile SOFT)" "$want_nofile" "soft RLIMIT_NOFILE is the hard limit, at most 1048576 (the caller's was 64)"
is "$(limit core SOFT)" "0" "soft RLIMIT_CORE is 0"
is "$(limit fsize SOFT)" "$(limit fsize HARD)" "soft RLIMIT_FSIZE is the hard limit (the caller's was lower)"
hard_stack=$(limit stack HARD)
want_stack=8388608
[[ $hard_stack != unlimited ]] && ((hard_stack < 8388608)) && want_stack=$hard_stack
is "$(limit stack SOFT)" "$want_stack" "soft RLIMIT_STACK is 8 MiB"

# The runtime is looked up in the agent's PATH: the system's runc, not the caller's.
run as_caller timeout 30 "$CALLER/bin/kubemount" run --rootfs "$ROOTFS" --name via-runc --detach --runtime runc --privileged -- sleep 100
is "$RC:$OUT" "0:via-runc" "run --runtime runc from the odd caller"
like "$(vcs_json "(get('via-runc') or {}).get('runtime')")" "^/(usr/)?s?bin/runc$" "... runs the system's runc"
check_fails "... and never the caller's fake runc" test -e "$CALLER/fake-runc-ran"
km rm -f via-runc >/dev/null 2>&1

# A container started by that agent inherits neither (its environment is the config's).
run as_caller timeout 30 "$CALLER/bin/kubemount" run --rootfs "$ROOTFS" -- sh -c 'umask; env | grep -c "KM_TEST_JUNK\|INVOCATION_ID"'
is "$OUT" "0022${NL:=$'\n'}0" "its containers get umask 0022 and none of the caller's variables"
kill -KILL "$agent"

# ---- no KUBEMOUNT_AGENT_BINARY: the installed kubemount, never the caller's copy ----
export KUBEMOUNT_STATE_DIR=$NODE/run/km-installed
run env -u KUBEMOUNT_AGENT_BINARY timeout 30 "$CALLER/bin/kubemount" run --rootfs "$ROOTFS" -- true
agent=$(agents_of "$KUBEMOUNT_STATE_DIR" | tr '\n' ' ')
agent=${agent% }
# shellcheck disable=SC2086 # a list of pids
[[ -n $agent ]] && node_track $agent
if [[ $RC == 0 ]]; then
        exe=$(readlink "/proc/${agent:-none}/exe")
        diag "an installed kubemount started the agent: $exe"
        like "$exe" "^/.*/kubemount$" "without KUBEMOUNT_AGENT_BINARY: an installed kubemount runs the agent"
        unlike "$exe" "^$CALLER/" "... not the caller's copy"
else
        like "$ERR" "start the agent: /[^ ]*/kubemount: not installed in the host" \
                "without KUBEMOUNT_AGENT_BINARY and no kubemount installed: run says so"
        unlike "$ERR" "$CALLER" "... and never names (or runs) the caller's copy"
        is "$agent" "" "... and no agent runs"
fi
# shellcheck disable=SC2086 # a list of pids
[[ $agent =~ ^[0-9\ ]+$ ]] && kill -KILL $agent

# ---- KUBEMOUNT_AGENT_BINARY that must not be run ----
# refused DESC ERE PATH: run with KUBEMOUNT_AGENT_BINARY=PATH fails with ERE, no agent starts.
refused() {
        export KUBEMOUNT_STATE_DIR=$NODE/run/km-refused
        run env KUBEMOUNT_AGENT_BINARY="$3" timeout 30 "$KUBEMOUNT" run --rootfs "$ROOTFS" -- true
        is "$RC" 125 "$1: run fails (exit 125)"
        like "$ERR" "$2" "$1: the message says why"
        started=$(agents_of "$KUBEMOUNT_STATE_DIR")
        is "$started" "" "$1: no agent starts"
        # shellcheck disable=SC2086 # a list of pids
        [[ -n $started ]] && node_track $started
}
cp "$KUBEMOUNT" "$NODE/km-group-writable"
chmod 775 "$NODE/km-group-writable"
cp "$KUBEMOUNT" "$NODE/km-foreign"
chown 1234:1234 "$NODE/km-foreign"
refused "a relative path" "KUBEMOUNT_AGENT_BINARY=build/kubemount: not an absolute path" build/kubemount
refused "a group-writable binary" "$NODE/km-group-writable: writable by group or others, refusing" \
        "$NODE/km-group-writable"
refused "a binary owned by uid 1234" "$NODE/km-foreign: not owned by root, refusing" "$NODE/km-foreign"
refused "a directory" "$NODE: not an executable file" "$NODE"
refused "a missing file" "$NODE/none: not installed in the host" "$NODE/none"

export KUBEMOUNT_STATE_DIR=$NODE/run/kubemount
node_down "agent environment"
done_testing
