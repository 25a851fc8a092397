#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: a held run, the agent's protocol for a routed mount (agent-run.h),
# spoken by a client of the test's own.  The command waits for its client's
# go after PID 1 is set up; only that client may say it; the command's stdio
# are the client's and its status the answer, while the container stays
# running for what the command left (or, not staying, is gone when it is
# answered); config.json shows the shown args, never the held ones; a client
# that hangs up before its go ends the container, one that hangs up after it
# leaves the command running.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

node_up --no-kubelet
vcs_setup
vcs_agent_start
CONFIG=$KM_SCRATCH/config.json
vcs_run --print-spec -- sleep 1 >"$CONFIG" || bail_out "run --print-spec failed"

# held NAME STEPS SCRIPT [STAYS]: a held run of `sh -c SCRIPT` named NAME (staying after it
# unless STAYS is false), its stdout and stderr $KM_SCRATCH/NAME.out; STEPS (comma list) after
# the start: go, go-other (a go from another connection), hangup (close now), wait (for the
# exit), ps (`kubemount ps -a --json` then), pause (5 s); prints each answer's JSON on a line.
held() {
        python3 - "$KUBEMOUNT_STATE_DIR/agent.sock" "$CONFIG" "$1" "$2" "$3" "$KM_SCRATCH/$1.out" "${4:-true}" \
                "$KUBEMOUNT" <<'EOF'
import array, json, os, socket, subprocess, sys, time
sock_path, config, name, steps, script, out, stays, km = sys.argv[1:]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(20)
    s.connect(sock_path)
    return s
def ask(s, msg, fds=()):
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    s.sendmsg([json.dumps(msg).encode()], anc)
def answer(s):
    m = json.loads(s.recv(262145))
    print(json.dumps(m, sort_keys=True), flush=True)
    return m
fd_in = os.open("/dev/null", os.O_RDONLY)
fd_out = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
s = conn()
ask(s, {"op": "run", "config": json.load(open(config)), "detach": True, "name": name,
        "hold": {"args": ["sh", "-c", script], "stays": stays == "true"}}, [fd_in, fd_out, fd_out])
answer(s)
for step in steps.split(","):
    if step == "go":
        ask(s, {"op": "go", "name": name})
    elif step == "go-other":
        o = conn()
        ask(o, {"op": "go", "name": name})
        answer(o)
        o.close()
    elif step == "wait":
        answer(s)
    elif step == "pause":
        time.sleep(5)
    elif step == "ps":
        names = [c["name"] for c in json.loads(subprocess.run([km, "ps", "-a", "--json"], capture_output=True).stdout)]
        print("listed" if name in names else "not listed", flush=True)
    elif step == "hangup":
        s.close()
        break
EOF
}
status() { km ps -a --json | python3 -c 'import json, sys
print(next((c["status"] for c in json.load(sys.stdin) if c["name"] == sys.argv[1]), "none"))' "$1"; }

# 1. Started, held, then go: the command's output is the client's, its status the answer; the container stays.
run held h1 go-other,go,wait 'echo held-out; echo held-err >&2; sleep 1 & exit 7'
like "$OUT" '"started": true' "a held run is answered started"
like "$OUT" "holds no command for this client" "a go from another connection is refused"
like "$OUT" '"exit": 7' "the held command's status is the answer"
like "$(cat "$KM_SCRATCH/h1.out")" "held-out.*held-err" "its stdout and stderr are the client's"
is "$(status h1)" running "the container stays running after its command"
like "$(sed -n '/"args"/,/]/p' "$KUBEMOUNT_STATE_DIR/containers/h1/config.json")" '"sleep"' \
        "config.json has the shown args"
is "$(grep -rl held-out "$KUBEMOUNT_STATE_DIR/containers/h1")" "" "... and never the held ones"
run km stop h1
is "$(status h1)" exited "stop ends it"

# 2. The client hangs up before its go: the container ends, and its command never ran.
run held h2 hangup 'echo ran'
if wait_for 10 sh -c "[ \"\$($KUBEMOUNT ps -a --json | grep -c '\"h2\"')\" = 1 ] && ! $KUBEMOUNT ps --json | grep -q '\"h2\"'"; then
        ok "a client gone before its go: the container ends"
else
        not_ok "a client gone before its go: the container ends"
        diag "$(km ps -a 2>&1)"
fi
is "$(cat "$KM_SCRATCH/h2.out")" "" "... and its command never ran"

# 3. The client hangs up right after its go: the command runs on, and the container stays.
run held h3 go,hangup 'sleep 0.5; echo done-anyway'
check "... its command ran on" wait_for 10 grep -q done-anyway "$KM_SCRATCH/h3.out"
is "$(status h3)" running "a client gone after its go: the container stays"

# 4. A stop while the command waits for its go: PID 1 obeys it at once (not at the stop's timeout).
held h5 pause 'echo never' >/dev/null &
HELD=$!
check "h5 is held" wait_for 10 sh -c "$KUBEMOUNT ps --json | grep -q '\"h5\"'"
t0=$(now_ms)
check "stop --timeout 20 h5" km stop --timeout 20 h5
t1=$(now_ms)
if ((t1 - t0 < 3000)); then ok "... it ends at once ($((t1 - t0)) ms)"; else not_ok "... it ends at once ($((t1 - t0)) ms)"; fi
is "$(km ps -a --json | python3 -c 'import json, sys
print(next((c.get("exit_code") for c in json.load(sys.stdin) if c["name"] == "h5"), "none"))')" 143 \
        "... with status 143 (SIGTERM)"
is "$(cat "$KM_SCRATCH/h5.out")" "" "... and its command never ran"
wait "$HELD"

# 5. Not staying: answered once the container is gone with its command (a mount.nfs's).
run held h4 go,wait,ps 'echo once; exit 3' false
like "$OUT" '"exit": 3' "a held command that does not stay: its status is the answer"
like "$OUT" '"removed": true' "... given once its container is removed"
like "$OUT" "not listed" "... which ps -a no longer lists then"
for n in h1 h2 h3 h5; do check "rm -f $n" km rm -f "$n"; done
done_testing
