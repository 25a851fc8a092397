#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The life of a detached VCS container: run --detach (prints the name,
# returns at once), ps (text, --json, -a), logs (stdout and stderr, bounded),
# exec (status, -i, -e, -w, the container's namespaces), stop (SIGTERM
# forwarded to a daemon that traps it; SIGKILL after --timeout for one that
# ignores it), rm (and rm -f), a name in use.  gc: a FUSE daemon's container
# killed with kill -9 of its PID 1 is "exited 137", its mount is ENOTCONN and
# gc unmounts it; with the agent itself killed, containers keep running, a
# new agent (started on demand) sees which are gone.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"

node_up --no-kubelet
pod_up a
vcs_setup
vcs_agent_start
NL=$'\n'
P=$KUBELET_DIR/plugins/kubemount-test
C=/var/lib/kubelet/plugins/kubemount-test
DATA=$NODE/vcs-data
mkdir -p "$P" "$DATA"
echo "served by a VCS" >"$DATA/data"

# ---- run --detach, ps ----
daemon='echo started; echo to-stderr >&2; trap "echo got TERM; exit 0" TERM; while :; do sleep 0.1; done'
t0=$(now_ms)
run vcs_run --detach --name d1 -- sh -c "$daemon"
t=$(($(now_ms) - t0))
is "$RC:$OUT" "0:d1" "run --detach: exit 0, prints the name"
holds "... returns at once (${t} ms)" test "$t" -lt 3000
is "$(vcs_status d1)" "running" "ps --json: d1 is running"
pid=$(vcs_pid d1)
check "ps --json: its pid ($pid) is alive" kill -0 "$pid"
is "$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status" 2>&1)" "1" "... and is PID 1 of its own pid namespace"
is "$(vcs_json "sorted(k for k in ('name','pid','status','created','command') if k in get('d1'))")" \
        '["command", "created", "name", "pid", "status"]' "ps --json: name, pid, status, created, command"
like "$(vcs_json "get('d1').get('command')")" "sh" "... command is the one run"
run km ps
is "$RC" 0 "ps: exit 0"
like "$OUT" "(^|$NL)d1[[:space:]]+${pid}[[:space:]]+running" "ps: a line 'd1 $pid running ...'"
run km ps --json
holds "ps --json without -a parses" python3 -c 'import json, sys; json.loads(sys.argv[1])' "$OUT"

# ---- logs ----
if wait_for 5 vcs_logs_has d1 to-stderr; then ok "logs: stdout and stderr of the daemon"; else
        not_ok "logs: stdout and stderr of the daemon"
        diag "$(km logs d1 2>&1)"
fi
like "$(km logs d1 2>&1)" "started" "... 'started' too"
run km logs no-such-container
holds "logs of an unknown name fails" test "$RC" != 0
like "$ERR" "no-such-container" "... and names it"

# ---- exec ----
run km exec d1 -- sh -c 'exit 7'
is "$RC" 7 "exec: the exit status passes through"
run km exec d1 -- sh -c 'kill -9 $$'
is "$RC" 137 "exec: killed by a signal, 128+9"
run km exec d1 -- no-such-command
is "$RC" 127 "exec: a missing command, 127"
run km exec d1 -- echo hi
is "$RC:$OUT" "0:hi" "exec: output"
run with_stdin "piped" km exec -i d1 -- cat
is "$OUT" "piped" "exec -i: stdin passes"
run with_stdin "piped" km exec d1 -- cat
is "$RC:$OUT" "0:" "exec without -i: stdin is /dev/null"
run km exec -e A=b -e "C=d e" d1 -- sh -c 'echo "$A|$C"'
is "$OUT" "b|d e" "exec -e: environment"
run km exec -w /usr/bin d1 -- pwd
is "$OUT" "/usr/bin" "exec -w: working directory"
for ns in pid mnt uts ipc; do
        is "$(km exec d1 -- readlink /proc/self/ns/$ns 2>&1)" "$(readlink /proc/"$pid"/ns/$ns || echo "(no pid)")" \
                "exec: in the container's $ns namespace"
done
check "exec: in the container's root" km exec d1 -- test -e /etc/kubemount-test-rootfs
run km exec no-such-container -- true
holds "exec into an unknown name fails" test "$RC" != 0 -a "$RC" != 127
like "$ERR" "no-such-container" "... and names it"

# ---- a name in use ----
run vcs_run --detach --name d1 -- sleep 1
is "$RC" 125 "run --detach --name d1 again: exit 125 (name in use)"
like "$ERR" "d1" "... and the message names it"

