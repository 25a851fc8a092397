#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Mounts made inside a VCS container reach the host and pods: the kubelet
# dir bound --mount $KUBELET_DIR:/var/lib/kubelet:rshared (it is on a shared
# mount, as node_up/kubemount setup make it).  A tmpfs from a short run; a
# bindfs and a squashfuse FUSE mount served by detached containers, read in
# the host and in an rslave pod; unmounting in the host removes them
# everywhere; stopping the squashfuse container unmounts its volume.  rslave
# and private binds: host mounts reach the container (rslave) or not
# (private), its mounts never reach the host.  A source on a private mount:
# a warning that nothing will propagate, and nothing does.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"

need_tools mksquashfs
node_up --no-kubelet
pod_up a
vcs_setup
vcs_agent_start

P=$KUBELET_DIR/plugins/kubemount-test # the host's view
C=/var/lib/kubelet/plugins/kubemount-test # the container's
KB=(--mount "$KUBELET_DIR:/var/lib/kubelet:rshared")
DATA=$NODE/vcs-data
mkdir -p "$P" "$DATA"
echo "served by a VCS" >"$DATA/data"

fstype() { findmnt -no FSTYPE --mountpoint "$1"; }

# ---- a tmpfs from a short run ----
run vcs_run "${KB[@]}" -- sh -c "$VCS_GUARD"'mkdir -p "$1" && mount -t tmpfs -o size=1m vcs-tmpfs "$1" && echo from-vcs >"$1/f"' \
        sh "$C/t1"
is "$RC" 0 "run: the container mounts a tmpfs under /var/lib/kubelet"
unlike "$ERR" "[Ww]arning" "... no warning: the source is on a shared mount"
check "... it is in the host namespace" is_mounted host "$P/t1"
is "$(findmnt -no SOURCE,FSTYPE --mountpoint "$P/t1")" "vcs-tmpfs tmpfs" "... source and type as made"
check "... and in the pod (rslave)" is_mounted pod:a "$P/t1"
is "$(cat "$P/t1/f" 2>&1)" "from-vcs" "host: reads the file the container wrote"
is "$(in_pod a cat "$P/t1/f" 2>&1)" "from-vcs" "pod: reads it too"
check "host: umount" umount "$P/t1"
check_fails "... gone from the host" is_mounted host "$P/t1"
check_fails "... gone from the pod" is_mounted pod:a "$P/t1"

# ---- bindfs, served by a detached container ----
mkdir -p "$P/b"
run vcs_run --detach --name vcs-bindfs --mount "$DATA:/srv" "${KB[@]}" -- bindfs -f /srv "$C/b"
is "$RC:$OUT" "0:vcs-bindfs" "run --detach bindfs: prints the name"
if wait_for 10 is_mounted host "$P/b"; then ok "the FUSE mount reaches the host"; else
        not_ok "the FUSE mount reaches the host"
        diag "$(km logs vcs-bindfs 2>&1)"
fi
like "$(fstype "$P/b")" "^fuse" "... a FUSE file system ($(fstype "$P/b"))"
check "... and the pod" is_mounted pod:a "$P/b"
is "$(cat "$P/b/data" 2>&1)" "served by a VCS" "host: reads through bindfs"
is "$(in_pod a cat "$P/b/data" 2>&1)" "served by a VCS" "pod: reads through bindfs"
echo "written in the pod" | in_pod a sh -c "cat >'$P/b/new'"
is "$(cat "$DATA/new" 2>&1)" "written in the pod" "pod: writes through bindfs land in the source"
is "$(vcs_status vcs-bindfs)" "running" "ps: vcs-bindfs is running"
check "host: umount of the FUSE mount" umount "$P/b"
check_fails "... gone from the host" is_mounted host "$P/b"
check_fails "... gone from the pod" is_mounted pod:a "$P/b"
if vcs_wait_status vcs-bindfs '^exited'; then
        ok "the daemon ended with its mount: $(vcs_status vcs-bindfs)"
else
        not_ok "the daemon ended with its mount: $(vcs_status vcs-bindfs)"
fi
check "rm vcs-bindfs" km rm vcs-bindfs

