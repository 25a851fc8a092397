#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 28: a container never holds a terminal of the host.  kubemount runs
# with a pseudo-terminal as its stdin, stdout and stderr (its controlling
# terminal, as from an interactive shell); in the container the test image's
# tiocsti program tries ioctl(TIOCSTI) and ioctl(TIOCLINUX) on fds 0-2.
# Nothing may arrive on the terminal's input side (what the shell would read
# and run after kubemount exits), with run, run -i, exec, exec -i and
# exec -t; the output, the exit status and EOF on stdin still pass through
# the pipes kubemount relays, and a raw agent client that hands over a
# terminal is refused.  TIOCSTI and TIOCLINUX fail with EPERM even on the
# container's own terminal (exec -t): the seccomp profile filters them, with
# the upper 32 bits of the request number ignored as the kernel does.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"
# The interpreter itself: a wrapper (pyenv) may take a second to start it.
PYTHON=$(python3 -c 'import sys; print(sys.executable)') ||
        { echo "Bail out! python3 is needed to drive a pseudo-terminal"; exit 1; }

node_up --no-kubelet
vcs_setup
vcs_agent_start

# on_pty [--input TEXT] CMD...: CMD with a new pseudo-terminal as its
# controlling terminal and stdin, stdout and stderr (canonical, as a shell
# leaves it, without echo).  TEXT is typed once CMD printed "READY" (a ^D at
# the start of a line is EOF).
# Prints the exit status, then "pending=" and what is waiting on the
# terminal's input side after CMD exited (JSON strings), then the output.
on_pty() {
        "$PYTHON" - "$@" <<'EOF'
import fcntl, json, os, pty, select, signal, sys, termios, time
args = sys.argv[1:]
text = None
if args[0] == "--input":
    text, args = args[1].encode(), args[2:]
m, s = pty.openpty()
attrs = termios.tcgetattr(s)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(s, termios.TCSANOW, attrs)
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(s, fd)
    os.closerange(3, 1024)
    os.execvp(args[0], args)
out, status, deadline = b"", None, time.monotonic() + 30
while status is None or select.select([m], [], [], 0.2)[0]:
    if select.select([m], [], [], 0.05)[0]:
        try:
            out += os.read(m, 65536)
        except OSError:
            pass
    if text is not None and b"READY" in out:
        os.write(m, text)
        text = None
    if status is None:
        wpid, st = os.waitpid(pid, os.WNOHANG)
        if wpid:
            status = os.waitstatus_to_exitcode(st)
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = "hung"
fcntl.fcntl(s, fcntl.F_SETFL, fcntl.fcntl(s, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    pending = os.read(s, 65536)
except BlockingIOError:
    pending = b""
print(status)
print("pending=" + json.dumps(pending.decode(errors="replace")))
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
EOF
}

pty_get() { sed -n "s/^$1=//p" <<<"$OUT" | head -n1; }

run vcs_run --detach --name t -- sleep 1000
is "$RC:$OUT" "0:t" "a detached container 't' for exec"

# ---- the caller's terminal: never the container's ----
for via in run run-i exec exec-i; do
        case $via in
        run) run on_pty "$KUBEMOUNT" run --rootfs "$ROOTFS" -- /usr/bin/tiocsti ;;
        run-i) run on_pty "$KUBEMOUNT" run -i --rootfs "$ROOTFS" -- /usr/bin/tiocsti ;;
        exec) run on_pty "$KUBEMOUNT" exec t -- /usr/bin/tiocsti ;;
        exec-i) run on_pty "$KUBEMOUNT" exec -i t -- /usr/bin/tiocsti ;;
        esac
        is "$(head -n1 <<<"$OUT")" 0 "[28 $via] kubemount on a terminal exits 0"
        is "$(pty_get pending)" '""' "[28 $via] nothing arrived on the terminal's input side"
        for n in 0 1 2; do
                [[ $via != *-i && $n == 0 ]] && continue
                is "$(pty_get "tty\.$n")" no "[28 $via] fd $n in the container is not a terminal"
                like "$(pty_get "sti\.$n")" "^(ENOTTY|EPERM)$" "[28 $via] TIOCSTI on fd $n fails ($(pty_get "sti\.$n"))"
        done
        [[ $OUT == *linux.2=* ]] || diag "$OUT" "$ERR"
done

