#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 13, point 4 (story 11): the upgrade of a VCS image across a fleet, on
# one node, as docs/deployment.md describes it.  Two images of one repository
# with different content (local/fleet, made from the test rootfs: its `mount`
# of type kmdaemon mounts a tmpfs and writes its own name there), each in the
# store only by digest, as a node that pulled the pinned references has them:
#   - the ConfigMap pins digest 1: mount A is served by digest 1;
#   - the ConfigMap's ..data is swapped to digest 2: mount B is served by
#     digest 2, and A keeps digest 1 (its container runs, reads through A
#     still reach it);
#   - status --json lists A -> digest 1, B -> digest 2, both healthy;
#   - rmi of digest 1 (REF@sha256:...) exits 1 naming A, and the image stays;
#   - after umount A, rmi of digest 1 works; B still serves digest 2.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

node_up --no-kubelet
# The images' mount records its argv in the kubelet dir (route-args.sh).
chmod 1777 "$KUBELET_DIR"
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store KUBEMOUNT_VCS_DIR=$NODE/vcs.d
mkdir -p "$KUBEMOUNT_VCS_DIR" "$KUBELET_DIR/pods/p/volumes"
W=$NODE/images
KM_V=("$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR" --vcs-configmap "$NODE/cm")

# import_pinned NAME: the image of rootfs_mount_tarball NAME in the store as
# local/fleet@DIGEST only; prints DIGEST.
import_pinned() {
        local digest
        rootfs_mount_tarball "$W" "$1" || return 1
        digest=$(km image import --json "rootfs:$W/$1.tar.gz" "local/fleet:$1" |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"])') || return 1
        km image import -q "rootfs:$W/$1.tar.gz" "local/fleet@$digest" && km rmi "local/fleet:$1" >/dev/null &&
                rm -f "$W/$1.tar.gz" && echo "$digest"
}
DIG1=$(import_pinned fleet-v1)
DIG2=$(import_pinned fleet-v2)
like "$DIG1" "^sha256:[0-9a-f]{64}$" "image 1 in the store by digest only: local/fleet@$DIG1"
like "$DIG2" "^sha256:[0-9a-f]{64}$" "image 2 in the store by digest only: local/fleet@$DIG2"
[[ $DIG1 != "$DIG2" ]] && ok "... two different digests" || not_ok "... two different digests"

pin() { # VERSION DIGEST: a ConfigMap version mapping kmdaemon to local/fleet@DIGEST
        configmap_swap "$NODE/cm" "$1" \
                "mappings={\"mappings\": [{\"types\": [\"kmdaemon\"], \"image\": \"local/fleet@$2\", \"daemon\": true}]}"
}
served_by() { cat "$1/.served-by" 2>&1; }
A=$KUBELET_DIR/pods/p/volumes/a B=$KUBELET_DIR/pods/p/volumes/b
mkdir -p "$A" "$B"

# 1. The fleet's ConfigMap pins digest 1.
pin ..v1 "$DIG1"
run "${KM_V[@]}" vcs list
like "$OUT" "kmdaemon +local/fleet@$DIG1 " "vcs list: kmdaemon is local/fleet@digest 1, from the ConfigMap"
check "mount A through the ConfigMap's image" "${KM_V[@]}" mount -t kmdaemon x "$A"
is "$(served_by "$A")" fleet-v1 "... A is served by image 1 (read through A)"
is "$(routed_digest "$A")" "$DIG1" "status --json: A -> digest 1"

# 2. The new version of the ConfigMap pins digest 2: new mounts only.
pin ..v2 "$DIG2"
run "${KM_V[@]}" vcs list
like "$OUT" "kmdaemon +local/fleet@$DIG2 " "after the ..data swap, vcs list: local/fleet@digest 2"
check "mount B after the swap" "${KM_V[@]}" mount -t kmdaemon x "$B"
is "$(served_by "$B")" fleet-v2 "... B is served by image 2"
is "$(served_by "$A")" fleet-v1 "... A is still served by image 1"
check "... A is still mounted" is_mounted host "$A"

run km status --json
status_json=$OUT
check "status --json parses" python3 -c 'import json, sys; json.loads(sys.argv[1])' "$status_json"
is "$(routed_digest "$A") $(routed_digest "$B")" "$DIG1 $DIG2" "status --json: A -> digest 1, B -> digest 2"
mount_field() { # TARGET FIELD
        python3 -c '
import json, sys
for m in json.loads(sys.argv[1]).get("mounts", []):
    if m.get("target") == sys.argv[2]:
        print(m.get(sys.argv[3]))' "$status_json" "$1" "$2"
}
is "$(mount_field "$A" image) $(mount_field "$B" image)" \
        "docker.io/local/fleet@$DIG1 docker.io/local/fleet@$DIG2" "status --json: each mount's pinned reference"
is "$(mount_field "$A" health) $(mount_field "$B" health)" "ok ok" "status --json: both healthy"
run km status
like "$OUT" "ok .* ${DIG1:0:19} +kmdaemon on $A" "status (text) shows A's digest"

# 3. The old digest is kept while it serves a mount.
run km rmi "local/fleet@$DIG1"
is "$RC" 1 "rmi local/fleet@digest 1 while it serves A: exit 1"
like "$ERR" "serves the mount $A" "... naming the mount"
check "... and the image stays" sh -c "'$KUBEMOUNT' images | grep -q '$DIG1'"
is "$(served_by "$A")" fleet-v1 "... and A still serves"

# 4. Its last mount gone, the old digest goes.
check "umount A" "${KM_V[@]}" umount "$A"
check_fails "... A is not mounted" is_mounted host "$A"
check "rmi local/fleet@digest 1 now" km rmi "local/fleet@$DIG1"
run km images
unlike "$OUT" "fleet@$DIG1" "... digest 1 is gone from the store"
like "$OUT" "fleet@$DIG2" "... digest 2 stays"
is "$(served_by "$B")" fleet-v2 "B still serves from image 2"
is "$(routed_digest "$B")" "$DIG2" "status --json: B -> digest 2"
run km rmi "local/fleet@$DIG2"
is "$RC" 1 "rmi of digest 2 while it serves B: exit 1"
check "umount B" "${KM_V[@]}" umount "$B"
is "$(km ps -a --json | grep -c '"mount"')" 0 "umount removed both containers"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "fleet-upgrade"
done_testing
