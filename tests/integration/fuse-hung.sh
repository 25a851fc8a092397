#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 12: a hung FUSE mount (daemon stopped with SIGSTOP, a reader blocked
# in it).  kubemount umount --timeout=1 escalates busy -> force -> lazy,
# printing each step on stderr, and the mount is gone; other kubemount mounts
# and umounts on other targets complete meanwhile; afterwards nothing is left
# running.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
need_tools bindfs
[[ -c /dev/fuse ]] || bail_out "no /dev/fuse (modprobe fuse)"

km() { timeout 20 "$KUBEMOUNT" "$@"; }
# Another request on another target must finish quickly.
other_request() { # LABEL
        local t0=$SECONDS
        run km mount -t tmpfs -o size=1m other "$O"
        local rc1=$RC
        run km umount "$O"
        if ((rc1 == 0 && RC == 0 && SECONDS - t0 <= 5)); then
                ok "$1: kubemount mount + umount of another target complete"
        else
                not_ok "$1: kubemount mount + umount of another target complete"
                diag "mount exit $rc1, umount exit $RC after $((SECONDS - t0)) s: $ERR"
        fi
}

node_up
pod_up a
S=$KUBELET_DIR/plugins/fuse-src
M=$KUBELET_DIR/pods/uid-1/volumes/hung
O=$KUBELET_DIR/pods/uid-2/volumes/other
mkdir -p "$S" "$M" "$O"
echo payload >"$S/file"

spawn bindfs -f "$S" "$M"
daemon=$SPAWNED
wait_for 10 is_mounted host "$M" && ok "bindfs mounts $M" || not_ok "bindfs mounts $M"
is "$(cat "$M/file" 2>&1)" payload "reads work"

kill -STOP "$daemon"
# A name never looked up: the lookup must go to the (stopped) daemon.
spawn cat "$M/never-seen" 2>"$KM_SCRATCH/reader.err"
reader=$SPAWNED
sleep 0.5
if kill -0 "$reader" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$reader/stat") == [SD] ]]; then
        ok "a reader is blocked in the hung mount"
else
        not_ok "a reader is blocked in the hung mount"
fi

other_request "while the mount hangs"
run km list
is "$RC" 0 "kubemount list works while the mount hangs"

km umount --timeout=1 "$M" >"$KM_SCRATCH/umount.out" 2>"$KM_SCRATCH/umount.err" &
umounter=$!
other_request "during the escalation"
wait "$umounter"
rc=$?
err=$(<"$KM_SCRATCH/umount.err")
is "$rc" 0 "kubemount umount --timeout=1 of the hung mount exits 0"
like "$err" "umount $M: (busy|timed out), retrying with force" "stderr reports the first step and the force retry"
like "$err" "umount $M: forced unmount (busy|timed out), detaching lazily" "stderr reports the lazy step"
diag "kubemount said:" "$err"
check_fails "the hung mount is gone from the host" is_mounted host "$M"
check_fails "... from the kubelet" is_mounted kubelet "$M"
check_fails "... and from the pod" is_mounted pod:a "$M"

# The force step aborted the FUSE connection: the reader gets an error and
# the daemon, once resumed, finds its connection gone and exits.
wait_for 5 eval '! kill -0 '"$reader"' 2>/dev/null' && ok "the blocked reader returns" ||
        not_ok "the blocked reader returns"
wait "$reader" 2>/dev/null
kill -CONT "$daemon"
wait_for 5 eval '! kill -0 '"$daemon"' 2>/dev/null' && ok "the resumed daemon exits by itself" ||
        not_ok "the resumed daemon exits by itself"
wait "$daemon" 2>/dev/null

spawn bindfs -f "$S" "$M"
daemon=$SPAWNED
wait_for 10 is_mounted host "$M" && ok "mounting again works" || not_ok "mounting again works"
is "$(cat "$M/file" 2>&1)" payload "reads work again"
check "kubemount umount of the new mount" km umount "$M"
wait "$daemon" 2>/dev/null

node_down "hung FUSE"
done_testing
