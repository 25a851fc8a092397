#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 30: the agent never blocks on a path a container or a volume
# controls, and opens no host path on a container's behalf.
#   - A VCS container serves a FUSE mount below the kubelet dir (bindfs) and
#     its daemon is stopped (SIGSTOP, as a hung server leaves it):
#     `kubemount gc` reports the mount as hung within seconds, and while it
#     looks, ps, run, exec and stop of other containers each answer within a
#     second; dead mounts (one below another) are still unmounted meanwhile.
#   - A container replaces its /dev/pts with a symlink to a host directory
#     holding a FIFO named ptmx: exec -t fails with a clear error and the
#     FIFO is never opened (a reader blocked in open(2) on it stays blocked);
#     the same with a directory of its own holding a FIFO (not a devpts).
#   - A container mounts a FUSE file system on its /dev/pts and stops the
#     daemon: exec -t fails after its timeout, and ps answers meanwhile.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"
need_tools bindfs
[[ -c /dev/fuse ]] || { echo "Bail out! no /dev/fuse"; exit 1; }
# The interpreter itself: a wrapper (pyenv) may take a second to start it.
PYTHON=$(python3 -c 'import sys; print(sys.executable)') ||
        { echo "Bail out! python3 is needed to drive a pseudo-terminal"; exit 1; }

node_up --no-kubelet
vcs_setup
vcs_agent_start

# answers_fast DESC CMD...: ok if CMD exits 0 within a second (killed after 5).
answers_fast() {
        local desc=$1 t0 dt rc
        shift
        t0=$(now_ms)
        timeout -k 1 5 "$@" >"$KM_SCRATCH/fast.out" 2>&1
        rc=$?
        dt=$(($(now_ms) - t0))
        if ((rc == 0 && dt < 1000)); then
                ok "$desc ($dt ms)"
        else
                not_ok "$desc ($dt ms)"
                diag "exit $rc: $*" "$(cat "$KM_SCRATCH/fast.out")"
        fi
}
# on_pty CMD...: CMD with a pseudo-terminal as stdin, stdout and stderr (exec -t needs one),
# killed after 30 s.
on_pty() {
        timeout -k 2 30 "$PYTHON" -c 'import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))' "$@" </dev/null
}

# ---- gc and a stopped FUSE daemon ----
P=$KUBELET_DIR/pods/uid-1/volumes
C=/var/lib/kubelet/pods/uid-1/volumes
DATA=$NODE/vcs-data
mkdir -p "$P/hung" "$DATA"
echo "served by a VCS" >"$DATA/file"
run vcs_run --detach --name fuse --mount "$DATA:/srv" --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- \
        bindfs -f /srv "$C/hung"
is "$RC" 0 "run --detach fuse (bindfs on $P/hung)"
wait_for 10 is_mounted host "$P/hung"
is "$(cat "$P/hung/file" 2>&1)" "served by a VCS" "the VCS serves reads in the host"
daemon=$(pgrep -P "$(vcs_pid fuse)" bindfs)
run vcs_run --detach --name a -- sleep 1000
run vcs_run --detach --name b -- sleep 1000
is "$(vcs_status a) $(vcs_status b)" "running running" "two other containers, a and b, run"

check "SIGSTOP to the FUSE daemon (pid ${daemon:-none})" kill -STOP "$daemon"
t0=$(now_ms)
km --kubelet-dir="$KUBELET_DIR" gc >"$KM_SCRATCH/gc.out" 2>"$KM_SCRATCH/gc.err" &
gc=$!
sleep 0.3
answers_fast "[30 gc] meanwhile: ps answers within a second" "$KUBEMOUNT" ps
answers_fast "[30 gc] meanwhile: run -- true answers within a second" "$KUBEMOUNT" run --rootfs "$ROOTFS" -- true
answers_fast "[30 gc] meanwhile: exec a -- true answers within a second" "$KUBEMOUNT" exec a -- true
answers_fast "[30 gc] meanwhile: stop b answers within a second" "$KUBEMOUNT" stop --timeout 5 b
holds "[30 gc] ... while gc still looks at the hung mount" kill -0 "$gc"
wait "$gc"
rc=$? dt=$(($(now_ms) - t0))
is "$rc" 0 "[30 gc] gc exits 0"
holds "[30 gc] ... within 10 s ($dt ms)" test "$dt" -lt 10000
like "$(cat "$KM_SCRATCH/gc.out")" "hung-fuse $P/hung: no answer" "[30 gc] gc reports the mount as hung"
check "[30 gc] ... and leaves it mounted" is_mounted host "$P/hung"
# Dead mounts meanwhile (one below another): unmounted, the outer after the inner.
mkdir -p "$P/dead-outer" "$DATA/inner"
spawn bindfs -f "$DATA" "$P/dead-outer"
outer=$SPAWNED
wait_for 10 is_mounted host "$P/dead-outer"
spawn bindfs -f "$DATA" "$P/dead-outer/inner"
inner=$SPAWNED
wait_for 10 is_mounted host "$P/dead-outer/inner"
kill -9 "$inner" "$outer"
wait "$inner" "$outer" 2>/dev/null
run km --kubelet-dir="$KUBELET_DIR" gc
is "$RC" 0 "[30 gc] gc with dead mounts and the hung one: exit 0"
like "$OUT" "unmounted-dead-fuse $P/dead-outer/inner" "[30 gc] ... unmounts the inner dead mount"
like "$OUT" "unmounted-dead-fuse $P/dead-outer:" "[30 gc] ... and the outer one"
like "$OUT" "hung-fuse $P/hung" "[30 gc] ... and reports the hung one again"
check_fails "[30 gc] ... both dead mounts are gone" is_mounted host "$P/dead-outer"
check "SIGCONT to the FUSE daemon" kill -CONT "$daemon"
is "$(timeout 5 cat "$P/hung/file" 2>&1)" "served by a VCS" "[30 gc] the resumed daemon serves reads again"
run km --kubelet-dir="$KUBELET_DIR" gc
is "$RC:$OUT" "0:" "[30 gc] a second gc has nothing to do"
check "stop fuse" km stop --timeout 5 fuse
umount "$P/hung" 2>/dev/null

