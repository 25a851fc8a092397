#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount run: a short-lived VCS container from the test image
# (tests/lib/rootfs.sh).  Its output, exit status (0, N, 127 not found, 126
# not executable, 128+signal, 124 after --timeout, 125 for kubemount's own
# errors), stdin (/dev/null unless -i), --env, --cwd, hostname, the
# container's own pid namespace and /proc, /dev and /sys, --net, --host-dev,
# --read-only, -t, the same run twice and ten at once.  The first run starts
# the agent on demand.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"
need_tools runc

node_up --no-kubelet
vcs_setup
NL=$'\n'

# ---- the agent starts on demand (we are in the host's pid namespace) ----
check_fails "no agent before the first run" test -S "$KUBEMOUNT_STATE_DIR/agent.sock"
# Through a pipe ($(...)): an agent started on demand must not hold it open.
run timeout 30 bash -c 'out=$("$1" run --rootfs "$2" -- echo hello) && echo "$out"' sh "$KUBEMOUNT" "$ROOTFS"
is "$RC" 0 "run -- echo hello: exit 0 (and the agent it starts does not hold the caller's stdout)"
is "$OUT" "hello" "... prints hello"
unlike "$ERR" "[Ww]arning" "... no warning"
holds "the first run started the agent (agent.sock)" test -S "$KUBEMOUNT_STATE_DIR/agent.sock"
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids
[[ -n $agents ]] && node_track $agents
like "$agents" '^[0-9]+$' "one agent process ($agents)"
run vcs_run -- true
is "$(vcs_agent_pids)" "${agents:-(none)}" "the next run uses the same agent"

# ---- exit status ----
run vcs_run -- true
is "$RC" 0 "true: exit 0"
run vcs_run -- false
is "$RC" 1 "false: exit 1"
run vcs_run -- sh -c 'exit 3'
is "$RC" 3 "sh -c 'exit 3': exit 3"
run vcs_run -- /no/such/command
is "$RC" 127 "a missing command (path): exit 127"
like "$OUT$ERR" "/no/such/command" "... and the message names it"
run vcs_run -- no-such-command
is "$RC" 127 "a missing command (PATH lookup): exit 127"
run vcs_run -- /etc/passwd
is "$RC" 126 "a file that is not executable: exit 126"
run vcs_run -- /usr
is "$RC" 126 "a directory: exit 126"
run vcs_run -- sh -c 'kill -9 $$'
is "$RC" 137 "killed by SIGKILL: exit 128+9"
run vcs_run -- sh -c 'kill -TERM $$'
is "$RC" 143 "killed by SIGTERM: exit 128+15"

# ---- kubemount's own errors: 125 and "kubemount: run: " ----
run km run --rootfs "$NODE/no-such-rootfs" -- true
is "$RC" 125 "a missing --rootfs: exit 125"
like "$ERR" "^kubemount: run: " "... message starts with 'kubemount: run: '"
like "$ERR" "no-such-rootfs" "... and names the directory"
run km run --rootfs "$ROOTFS"
is "$RC" 125 "no command: exit 125"
run vcs_run --no-such-option -- true
is "$RC" 125 "an unknown option: exit 125"
like "$ERR" "^kubemount: run: " "... message starts with 'kubemount: run: '"
run vcs_run --mount "$NODE/no-such-source:/mnt" -- true
is "$RC" 125 "a --mount whose source is missing: exit 125"
like "$ERR" "no-such-source" "... and the message names it"
run vcs_run --timeout nonsense -- true
is "$RC" 125 "--timeout nonsense: exit 125"

# ---- --timeout ----
t0=$(now_ms)
run vcs_run --timeout 1 -- sleep 30
t=$(($(now_ms) - t0))
is "$RC" 124 "--timeout 1 -- sleep 30: exit 124"
holds "... after ${t} ms (< 5 s)" test "$t" -lt 5000
if wait_for 5 eval '! pgrep -fx "sleep 30" >/dev/null'; then ok "... and the container's sleep is gone"; else
        not_ok "... and the container's sleep is gone"
        diag "$(ps -eo pid,ppid,args)"
fi
run vcs_run --timeout 10 -- echo quick
is "$RC:$OUT" "0:quick" "a command that ends before its --timeout: its own status"

