#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 13: kubemount speaks systemd's datagram protocols itself.  With a
# journal listening at /run/systemd/journal/socket (here a real AF_UNIX
# datagram socket of tests/lib/dgram-recv.py, on a tmpfs over the sandbox's
# /run), a mount, an unmount, a refused mount and a container's start and exit
# arrive as native records with their MESSAGE_IDs and fields; a password given
# in a source or an option is in no record and not on stderr; warnings still
# reach a terminal's stderr; without the socket they go to stderr alone.  The
# agent sends READY=1 to $NOTIFY_SOCKET (a path, or an abstract "@NAME") once
# it serves and STOPPING=1 when SIGTERM ends it (its socket goes); what it
# starts never sees NOTIFY_SOCKET.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

need_tools python3
RECV=$(dirname "${BASH_SOURCE[0]}")/../lib/dgram-recv.py
ID_MOUNT=e5b76ef02c034305ba5591198be5de85
ID_UMOUNT=a0a3342d1d454d738271f0fe2819e5fd
ID_REFUSED=b4f359f9366048d596303eaee163c620
ID_START=18490d50b30340df86fa8e2d9c621172
ID_EXIT=3abb435c77ea49c8a6b3d08e0973fd37

# The sandbox's own /run: the machine's journal (if any) is never reached.
mount -t tmpfs -o mode=755 km-run /run && mkdir -p /run/systemd/journal || bail_out "cannot mount a tmpfs on the sandbox's /run"
node_up --no-kubelet
vcs_setup
JOURNAL=$NODE/journal.jsonl

# receiver SOCKET OUT: dgram-recv.py listening, tracked.
receiver() {
        rm -f "$2.ready"
        spawn python3 "$RECV" "$1" "$2"
        wait_for 10 test -e "$2.ready" || bail_out "dgram-recv.py did not bind $1"
}
# records_with ID [FIELD=VALUE...]: how many records of $JOURNAL have MESSAGE_ID ID and those fields.
records_with() {
        python3 -c '
import json, sys
want = dict(a.split("=", 1) for a in sys.argv[3:])
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("MESSAGE_ID") == [sys.argv[2]] and all(r.get(k, [None])[0] == v for k, v in want.items()):
        n += 1
print(n)' "$JOURNAL" "$@"
}
has_record() { # DESC ID [FIELD=VALUE...]
        local desc=$1
        shift
        if wait_for 5 test "$(records_with "$@")" -gt 0; then ok "$desc"; else
                not_ok "$desc"
                diag "$(cat "$JOURNAL")"
        fi
}

receiver /run/systemd/journal/socket "$JOURNAL"

# ---- a mount, an unmount, a refusal -------------------------------------
T=$KUBELET_DIR/pods/p1/volumes/v
mkdir -p "$T"
check "kubemount mount -t tmpfs with a journal listening" "$KUBEMOUNT" mount -t tmpfs -o size=1m km-tmp "$T"
is "$ERR" "" "nothing on stderr for a mount that worked"
has_record "the mount's record: MESSAGE_ID, target, type, source, priority, identifier" $ID_MOUNT \
        "KUBEMOUNT_TARGET=$T" KUBEMOUNT_FSTYPE=tmpfs KUBEMOUNT_SOURCE=km-tmp PRIORITY=5 SYSLOG_IDENTIFIER=kubemount
check "kubemount umount" "$KUBEMOUNT" umount "$T"
has_record "the unmount's record" $ID_UMOUNT "KUBEMOUNT_TARGET=$T"

# From a kubelet container with no journal socket of its own (as an RKE-style docker container
# has none): its mount and unmount are recorded by the host's journal all the same.
kubelet_up || bail_out "the kubelet container did not start"
T2=$KUBELET_DIR/pods/p1/volumes/from-kubelet
mkdir -p "$T2"
check "no journal socket in the kubelet container" in_kubelet test ! -e /run/systemd/journal/socket
check "kubemount mount from the kubelet container" in_kubelet "$KUBEMOUNT" mount -t tmpfs -o size=1m km-kub "$T2"
has_record "its mount reaches the host's journal" $ID_MOUNT "KUBEMOUNT_TARGET=$T2" KUBEMOUNT_SOURCE=km-kub
check "kubemount umount from the kubelet container" in_kubelet "$KUBEMOUNT" umount "$T2"
has_record "its unmount reaches the host's journal" $ID_UMOUNT "KUBEMOUNT_TARGET=$T2"
mkdir -p "$NODE/mc" && ln -s "$KUBEMOUNT" "$NODE/mc/mount" && ln -s "$KUBEMOUNT" "$NODE/mc/umount"
check "the multi-call mount from the kubelet container" in_kubelet "/rootfs$NODE/mc/mount" -t tmpfs km-mc "$T2"
has_record "the multi-call mount's record" $ID_MOUNT "KUBEMOUNT_TARGET=$T2" KUBEMOUNT_SOURCE=km-mc
check "the multi-call umount from the kubelet container" in_kubelet "/rootfs$NODE/mc/umount" "$T2"
has_record "the multi-call umount's record" $ID_UMOUNT "KUBEMOUNT_TARGET=$T2" PRIORITY=5