# ---- the relay keeps what the terminal gave: output order, exit status, EOF ----
run on_pty "$KUBEMOUNT" run --rootfs "$ROOTFS" -- sh -c 'for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 7'
is "$(head -n1 <<<"$OUT")" 7 "[28 relay] run: the exit status passes through (7)"
is "$(grep -E '^(out|err)[0-9]$' <<<"$OUT" | tr '\n' ' ')" "out1 err1 out2 err2 out3 err3 " \
        "[28 relay] run: stdout and stderr on one terminal keep their order"
run on_pty --input $'line one\nline two\n\x04' "$KUBEMOUNT" run -i --rootfs "$ROOTFS" -- \
        sh -c 'echo READY; cat; echo EOF-SEEN'
is "$(head -n1 <<<"$OUT")" 0 "[28 relay] run -i: exit 0"
like "$OUT" $'line one\nline two\n' "[28 relay] run -i: typed input reaches the command"
like "$OUT" "EOF-SEEN" "[28 relay] run -i: ^D ends its stdin (cat returns)"
run on_pty --input $'typed\n\x04' "$KUBEMOUNT" exec -i t -- sh -c 'echo READY; cat; echo EOF-SEEN; exit 3'
is "$(head -n1 <<<"$OUT")" 3 "[28 relay] exec -i: the exit status passes through (3)"
like "$OUT" $'typed\n.*EOF-SEEN' "[28 relay] exec -i: input and EOF reach the command"
run on_pty "$KUBEMOUNT" exec t -- sh -c 'seq 1 20000; echo LAST'
like "$OUT" $'19999\n20000\nLAST' "[28 relay] exec: all of a long output arrives before kubemount exits"

# ---- exec -t: the container's own terminal; TIOCSTI filtered on it ----
run on_pty "$KUBEMOUNT" exec -t t -- /usr/bin/tiocsti
is "$(head -n1 <<<"$OUT")" 0 "[28 exec -t] exits 0"
is "$(pty_get pending)" '""' "[28 exec -t] nothing arrived on the caller's terminal's input side"
is "$(pty_get "tty\.0")" yes "[28 exec -t] fd 0 is a terminal (the container's own)"
for n in 0 1 2; do
        is "$(pty_get "sti\.$n")" EPERM "[28 exec -t] TIOCSTI on the container's own terminal (fd $n): EPERM (seccomp)"
        is "$(pty_get "sti_high\.$n")" EPERM "[28 exec -t] ... also with bit 32 of the request set: EPERM"
        is "$(pty_get "linux\.$n")" EPERM "[28 exec -t] TIOCLINUX (fd $n): EPERM"
done

# ---- the agent: a terminal handed over by a raw client is refused ----
# The agent's wire format (src/lib/vcs/agent-protocol.h): one JSON object per
# SOCK_SEQPACKET message, the stdio fds by SCM_RIGHTS.
raw_client() { # run|exec: a pseudo-terminal as stdout; prints the agent's first answer
        "$PYTHON" - "$KUBEMOUNT_STATE_DIR/agent.sock" "$KM_SCRATCH/spec.json" "$1" <<'EOF'
import array, json, os, pty, socket, sys
sock_path, spec_path, op = sys.argv[1:4]
m, s = pty.openpty()
null = os.open("/dev/null", os.O_RDWR)
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.connect(sock_path)
if op == "run":
    spec = json.load(open(spec_path))
    req = {"op": "run", "config": spec, "detach": False, "timeout_ms": 10000}
else:
    req = {"op": "exec", "name": "t", "args": ["/usr/bin/tiocsti"], "tty": False}
fds = [null, s, null]
c.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
c.settimeout(10)
print(c.recv(262144).decode())
EOF
}
"$KUBEMOUNT" run --print-spec --rootfs "$ROOTFS" -- /usr/bin/tiocsti \
        >"$KM_SCRATCH/spec.json" 2>"$KM_SCRATCH/spec.err" ||
        diag "run --print-spec: $(cat "$KM_SCRATCH/spec.err")"
run raw_client run
like "$OUT" '"error".*terminal' "[28 agent] run with a terminal as stdout from a raw client: refused"
[[ -n $OUT ]] || diag "$ERR"
run raw_client exec
like "$OUT" '"error".*terminal' "[28 agent] exec with a terminal as stdout from a raw client: refused"
[[ -n $OUT ]] || diag "$ERR"

vcs_cleanup
node_down "vcs tty"
done_testing