# ---- stop: TERM forwarded ----
t0=$(now_ms)
run km stop d1
t=$(($(now_ms) - t0))
is "$RC" 0 "stop d1: exit 0"
holds "... quickly: the daemon handles TERM (${t} ms)" test "$t" -lt 5000
is "$(vcs_status d1)" "exited 0" "... it exited 0 (its TERM trap)"
like "$(km logs d1 2>&1)" "got TERM" "... its trap ran (logs)"
check_fails "... its PID 1 is gone" kill -0 "$pid"
run km ps
unlike "$OUT" "(^|$NL)d1[[:space:]]" "ps without -a does not list it"
run km ps -a
like "$OUT" "(^|$NL)d1[[:space:]].*exited 0" "ps -a lists it: exited 0"
run km exec d1 -- true
holds "exec into a stopped container fails" test "$RC" != 0

# ---- stop: a daemon that ignores TERM gets KILL after --timeout ----
run vcs_run --detach --name d2 -- sh -c 'trap "" TERM; echo ready; while :; do sleep 0.1; done'
is "$RC" 0 "run --detach d2 (ignores TERM)"
pid2=$(vcs_pid d2)
wait_for 5 vcs_logs_has d2 ready
t0=$(now_ms)
run km stop --timeout 1 d2
t=$(($(now_ms) - t0))
is "$RC" 0 "stop --timeout 1 d2: exit 0"
holds "... after the timeout (${t} ms >= 900)" test "$t" -ge 900
holds "... and not much later (${t} ms < 6000)" test "$t" -lt 6000
is "$(vcs_status d2)" "exited 137" "... killed: exited 137"
check_fails "... its PID 1 is gone" kill -0 "$pid2"

# ---- rm ----
check "rm d1" km rm d1
is "$(vcs_status d1)" "" "... gone from ps -a"
run km logs d1
holds "... and its logs" test "$RC" != 0
check "rm d2" km rm d2
run vcs_run --detach --name d3 -- sleep 1000
pid3=$(vcs_pid d3)
run km rm d3
holds "rm of a running container fails" test "$RC" != 0
is "$(vcs_status d3)" "running" "... it keeps running"
check "rm -f d3 stops and removes it" km rm -f d3
is "$(vcs_status d3)" "" "... gone from ps -a"
if wait_for 5 vcs_gone "$pid3"; then ok "... its PID 1 is gone"; else not_ok "... its PID 1 is gone"; fi
run km rm no-such-container
holds "rm of an unknown name fails" test "$RC" != 0
check "run --detach --name d1 again after rm" vcs_run --detach --name d1 -- true
vcs_wait_status d1 '^exited'
is "$(vcs_status d1)" "exited 0" "... it ran and exited 0"
check "rm d1" km rm d1

# ---- the log is bounded ----
run vcs_run --detach --name big -- sh -c 'seq 1 3000000; echo END'
vcs_wait_status big '^exited' 120
run km logs big
total=$(($(seq 1 3000000 | wc -c) + 4))
holds "logs of 21 MB of output: bounded (${#OUT} bytes < $total)" test "${#OUT}" -lt "$total" -a "${#OUT}" -gt 0
is "$(tail -n1 <<<"$OUT")" "END" "... and it keeps the end"
check "rm big" km rm big

# ---- gc: a FUSE daemon's container killed with kill -9 of its PID 1 ----
mkdir -p "$P/g"
run vcs_run --detach --name g1 --mount "$DATA:/srv" --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- \
        bindfs -f /srv "$C/g"
is "$RC" 0 "run --detach g1 (bindfs)"
wait_for 10 is_mounted host "$P/g"
is "$(cat "$P/g/data" 2>&1)" "served by a VCS" "g1 serves reads in the host"
gpid=$(vcs_pid g1)
check "kill -9 of g1's PID 1" kill -9 "$gpid"
vcs_wait_status g1 '^exited'
is "$(vcs_status g1)" "exited 137" "ps: g1 exited 137"
run stat "$P/g/data"
like "$ERR" "not connected" "the mount it left is dead (ENOTCONN)"
check "... in the pod too" is_mounted pod:a "$P/g"
run km --kubelet-dir="$KUBELET_DIR" gc
is "$RC" 0 "gc: exit 0"
like "$OUT" "$P/g" "gc: reports the dead mount it unmounted"
check_fails "... gone from the host" is_mounted host "$P/g"
check_fails "... gone from the pod" is_mounted pod:a "$P/g"
run km --kubelet-dir="$KUBELET_DIR" gc --json
is "$RC" 0 "gc --json: exit 0"
holds "... valid JSON" python3 -c 'import json, sys; json.loads(sys.argv[1])' "$OUT"
unlike "$OUT" "$P/g" "... nothing more to do for that mount"
check "rm g1" km rm g1