# ---- exec -t and a container's /dev/pts ----
EVIL=$NODE/evil
mkdir -p "$EVIL"
mkfifo "$EVIL/ptmx"
# A reader blocked in open(2) until someone opens the FIFO for writing.
spawn bash -c 'exec 3<"$1"; echo opened >"$2"' fifo-reader "$EVIL/ptmx" "$KM_SCRATCH/fifo-opened"
fifo_reader=$SPAWNED

run vcs_run --detach --name evil -- sleep 1000
check "the container 'evil' replaces its /dev/pts with a symlink to $EVIL" \
        km exec evil -- sh -c "$VCS_GUARD"'umount /dev/pts && rmdir /dev/pts && ln -s "$1" /dev/pts' sh "$EVIL"
run on_pty "$KUBEMOUNT" exec -t evil -- true
is "$RC" 125 "[30 pts] exec -t fails (125)"
like "$OUT" "exec.*evil.*/dev/pts.*symlink" "[30 pts] ... saying its /dev/pts is a symlink"
sleep 0.3
holds "[30 pts] the host's FIFO was never opened" test ! -e "$KM_SCRATCH/fifo-opened"
check "[30 pts] ... its reader is still blocked" kill -0 "$fifo_reader"
check "the container 'evil' makes /dev/pts a directory of its own with a FIFO ptmx" \
        km exec evil -- sh -c "$VCS_GUARD"'rm /dev/pts && mkdir /dev/pts && mkfifo /dev/pts/ptmx'
run on_pty "$KUBEMOUNT" exec -t evil -- true
is "$RC" 125 "[30 pts] exec -t fails (125)"
like "$OUT" "exec.*evil.*/dev/pts is not a devpts" "[30 pts] ... saying its /dev/pts is not a devpts"
run on_pty "$KUBEMOUNT" exec -t a -- sh -c 'tty; echo done'
like "$OUT" $'/dev/pts/[0-9]+.*done' "[30 pts] control: exec -t in a container with its own devpts works"

run vcs_run --detach --name stuck -- sh -c "$VCS_GUARD"'umount /dev/pts && mkdir /tmp/p && exec bindfs -f /tmp/p /dev/pts'
wait_for 10 eval 'pgrep -P "$(vcs_pid stuck)" bindfs >/dev/null'
stuck=$(pgrep -P "$(vcs_pid stuck)" bindfs)
wait_for 10 eval 'grep -q " /dev/pts fuse" /proc/'"$stuck"'/mounts'
check "SIGSTOP to the FUSE daemon on stuck's /dev/pts (pid ${stuck:-none})" kill -STOP "$stuck"
on_pty "$KUBEMOUNT" exec -t stuck -- true >"$KM_SCRATCH/stuck.out" 2>&1 &
xt=$!
wait_for 10 pgrep -f "exec -t stuck" >/dev/null
sleep 0.3
answers_fast "[30 pts] meanwhile: ps answers within a second" "$KUBEMOUNT" ps
answers_fast "[30 pts] meanwhile: exec a -- true answers within a second" "$KUBEMOUNT" exec a -- true
wait "$xt"
is "$?" 125 "[30 pts] exec -t in stuck fails (125)"
like "$(cat "$KM_SCRATCH/stuck.out")" "exec -t in stuck: no terminal .* in [0-9]+ ms" "[30 pts] ... after its timeout"
check "SIGCONT to it" kill -CONT "$stuck"

vcs_cleanup
node_down "vcs agent block"
done_testing