# ---- stdin ----
run with_stdin "data from the test" vcs_run -- cat
is "$RC:$OUT" "0:" "stdin is /dev/null without -i: cat prints nothing, exit 0"
run with_stdin "data" vcs_run -- sh -c 'read -r x; echo "read=$?"'
is "$OUT" "read=1" "... read gets EOF"
run with_stdin "data from the test" vcs_run -i -- cat
is "$RC:$OUT" "0:data from the test" "-i passes stdin"
head -c 1048576 /dev/urandom >"$KM_SCRATCH/random"
want=$(sha256sum <"$KM_SCRATCH/random" | cut -d' ' -f1)
run timeout 30 bash -c '"$1" run --rootfs "$2" -i -- sha256sum <"$3"' sh "$KUBEMOUNT" "$ROOTFS" "$KM_SCRATCH/random"
is "${OUT%% *}" "$want" "-i: 1 MiB of stdin arrives intact"
run timeout 30 bash -c 'head -c 3000000 /dev/zero | "$1" run --rootfs "$2" -- true' sh "$KUBEMOUNT" "$ROOTFS"
is "$RC" 0 "without -i, stdin the container never reads does not block the run"

# ---- output ----
run timeout 30 bash -c '"$1" run --rootfs "$2" -- sh -c "echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; sleep 0.1; echo err2 >&2" 2>&1' \
        sh "$KUBEMOUNT" "$ROOTFS"
is "$(tr '\n' ' ' <<<"$OUT")" "out1 err1 out2 err2 " "stdout and stderr: both printed, in order"
run vcs_run -- seq 1 100000
is "$(wc -l <<<"$OUT"):$(tail -n1 <<<"$OUT")" "100000:100000" "600 kB of output, complete"
run vcs_run -- sh -c 'printf "no newline"'
is "$OUT" "no newline" "output without a final newline"

# ---- environment ----
run vcs_run --env FOO=bar --env "SPACES=a b" --env EMPTY= -- sh -c 'echo "$FOO|$SPACES|${EMPTY-unset}"'
is "$OUT" "bar|a b|" "--env sets variables (with spaces, empty)"
KM_CALLER_SECRET=leak run vcs_run -- env
unlike "$OUT" "KM_CALLER_SECRET" "the caller's environment does not reach the container"
like "$OUT" "(^|$NL)PATH=" "... PATH is set"

# ---- working directory ----
run vcs_run -- pwd
is "$OUT" "/" "the default working directory is /"
run vcs_run --cwd /usr/bin -- pwd
is "$OUT" "/usr/bin" "--cwd /usr/bin"
run vcs_run --cwd /no/such/dir -- pwd
is "$RC" 125 "--cwd to a missing directory: exit 125"

# ---- the container's namespaces ----
check "the command runs in the test image" vcs_run -- test -e /etc/kubemount-test-rootfs
run vcs_run -- sh -c 'echo $$'
is "$OUT" "2" "the command is PID 2 (under kubemount's init, PID 1)"
run vcs_run -- cat /proc/1/comm
unlike "$OUT" "^(cat|sh)$" "PID 1 is not the command ($OUT)"
run vcs_run -- sh -c 'echo $$; cd /proc && echo [0-9]*'
shell=$(head -n1 <<<"$OUT")
is "$(tail -n1 <<<"$OUT")" "$(printf '%s\n' 1 "$shell" | sort | tr '\n' ' ' | sed 's/ $//')" \
        "/proc shows only the container's processes (init and the shell)"
is "$(vcs_run -- stat -f -c %T /proc 2>&1)" "proc" "a fresh procfs on /proc"
for ns in pid mnt ipc uts; do
        run vcs_run -- readlink /proc/self/ns/$ns
        holds "a $ns namespace of its own ($OUT)" test "$RC:$OUT" != "0:$(readlink /proc/self/ns/$ns)" -a "$RC" = 0
done
run vcs_run -- readlink /proc/self/ns/net
is "$OUT" "$(readlink /proc/self/ns/net)" "host network by default"
run vcs_run --net host -- readlink /proc/self/ns/net
is "$OUT" "$(readlink /proc/self/ns/net)" "--net host"
run vcs_run --net none -- sh -c 'readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
holds "--net none: a network namespace of its own" test "$RC" = 0 -a "$(head -n1 <<<"$OUT")" != "$(readlink /proc/self/ns/net)"
is "$(tail -n +2 <<<"$OUT")" "lo" "... with only lo"