# ---- squashfuse, --mount SRC:DST:ro, stopped ----
mkdir -p "$NODE/images" "$P/s"
mksquashfs "$DATA" "$NODE/images/vol.sqfs" -quiet -noappend >/dev/null ||
        { echo "Bail out! mksquashfs failed"; exit 1; }
run vcs_run --detach --name vcs-squash --mount "$NODE/images:/data:ro" "${KB[@]}" -- \
        squashfuse -f /data/vol.sqfs "$C/s"
is "$RC:$OUT" "0:vcs-squash" "run --detach squashfuse"
if wait_for 10 is_mounted host "$P/s"; then ok "the squashfuse mount reaches the host"; else
        not_ok "the squashfuse mount reaches the host"
        diag "$(km logs vcs-squash 2>&1)"
fi
is "$(cat "$P/s/data" 2>&1)" "served by a VCS" "host: reads the image"
is "$(in_pod a cat "$P/s/data" 2>&1)" "served by a VCS" "pod: reads the image"
run km exec vcs-squash -- sh -c 'touch /data/x 2>/dev/null && echo writable; echo done'
is "$OUT" "done" "--mount SRC:DST:ro is read-only in the container"
check_fails "... nothing written to the source" test -e "$NODE/images/x"
check "stop vcs-squash (SIGTERM: squashfuse unmounts and exits)" km stop --timeout 5 vcs-squash
check_fails "... the mount is gone from the host" is_mounted host "$P/s"
check_fails "... and from the pod" is_mounted pod:a "$P/s"
like "$(vcs_status vcs-squash)" "^exited" "... squashfuse exited: $(vcs_status vcs-squash)"
check "rm vcs-squash" km rm vcs-squash

# ---- rslave and private binds ----
mkdir -p "$P/from-host"
run vcs_run --detach --name vcs-slave --mount "$KUBELET_DIR:/var/lib/kubelet:rslave" -- sleep 1000
is "$RC" 0 "run --detach with --mount ...:rslave"
run vcs_run --detach --name vcs-private --mount "$KUBELET_DIR:/var/lib/kubelet:private" -- sleep 1000
is "$RC" 0 "run --detach with --mount ...:private"
mount -t tmpfs -o size=1m host-made "$P/from-host"
echo host >"$P/from-host/f"
is "$(km exec vcs-slave -- cat "$C/from-host/f" 2>&1)" "host" "rslave: a mount the host makes later reaches the container"
run km exec vcs-private -- sh -c 'test -d "$1" && test ! -e "$1/f" && echo "not there"' sh "$C/from-host"
is "$RC:$OUT" "0:not there" "private: it does not (the directory is there, empty)"
for c in vcs-slave vcs-private; do
        mkdir -p "$P/$c"
        run km exec "$c" -- sh -c "$VCS_GUARD"'mount -t tmpfs -o size=1m own "$1"' sh "$C/$c"
        is "$RC" 0 "${c#vcs-}: the container mounts a tmpfs"
        check_fails "... it does not reach the host" is_mounted host "$P/$c"
        check_fails "... nor the pod" is_mounted pod:a "$P/$c"
done
umount "$P/from-host"
check "rm -f vcs-slave" km rm -f vcs-slave
check "rm -f vcs-private" km rm -f vcs-private

# ---- a source on a private mount ----
# $NODE is a private tmpfs (only the kubelet dir was made rshared).
PRIV=$NODE/private-src
mkdir -p "$PRIV/t"
run vcs_run --mount "$PRIV:/mnt:rshared" -- sh -c "$VCS_GUARD"'mount -t tmpfs -o size=1m vcs-private /mnt/t && echo mounted'
is "$RC:$OUT" "0:mounted" "rshared bind of a source on a private mount: the run works"
like "$ERR" "[Ww]arning" "... with a warning"
like "$ERR" "[Pp]ropagat|private|not reach" "... that nothing will propagate"
like "$ERR" "$PRIV" "... naming the source"
unlike "$ERR" "^kubemount run: error" "... a warning, not an error"
check_fails "... and the mount does not reach the host" is_mounted host "$PRIV/t"

vcs_cleanup
node_down "vcs propagation"
done_testing
