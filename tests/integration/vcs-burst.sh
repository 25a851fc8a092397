#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: the agent starts containers concurrently, bounded.  With
# KUBEMOUNT_MAX_STARTS=2, 40 detached runs at once all start, each in a
# cgroup of its own (made in it from the start on cgroup v2, moved on v1);
# ps is answered while a second burst waits for its turn; 8 runs that wait
# for their command's exit at once each get their own output and status
# (their stdio kept while they wait); a name asked for twice at once starts
# once; rm -f leaves no container and no group behind.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

node_up --no-kubelet
vcs_setup
KUBEMOUNT_MAX_STARTS=2 vcs_agent_start
# PID 1 puts the broker's listener at fd 100: the agent holds that number itself, so that no fd it
# hands a PID 1 (a user namespace's, under a burst's hundreds of open fds) is ever replaced by it.
is "$(readlink "/proc/$AGENT/fd/100" 2>&1)" /dev/null "the agent holds fd 100 (LAUNCH_BROKER_FD) on /dev/null"
N=40 # enough that the agent holds over 100 fds (LAUNCH_BROKER_FD) while they start

# burst PREFIX: N detached runs at once; prints how many exited 0.
burst() {
        local pids=() good=0 p i
        for i in $(seq 1 $N); do
                vcs_run --detach --name "$1$i" -- sleep 1000 >/dev/null 2>>"$KM_SCRATCH/burst.err" &
                pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" && good=$((good + 1)); done
        echo "$good"
}
running() { km ps --json 2>/dev/null | python3 -c 'import json, sys
print(sum(1 for c in json.load(sys.stdin) if c["name"].startswith(sys.argv[1]) and c["status"] == "running"))' "$1"; }

is "$(burst b)" "$N" "$N detached runs at once, at most 2 starting at a time: all exit 0"
[[ -s $KM_SCRATCH/burst.err ]] && diag "$(tail -n 5 "$KM_SCRATCH/burst.err")"
is "$(running b)" "$N" "ps: all $N are running"
pid=$(vcs_pid b7)
like "$(cat "/proc/$pid/cgroup" 2>&1)" "/ctr-b7(\$|$'\n')" "b7's PID 1 is in its own group ctr-b7"

# An exec in it lands in the same group (its helper is placed before its environment is scrubbed).
run km exec b7 -- sh -c 'sleep 0.3'
is "$RC" 0 "exec in b7: exit 0"
is "$(find /sys/fs/cgroup -type d -path '*/kubemount/ctr-b7' 2>/dev/null | wc -l)" 0 \
        "... and made no group ctr-b7 under the default parent (ours is $KUBEMOUNT_CGROUP_PARENT)"

# A second burst in the background, its starts held: each of its groups is made first, frozen
# (cgroup.freeze, v2's core freezer, there on both layouts), so the PID 1s made in them never
# report and the other runs wait for their turn.  ps is answered meanwhile; then they thaw.
CTR_GROUPS=$(dirname "$(for d in $(find /sys/fs/cgroup -type d -name ctr-b1 2>/dev/null); do
        [[ -e $d/cgroup.freeze ]] && echo "$d"; done | head -n 1)")
starting() { km ps -a --json 2>/dev/null | python3 -c 'import json, sys
print(sum(1 for c in json.load(sys.stdin) if c["name"].startswith("c")))'; }
two_starting() { [[ $(starting) -ge 2 ]]; }
frozen=0
for i in $(seq 1 $N); do
        mkdir "$CTR_GROUPS/ctr-c$i" && echo 1 >"$CTR_GROUPS/ctr-c$i/cgroup.freeze" && frozen=$((frozen + 1))
done
is "$frozen" "$N" "the second burst's $N groups are made frozen in $CTR_GROUPS"
burst c >"$KM_SCRATCH/burst-c" &
bg=$!
check "... two of its runs are starting, frozen" wait_for 10 two_starting
t0=$(now_ms)
run km ps
t1=$(now_ms)
listed=$(grep -c '^c[0-9]' <<<"$OUT")
kill -0 "$bg" 2>/dev/null && still=1 || still=0
is "$RC" 0 "ps while a burst of $N starts waits: exit 0 ($((t1 - t0)) ms)"
# KUBEMOUNT_MAX_STARTS=2: two are starting, the others wait unlisted.
if ((still == 1 && listed == 2)); then
        ok "... answered while the burst waited: its 2 starting listed, the other $((N - 2)) waiting"
else
        not_ok "... answered while the burst waited ($listed of $N listed, not 2; burst still running: $still)"
fi
for i in $(seq 1 $N); do echo 0 >"$CTR_GROUPS/ctr-c$i/cgroup.freeze"; done
wait "$bg"
is "$(cat "$KM_SCRATCH/burst-c")" "$N" "... and that burst's $N runs all exit 0"

# Runs that wait for their command, at once: each its own stdout and exit status.
pids=()
for i in $(seq 1 8); do
        vcs_run -- sh -c "echo out-$i; exit $i" >"$KM_SCRATCH/out-$i" 2>&1 &
        pids+=($!)
done
bad=()
for i in $(seq 1 8); do
        wait "${pids[$((i - 1))]}"
        rc=$?
        [[ $rc == "$i" && $(cat "$KM_SCRATCH/out-$i") == "out-$i" ]] || bad+=("$i: exit $rc, $(cat "$KM_SCRATCH/out-$i")")
done
is "${bad[*]}" "" "8 runs at once that wait for their command: each prints its own output and exits with its own status"

# The same name twice at once: one starts, the other is told it runs.
vcs_run --detach --name twice -- sleep 1000 >/dev/null 2>"$KM_SCRATCH/twice-1" &
p1=$!
vcs_run --detach --name twice -- sleep 1000 >/dev/null 2>"$KM_SCRATCH/twice-2" &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
is "$(((r1 == 0) + (r2 == 0)))" 1 "one name asked for twice at once: one run starts ($r1, $r2)"
like "$(cat "$KM_SCRATCH/twice-1" "$KM_SCRATCH/twice-2")" "container twice is running" "... the other is told it runs"

pids=()
for p in b c; do
        for i in $(seq 1 $N); do
                km rm -f "$p$i" >/dev/null 2>&1 &
                pids+=($!)
        done
done
km rm -f twice >/dev/null 2>&1
wait "${pids[@]}" # (a bare wait would wait for the agent too)
run km ps -a --json
is "$(python3 -c 'import json, sys; print(len(json.loads(sys.argv[1])))' "$OUT")" 0 "rm -f of all: no container is left"
# Each group goes when its PID 1 has exited (rm -f answers first).
their_groups() {
        find /sys/fs/cgroup -type d -regextype egrep -regex ".*/${KUBEMOUNT_CGROUP_PARENT:-kubemount}/ctr-([bc][0-9]+|twice)" 2>/dev/null | wc -l
}
no_groups() { [[ $(their_groups) == 0 ]]; }
if wait_for 20 no_groups; then ok "... and no group of theirs"; else
        not_ok "... and no group of theirs ($(their_groups) left)"
        find /sys/fs/cgroup -type d -regextype egrep -regex ".*/${KUBEMOUNT_CGROUP_PARENT:-kubemount}/ctr-([bc][0-9]+|twice)" | while read -r g; do
                diag "$g: $(xargs <"$g/cgroup.procs")" "$(grep -E "${g##*/ctr-}[: ]" "$KM_SCRATCH/agent.log" | tail -n 8)"
        done
fi
done_testing
