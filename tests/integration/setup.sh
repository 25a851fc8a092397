#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount setup / check: a private kubelet dir becomes rshared once, an
# already shared one is left alone, and running setup 20 times changes the
# host mount count at most once (THREATS 7: multiplied mounts, k/k mount-max).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

km() { "$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" "$@"; }
propagation_of() { findmnt -no PROPAGATION --target "$1" | tail -n1; }

# setup_20 DESC: runs setup 20 times, sets SETUP_OUTS (distinct outputs) and
# SETUP_BAD (number of failed runs).
setup_20() {
        local outs=()
        SETUP_BAD=0
        for _ in $(seq 20); do
                run km setup
                ((RC == 0)) || SETUP_BAD=$((SETUP_BAD + 1))
                outs+=("$OUT")
        done
        SETUP_OUTS=$(printf '%s\n' "${outs[@]}" | uniq -c | sed 's/^ *//')
}

# --- a private kubelet dir (a distro whose / is private)
node_up --private --no-kubelet
run km check
is "$RC" 1 "check: exit 1 on a private kubelet dir"
like "$ERR" "run kubemount setup" "check says: run kubemount setup"
like "$ERR" "$KUBELET_DIR is on a private mount" "check names the dir and its propagation"
before=$(mount_count)
setup_20
is "$SETUP_BAD" 0 "setup x20: every run exits 0"
is "$SETUP_OUTS" $'1 '"$KUBELET_DIR: made rshared"$'\n19 '"$KUBELET_DIR: already shared" \
        "setup x20: the first run makes it rshared, the others see it shared"
is "$(($(mount_count) - before))" 1 "setup x20: one mount added (the self bind), not 20"
is "$(propagation_of "$KUBELET_DIR")" shared "the kubelet dir is shared now"
is "$(findmnt -no TARGET --target "$KUBELET_DIR" | tail -n1)" "$KUBELET_DIR" "... on its own bind mount"
check "check: exit 0 after setup" km check
like "$OUT" "$KUBELET_DIR is on a shared mount" "check reports the shared mount"
# The point of it: a host mount now reaches a kubelet container and a pod.
kubelet_up && pod_up a || not_ok "containers start"
mkdir -p "$KUBELET_DIR/pods/a/vol"
check "a host mount under the kubelet dir" "$KUBEMOUNT" mount -t tmpfs -o size=1m vol "$KUBELET_DIR/pods/a/vol"
check "... reaches the kubelet container" is_mounted kubelet "$KUBELET_DIR/pods/a/vol"
check "... and the pod" is_mounted pod:a "$KUBELET_DIR/pods/a/vol"
node_down "private kubelet dir"

# --- already shared (node_up's default, as the kubelet itself does it)
node_up --no-kubelet
check "check: exit 0 on a shared kubelet dir" km check
before=$(mount_count)
peer=$(findmnt -no OPT-FIELDS --mountpoint "$KUBELET_DIR")
setup_20
is "$SETUP_BAD" 0 "setup x20 on a shared dir: every run exits 0"
is "$SETUP_OUTS" "20 $KUBELET_DIR: already shared" "setup x20 on a shared dir: nothing changed, each run says so"
is "$(mount_count)" "$before" "setup x20 on a shared dir: mount count unchanged"
is "$(findmnt -no OPT-FIELDS --mountpoint "$KUBELET_DIR")" "$peer" "... and the peer group unchanged"
run km setup --json
like "$OUT" '"changed": false' "setup --json reports changed: false"
node_down "shared kubelet dir"

# --- a mount point already, but private: made rshared without a new mount
node_up --private --no-kubelet
mount --bind "$KUBELET_DIR" "$KUBELET_DIR"
before=$(mount_count)
run km setup --json
is "$RC" 0 "setup on a private mount point exits 0"
like "$OUT" '"changed": true' "setup --json reports changed: true"
is "$(mount_count)" "$before" "no mount added: the mount point itself is made rshared"
is "$(propagation_of "$KUBELET_DIR")" shared "the kubelet dir is shared now"
setup_20
is "$(mount_count)" "$before" "setup x20 more: mount count unchanged"
node_down "private mount point"

# --- a missing kubelet dir: check says so, setup creates it
node_up --private --no-kubelet
rm -rf "$KUBELET_DIR"
run km check
is "$RC" 1 "check: exit 1 on a missing kubelet dir"
like "$ERR" "$KUBELET_DIR does not exist: run kubemount setup" "check says it does not exist"
check "setup creates and shares a missing kubelet dir" km setup
is "$(propagation_of "$KUBELET_DIR")" shared "the created kubelet dir is shared"
check "check: exit 0 afterwards" km check
node_down "missing kubelet dir"

done_testing