mkdir -p "$NODE/outside"
ln -s "$NODE/outside" "$KUBELET_DIR/pods/p1/volumes/link"
check_fails "a mount through a symlink below the kubelet dir is refused" "$KUBEMOUNT" mount -t tmpfs \
        -o size=1m,password=hunter2 '//user:hunter2@127.0.0.1/x' "$KUBELET_DIR/pods/p1/volumes/link/sub"
like "$ERR" "symlink" "the refusal is on stderr too (a terminal sees it)"
has_record "the refusal's record" $ID_REFUSED "KUBEMOUNT_TARGET=$KUBELET_DIR/pods/p1/volumes/link/sub" \
        KUBEMOUNT_FSTYPE=tmpfs PRIORITY=4
if grep -q hunter2 "$JOURNAL" || grep -q hunter2 <<<"$ERR"; then
        not_ok "the password is in no record and not on stderr"
        diag "$(grep hunter2 "$JOURNAL")" "$ERR"
else
        ok "the password is in no record and not on stderr"
fi

# ---- a container's start and exit (the agent started on demand) --------
check "kubemount run -- true" vcs_run --name j1 -- /bin/true
has_record "the container's start record" $ID_START KUBEMOUNT_CONTAINER=j1 KUBEMOUNT_PRIVILEGED=0
has_record "the container's exit record with its status" $ID_EXIT KUBEMOUNT_CONTAINER=j1 KUBEMOUNT_EXIT_STATUS=0
run vcs_run --name j2 -- /bin/false
is "$RC" 1 "kubemount run -- false: exit 1"
has_record "a failed command's exit status" $ID_EXIT KUBEMOUNT_CONTAINER=j2 KUBEMOUNT_EXIT_STATUS=1 \
        KUBEMOUNT_STOPPED=0
# Ended on purpose (rm -f, as a routed mount ends its container once mount(8) is done): a stop, not a failure.
check "kubemount run -d -- sleep" vcs_run -d --name j3 -- /bin/sleep 1000
check "kubemount rm -f of it" km rm -f j3
has_record "a container ended by rm -f is recorded as stopped as asked" $ID_EXIT KUBEMOUNT_CONTAINER=j3 \
        KUBEMOUNT_STOPPED=1 KUBEMOUNT_EXIT_STATUS=137 "MESSAGE=container j3: stopped by kubemount as asked (status 137)"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "_BAD" in r or "MESSAGE" not in r:
        sys.exit(1)' "$JOURNAL"
is "$?" 0 "every record parses and has a MESSAGE"

# ---- no journal: stderr alone --------------------------------------------
rm -f /run/systemd/journal/socket
before=$(wc -l <"$JOURNAL")
check_fails "the refused mount without a journal" "$KUBEMOUNT" mount -t tmpfs km-tmp "$KUBELET_DIR/pods/p1/volumes/link/sub"
like "$ERR" "symlink" "without a journal the refusal is on stderr"
check "a mount without a journal" "$KUBEMOUNT" mount -t tmpfs -o size=1m km-tmp "$T"
check "an unmount without a journal" "$KUBEMOUNT" umount "$T"
check "kubemount -v mount of a source with a password" "$KUBEMOUNT" -v mount -t tmpfs -o size=1m '//u:hunter2@h/x' "$T"
like "$ERR" "mounted on $T" "-v shows the mount's event on stderr"
unlike "$ERR" "hunter2" "-v shows the source masked"
check "kubemount umount" "$KUBEMOUNT" umount "$T"
is "$(wc -l <"$JOURNAL")" "$before" "nothing reaches the old receiver"

# ---- sd_notify ---------------------------------------------------------------
"$KUBEMOUNT" stop j1 >/dev/null 2>&1
for p in $(vcs_agent_pids); do kill -TERM "$p"; done
wait_for 10 test ! -S "$KUBEMOUNT_STATE_DIR/agent.sock" || true

notify_case() { # SOCKET DESC
        local sock=$1 out=$NODE/notify-$2.jsonl
        receiver "$sock" "$out"
        NOTIFY_SOCKET=$sock spawn "$KUBEMOUNT" agent
        local agent=$SPAWNED
        if wait_for 10 grep -q '"READY": \["1"\]' "$out"; then ok "$2: READY=1 once the agent serves"; else
                not_ok "$2: READY=1 once the agent serves"
                diag "$(cat "$out")"
        fi
        is "$(test -S "$KUBEMOUNT_STATE_DIR/agent.sock" && echo yes)" yes "$2: the agent's socket is there at READY=1"
        run vcs_run --name "n-$2" -- /bin/sh -c 'env'
        unlike "$OUT" "NOTIFY_SOCKET" "$2: a container's environment has no NOTIFY_SOCKET"
        kill -TERM "$agent"
        if wait_for 10 grep -q '"STOPPING": \["1"\]' "$out"; then ok "$2: STOPPING=1 when SIGTERM ends the agent"; else
                not_ok "$2: STOPPING=1 when SIGTERM ends the agent"
                diag "$(cat "$out")"
        fi
        wait "$agent" 2>/dev/null
        is "$?" 0 "$2: the agent exits 0 on SIGTERM"
        is "$(test -e "$KUBEMOUNT_STATE_DIR/agent.sock" && echo left)" "" "$2: its socket is gone"
}
notify_case "$NODE/notify.sock" path
notify_case "@km-test-notify-$$" abstract

node_down
done_testing
