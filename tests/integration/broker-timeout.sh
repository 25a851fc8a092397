#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A brokered call that cannot be served in time (KUBEMOUNT_BROKER_TIMEOUT=2):
# a default container of fuse-tools serves a bindfs of its own at its
# --mount-target; broker-stall maps a file of that mount holding a target
# path (never read), the test stops the bindfs daemon, and broker-stall's
# mount(2) names the target by a pointer into the mapping.  Reading it
# faults the page in through the stopped daemon, so the broker's kept
# worker waits: at the timeout the agent kills it, the caller gets
# ETIMEDOUT, the container's log says so, and nothing was mounted.  Once the
# daemon goes on, the container's next calls (a tmpfs below its bindfs and
# its umount) are served.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images fuse-tools
node_sandbox "$@"
[[ -n ${BROKER_STALL:-} && -x $BROKER_STALL ]] ||
        bail_out "no BROKER_STALL program: set BROKER_STALL (meson test sets it; a sanitizer build leaves it out)"

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
export KUBEMOUNT_BROKER_TIMEOUT=2 # read by the agent when it starts
vcs_agent_start
import_images fuse-tools

VOL=$KUBELET_DIR/pods/uid-t/volumes/kubernetes.io~csi/stall # its --mount-target, as the host names it
CVOL=/var/lib/kubelet/pods/uid-t/volumes/kubernetes.io~csi/stall
SRC=$KUBELET_DIR/stall-src
mkdir -p "$VOL" "$SRC/inner" "$KUBELET_DIR/bin" "$KUBELET_DIR/ctl"
printf '%s\0' "$CVOL/inner" >"$SRC/target"
install -m 0755 "$BROKER_STALL" "$KUBELET_DIR/bin/broker-stall" || bail_out "cannot install broker-stall"
KB=(--mount "$KUBELET_DIR:/var/lib/kubelet:rshared")
NL=$'\n'

# daemon_of NAME: the pid of the first child of NAME's PID 1 (its command: the bindfs daemon).
daemon_of() {
        local p c
        p=$(km ps -a 2>/dev/null | awk -v n="$1" '$1 == n { print $2 }') && [[ -n $p ]] || return 1
        c=$(cat /proc/"$p"/task/*/children 2>/dev/null) && c=${c%% *} && [[ -n $c ]] || return 1
        echo "$c"
}

# Every lookup and attribute goes to the daemon (no cache), so a stopped one holds them all.
check "run -d: a bindfs of the container's own at its --mount-target" \
        km run -d --name stall --image fuse-tools --allow-mount fuse --allow-mount fuse.bindfs --allow-mount tmpfs \
        --mount-target "$VOL" "${KB[@]}" -- bindfs -f -o entry_timeout=0,attr_timeout=0 /var/lib/kubelet/stall-src "$CVOL"
wait_for 20 is_mounted host "$VOL" || diag "$(km logs stall 2>&1)"
check "... mounted in the host" is_mounted host "$VOL"
DAEMON=$(daemon_of stall)
like "$DAEMON" '^[0-9]+$' "... its daemon is pid $DAEMON"

OUT_FILE=$NODE/stall.out
km exec stall -- /var/lib/kubelet/bin/broker-stall "$CVOL/target" /var/lib/kubelet/ctl/go >"$OUT_FILE" 2>&1 &
STALL=$!
node_track "$STALL"
wait_for 20 grep -qx ready "$OUT_FILE"
is "$(head -n 1 "$OUT_FILE")" ready "broker-stall mapped the target file through the bindfs mount"

kill -STOP "$DAEMON"
touch "$KUBELET_DIR/ctl/go"
if wait_for 30 grep -q '^mount: ' "$OUT_FILE"; then
        is "$(grep '^mount: ' "$OUT_FILE")" "mount: ETIMEDOUT" \
                "a mount whose target only the stopped daemon can bring in: ETIMEDOUT at the broker's timeout"
else
        not_ok "broker-stall's mount returned within 30 s (the timeout is 2 s)"
        diag "$(cat "$OUT_FILE")"
fi
like "$(km logs stall 2>&1)" "mount broker: a call was not served in time; the caller got ETIMEDOUT" \
        "logs: the call was not served in time"
check_fails "... nothing is mounted at its target" is_mounted host "$VOL/inner"

# broker-stall's exit unmaps a file of the stopped daemon's: it ends once the daemon goes on.
kill -CONT "$DAEMON"
wait "$STALL"
check "with the daemon going on, the container's next call is served: a tmpfs below its bindfs" \
        km exec stall -- mount -t tmpfs -o size=1m km-next "$CVOL/inner"
check "... in the host" is_mounted host "$VOL/inner"
like "$(km logs stall 2>&1)" "mount broker: mount -t tmpfs km-next on $VOL/inner [^$NL]*: allowed" \
        "... logs: allowed"
check "... and its umount" km exec stall -- umount "$CVOL/inner"
check_fails "... gone from the host" is_mounted host "$VOL/inner"
check "rm -f" km rm -f stall

vcs_cleanup
node_down "broker-timeout"
done_testing