# ---- hostname (the UTS namespace) ----
run vcs_run -- hostname
is "$OUT" "$(hostname)" "hostname: the host's (host network)"
host_uts=$(readlink /proc/self/ns/uts)
# Changes the name only if it is in a UTS namespace of its own: never the machine's.
run vcs_run --env HOST_UTS="$host_uts" -- sh -c \
        '[ "$(readlink /proc/self/ns/uts)" != "$HOST_UTS" ] || exit 99; hostname km-vcs-test && hostname'
is "$RC:$OUT" "0:km-vcs-test" "a UTS namespace of its own: the container sets its hostname"
holds "... the host's hostname is unchanged" test "$(hostname)" != km-vcs-test

# ---- /dev and /sys ----
run vcs_run -- ls /dev
devs=" $(tr '\n' ' ' <<<"$OUT")"
for d in null zero full random urandom tty fuse pts shm; do
        like "$devs" " $d " "/dev/$d exists"
done
unlike "$devs" " (loop-control|loop[0-9]+|sd[a-z]|vd[a-z]|nvme[0-9]|mem|kmsg) " "no host devices in /dev"
is "$(vcs_run -- stat -c '%F %t:%T' /dev/null 2>&1)" "character special file 1:3" "/dev/null is the null device"
is "$(vcs_run -- stat -c '%F %t:%T' /dev/fuse 2>&1)" "character special file a:e5" "/dev/fuse is the FUSE device"
is "$(vcs_run -- stat -f -c %T /dev 2>&1)" "tmpfs" "/dev is a fresh tmpfs"
run vcs_run -- sh -c "$VCS_GUARD"'grep " /sys " /proc/self/mounts'
like "$OUT" " (ro,|ro$|ro )" "/sys is read-only ($OUT)"
run vcs_run --host-dev -- ls /dev
like "$OUT" "(^|$NL)loop-control($|$NL)" "--host-dev: the host's devices"

# ---- --read-only ----
run vcs_run --read-only -- sh -c "$VCS_GUARD"'touch /etc/km-written 2>/dev/null && echo written; echo rc=$?'
unlike "$OUT" "written" "--read-only: the image cannot be written"
check_fails "... nothing was written into the image" test -e "$ROOTFS/etc/km-written"

# ---- -t: exec's (a terminal of the container's own devpts); run has none ----
run vcs_run -t -- true
is "$RC" 125 "run -t: refused (a terminal is exec -t's)"

# ---- twice, and ten at once ----
run vcs_run --name twice -- echo first
is "$RC:$OUT" "0:first" "--name twice: first run"
run vcs_run --name twice -- echo second
is "$RC:$OUT" "0:second" "--name twice: the same name again after it ended"
run vcs_run -- echo again
is "$RC:$OUT" "0:again" "the same command twice"
pids=()
for i in $(seq 1 10); do
        km run --rootfs "$ROOTFS" -- sh -c "sleep 0.2; echo run-$i; exit $i" >"$KM_SCRATCH/par.$i" 2>&1 &
        pids+=($!)
done
bad=""
for i in $(seq 1 10); do
        wait "${pids[$((i - 1))]}"
        rc=$?
        out=$(<"$KM_SCRATCH/par.$i")
        [[ $rc == "$i" && $out == "run-$i" ]] || bad+=" run $i: exit $rc, '$out';"
done
is "$bad" "" "10 runs at once: each its own output and status"
run km ps
unlike "$OUT" "running" "ps: no container is left running"

# ---- runc as the runtime ----
if command -v runc >/dev/null; then
        run vcs_run --runtime runc -- sh -c 'echo via-runc; exit 4'
        is "$RC:$OUT" "4:via-runc" "--runtime runc: output and status"
else
        not_ok "--runtime runc: runc is not installed"
fi

is "$(vcs_agent_pids)" "${agents:-(none)}" "the agent is still the one that was started on demand"
vcs_cleanup
node_down "vcs run"
done_testing
