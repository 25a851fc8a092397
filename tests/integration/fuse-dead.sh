#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 11: the FUSE daemon of a volume dies (kill -9): kubemount
# is-mountpoint exits 3 and says "corrupted" (ENOTCONN), kubemount umount
# cleans it up, and mounting again works.  bindfs on the host, bindfs in the
# kubelet container (its mount reaches the host through the rshared kubelet
# dir), and squashfuse.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
need_tools bindfs squashfuse mksquashfs
[[ -c /dev/fuse ]] || bail_out "no /dev/fuse (modprobe fuse)"

km() { "$KUBEMOUNT" "$@"; }
# is_corrupted PATH: kubemount is-mountpoint exits 3 (in RC, OUT, ERR).
is_corrupted() {
        run km is-mountpoint "$1"
        ((RC == 3))
}

node_up
pod_up a
S=$KUBELET_DIR/plugins/fuse-src
M=$KUBELET_DIR/pods/uid-1/volumes/fuse
mkdir -p "$S" "$M"
echo payload >"$S/file"

# dead_daemon_case LABEL [--in CONTAINER] START-CMD...: START-CMD runs the
# daemon in the foreground; it is spawned and killed by its PID.
dead_daemon_case() {
        local label=$1 pid
        shift
        spawn "$@"
        pid=$SPAWNED
        if ! wait_for 10 is_mounted host "$M"; then
                not_ok "$label: the FUSE daemon mounts $M"
                return
        fi
        ok "$label: the FUSE daemon mounts $M"
        check "$label: is-mountpoint says yes while the daemon lives" km is-mountpoint "$M"
        check "$label: the pod sees the FUSE mount" is_mounted pod:a "$M"
        is "$(cat "$M/file" 2>&1)" payload "$label: reads work"

        kill -KILL "$pid"
        wait "$pid" 2>/dev/null
        # The kernel keeps serving the root's attributes from its cache for
        # the daemon's attr_timeout (1 s by default): allow that much.
        wait_for 5 is_corrupted "$M"
        is "$RC" 3 "$label: after kill -9 of the daemon, is-mountpoint exits 3"
        like "$ERR" "corrupted" "$label: ... and says 'corrupted'"
        like "$ERR" "$M" "$label: ... naming the path"
        run env KUBEMOUNT_COMPAT=old-kernel "$KUBEMOUNT" is-mountpoint "$M"
        is "$RC" 3 "$label: the same with KUBEMOUNT_COMPAT=old-kernel"
        run km is-mountpoint --json "$M"
        like "$OUT" '"corrupted": true' "$label: --json says corrupted: true"
        run in_kubelet "$KUBEMOUNT" is-mountpoint "$M"
        is "$RC" 3 "$label: the same asked from the kubelet container"

        check "$label: kubemount umount of the dead mount" km umount "$M"
        check_fails "$label: ... gone from the host" is_mounted host "$M"
        check_fails "$label: ... and from the pod" is_mounted pod:a "$M"
        run km is-mountpoint "$M"
        is "$RC" 1 "$label: is-mountpoint says no afterwards"

        spawn "$@"
        pid=$SPAWNED
        if wait_for 10 is_mounted host "$M"; then
                ok "$label: mounting again works"
        else
                not_ok "$label: mounting again works"
        fi
        is "$(cat "$M/file" 2>&1)" payload "$label: reads work again"
        check "$label: kubemount umount of the live mount" km umount "$M"
        # A FUSE daemon exits by itself once unmounted.
        wait_for 5 eval '! kill -0 '"$pid"' 2>/dev/null' && ok "$label: the daemon exits after the umount" ||
                not_ok "$label: the daemon exits after the umount"
        wait "$pid" 2>/dev/null
}

dead_daemon_case "bindfs on the host" bindfs -f "$S" "$M"
dead_daemon_case "bindfs in the kubelet container" --in kubelet bindfs -f "$S" "$M"

if command -v squashfuse >/dev/null && command -v mksquashfs >/dev/null; then
        mksquashfs "$S" "$NODE/volume.squashfs" -quiet -noappend >/dev/null
        dead_daemon_case squashfuse squashfuse -f "$NODE/volume.squashfs" "$M"
else
        not_ok "squashfuse: squashfuse or mksquashfs is not installed"
fi

# Known gap: is-mountpoint asks statx(2) without AT_STATX_FORCE_SYNC, so
# while the attributes are cached (attr_timeout) a dead daemon goes unseen.
spawn bindfs -f -o attr_timeout=60 "$S" "$M"
pid=$SPAWNED
wait_for 10 is_mounted host "$M"
km is-mountpoint "$M"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
run km is-mountpoint "$M"
is "$RC" 3 "a dead daemon with a long attr_timeout: is-mountpoint exits 3 right away"
check "... and kubemount umount cleans it" km umount "$M"

node_down "dead FUSE"
done_testing