# ---- an exec's client killed while its command runs: a stop is still answered ----
# The agent kills the exec's helper; the command, in the container's PID namespace, becomes the
# agent's child (a subreaper). Unreaped once it ended, its zombie kept the killed PID 1 from
# ever exiting, and the stop (routed umount's too) waited for ever (scripts/soak found it).
run vcs_run --detach --name orph -- sleep 1000
is "$RC" 0 "run orph"
"$KUBEMOUNT" exec orph -- sleep 4242 &
xpid=$!
stray() { # the pid of orph's `sleep 4242`
        local p a
        for p in /proc/[0-9]*; do
                mapfile -d '' -t a <"$p/cmdline" 2>/dev/null || continue
                [[ ${a[0]:-} == sleep && ${a[1]:-} == 4242 ]] && echo "${p#/proc/}" && return 0
        done
        return 1
}
check "exec orph -- sleep 4242 runs" wait_for 10 stray
spid=$(stray)
kill -KILL "$xpid"
wait "$xpid" 2>/dev/null
# (its helper is killed, the command is left: it is ours to end, as a container's process would)
check "... its client killed, the command is still there" kill -0 "$spid"
kill -KILL "$spid"
start=$SECONDS
run timeout -k 2 20 "$KUBEMOUNT" stop --timeout 2 orph
is "$RC" 0 "stop orph after its exec's client and command were killed: exit 0 (not hung)"
if ((SECONDS - start < 15)); then ok "... in $((SECONDS - start)) s"; else not_ok "... in $((SECONDS - start)) s"; fi
check "rm orph" km rm orph

# ---- the agent killed: containers keep running; state reconciled ----
run vcs_run --detach --name keep -- sleep 1000
run vcs_run --detach --name lost -- sleep 1000
keep=$(vcs_pid keep) lost=$(vcs_pid lost)
check "kill -9 of the agent" kill -9 "$AGENT"
wait "$AGENT" 2>/dev/null
check "... the container 'keep' survives it" kill -0 "$keep"
kill -9 "$lost"
wait_for 5 vcs_gone "$lost"
run km --kubelet-dir="$KUBELET_DIR" gc
is "$RC" 0 "gc without an agent: exit 0"
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids
[[ -n $agents ]] && node_track $agents
like "$(vcs_status lost)" "^(exited.*)?$" "ps: 'lost' is marked exited or removed ($(vcs_status lost))"
is "$(vcs_status keep)" "running" "ps: 'keep' is still running"
is "$(vcs_pid keep)" "${keep:-(no pid)}" "... with the same pid"
check "stop keep" km stop --timeout 2 keep
check_fails "... it is gone" kill -0 "$keep"

# ---- an agent in a group that was once killed with cgroup.kill (systemd stops a unit so) ----
# 6.18 kills a child cloned into a new group from a parent whose group was killed (its kill
# count differs): cgroup_fork_into finds it out once, and moves the agent's children instead.
for p in $(vcs_agent_pids); do kill "$p"; done
wait_for 10 sh -c '[ -z "$(pgrep -f "kubemount agent")" ]'
cgroup_v2
mkdir -p "$CG2/$KUBEMOUNT_CGROUP_PARENT/agent" && echo 1 >"$CG2/$KUBEMOUNT_CGROUP_PARENT/cgroup.kill" ||
        bail_out "cannot kill $CG2/$KUBEMOUNT_CGROUP_PARENT with cgroup.kill"
vcs_agent_start
run vcs_run -d --name after-kill -- sleep 1000
is "$RC" 0 "run -d under an agent whose group was killed once: it starts ($ERR)"
is "$(vcs_status after-kill)" "running" "... and runs"
run vcs_run -- echo short
is "$RC:$OUT" "0:short" "... a run that is not detached too"
grep -q "kills a child cloned into its group" "$KM_SCRATCH/agent.log" &&
        diag "the agent's probe found the kernel killing children cloned into a group (moved instead)"
check "rm -f after-kill" km rm -f after-kill

vcs_cleanup
node_down "vcs detach"
done_testing
