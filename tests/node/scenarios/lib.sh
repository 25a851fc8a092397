# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# TAP for the node VM's scenarios (/opt/node-test/lib.sh in the guest), with
# the names of tests/lib/node.sh's: a scenario is
#
#     #!/bin/bash
#     source /opt/node-test/lib.sh
#     check "kubemount check" kubemount check
#     is "$(findmnt -no PROPAGATION -T /var/lib/kubelet)" shared "the kubelet dir is shared"
#     done_testing
#
# ok / not_ok / is / like / unlike / check / check_fails / skip / diag,
# plan N (or done_testing at the end), bail_out REASON; run CMD sets RC, OUT,
# ERR; wait_for SECS CMD... polls.  Its stdout is the scenario's TAP (the
# runner keeps it as NAME.tap); its stderr goes to NAME.log, and so do diag
# lines: a failure's details are in both.  NODE_TEST_RESULTS is a directory
# for any other file worth keeping (it reaches the host's BUILD/node-last).

set -u -o pipefail

KM_TAP_N=0
KM_TAP_FAILED=0
KM_TAP_PLANNED=0
KM_TODO=""
KM_SCRATCH=$(mktemp -d /tmp/node-scenario.XXXXXX)
trap 'rm -rf "$KM_SCRATCH"' EXIT

_tap() { # STATUS DESC
        KM_TAP_N=$((KM_TAP_N + 1))
        local line="$1 $KM_TAP_N - ${2//$'\n'/ }"
        if [[ -n $KM_TODO ]]; then
                line+=" # TODO $KM_TODO"
        elif [[ $1 == "not ok" ]]; then
                KM_TAP_FAILED=$((KM_TAP_FAILED + 1))
        fi
        printf '%s\n' "$line"
        printf '%s\n' "$line" >&2 # the log reads in order
}
ok() { _tap ok "$*"; }
not_ok() { _tap "not ok" "$*"; }
diag() {
        printf '%s\n' "$@" | sed 's/^/# /'
        printf '%s\n' "$@" | sed 's/^/# /' >&2
}
plan() {
        KM_TAP_PLANNED=1
        echo "1..$1"
}
skip() { # DESC REASON
        KM_TAP_N=$((KM_TAP_N + 1))
        echo "ok $KM_TAP_N - $1 # SKIP $2"
}
# Exit 1 when a test failed: the runner keeps the status beside the TAP.
done_testing() {
        ((KM_TAP_PLANNED)) || echo "1..$KM_TAP_N"
        exit $((KM_TAP_FAILED > 0))
}
# bail_out REASON: the scenario cannot go on; the host counts it a failure.
bail_out() {
        echo "Bail out! $*"
        echo "Bail out! $*" >&2
        exit 1
}

is() { # GOT WANT DESC
        if [[ $1 == "$2" ]]; then
                ok "$3"
        else
                not_ok "$3"
                diag "got:  '$1'" "want: '$2'"
        fi
}
like() { # STRING ERE DESC
        if [[ $1 =~ $2 ]]; then ok "$3"; else
                not_ok "$3"
                diag "'$1'" "does not match /$2/"
        fi
}
unlike() { # STRING ERE DESC
        if [[ $1 =~ $2 ]]; then
                not_ok "$3"
                diag "'$1'" "matches /$2/"
        else ok "$3"; fi
}

# run CMD...: runs CMD with output captured into RC, OUT and ERR.
run() {
        "$@" >"$KM_SCRATCH/run.out" 2>"$KM_SCRATCH/run.err"
        RC=$?
        OUT=$(<"$KM_SCRATCH/run.out")
        ERR=$(<"$KM_SCRATCH/run.err")
}
# check DESC CMD... / check_fails DESC CMD...: CMD's exit status decides.
check() {
        local desc=$1
        shift
        run "$@"
        if ((RC == 0)); then ok "$desc"; else
                not_ok "$desc"
                diag "exit $RC: $*" "$OUT" "$ERR"
        fi
}
check_fails() {
        local desc=$1
        shift
        run "$@"
        if ((RC != 0)); then ok "$desc"; else
                not_ok "$desc"
                diag "unexpected success: $*" "$OUT" "$ERR"
        fi
}

# wait_for SECONDS CMD...: polls CMD until it succeeds (under TCG everything
# is ~10x slower than on the machine: be generous).
wait_for() {
        local deadline=$((SECONDS + $1))
        shift
        until "$@"; do
                ((SECONDS < deadline)) || return 1
                sleep 0.2
        done
}

# unit_is UNIT PROPERTY VALUE: systemctl show's PROPERTY of UNIT is VALUE.
unit_is() { [[ $(systemctl show -P "$2" "$1" 2>/dev/null) == "$3" ]]; }
