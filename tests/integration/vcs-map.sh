#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `kubemount vcs list`: the filesystem type -> VCS image table from its four
# sources as the CLI takes them (global options in any order, the design's
# --TYPE_mount_container= spelling, $KUBEMOUNT_VCS_DIR, a ConfigMap volume
# updated by a ..data swap), and its exit codes.  The library's own cases
# are in tests/unit/test-vcs-map.c.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
node_up --no-kubelet

export KUBEMOUNT_VCS_DIR=$NODE/vcs.d
unset KUBEMOUNT_VCS_CONFIGMAP
mkdir -p "$KUBEMOUNT_VCS_DIR" "$NODE/cm"
km() { timeout 20 "$KUBEMOUNT" "$@"; }

check "vcs list with the defaults" km vcs list
like "$OUT" $'TYPE +IMAGE +POLICY +DAEMON +SOURCE\nblock-tools +fuse-tools:latest +auto +no +default\nceph +rbd:latest +auto +no +default' \
        "a header, then the types sorted"
like "$OUT" $'\next4 +fuse-tools:latest +auto +no +default\n' "ext4 (the multi-call tools): fuse-tools"
like "$OUT" 'glusterfs +glusterfs:latest +auto +yes +default' "glusterfs: its image, a daemon"
# iscsi is no mount type but iscsiadm's entry (the multi-call tool): the host's by default.
like "$OUT" $'\niscsi +- +host +no +default\n' "iscsi (the multi-call iscsiadm): the host's, no image"

# The kubelet's ConfigMap layout: keys are links into ..data.
cm_version() { # NAME IMAGE
        mkdir "$NODE/cm/$1"
        printf nfs >"$NODE/cm/$1/volume-plugin"
        printf '%s' "$2" >"$NODE/cm/$1/docker-container"
        ln -s "$1" "$NODE/cm/..data_tmp" && mv -T "$NODE/cm/..data_tmp" "$NODE/cm/..data"
}
cm_version ..v1 cm/nfs:1
ln -s ..data/volume-plugin "$NODE/cm/volume-plugin"
ln -s ..data/docker-container "$NODE/cm/docker-container"
echo '{"mappings": [{"types": ["nfs", "nfs4"], "image": "file/nfs:1", "policy": "host"}]}' >"$KUBEMOUNT_VCS_DIR/10-nfs.json"

check "vcs list --json with a file and a ConfigMap" km --vcs-configmap "$NODE/cm" vcs list --json
like "$OUT" '"type": "nfs",[^}]*"image": "cm/nfs:1",[^}]*"policy": "auto",[^}]*"daemon": false,[^}]*"source": "configmap [^"]*/cm"' \
        "nfs from the ConfigMap, over the file"
like "$OUT" '"type": "nfs4",[^}]*"image": "file/nfs:1",[^}]*"policy": "host"' "nfs4 from the file"
cm_version ..v2 cm/nfs:2
check "after a ..data swap" env KUBEMOUNT_VCS_CONFIGMAP="$NODE/cm" "$KUBEMOUNT" vcs list
like "$OUT" 'nfs +cm/nfs:2 +auto' "the new version, through \$KUBEMOUNT_VCS_CONFIGMAP"

check "both command-line spellings among other global options" km --kubelet-dir "$KUBELET_DIR" \
        --nfs_mount_container=cli/nfs:1 -v --vcs-image fuse.sshfs=cli/sshfs:1 --vcs-configmap "$NODE/cm" vcs list
like "$OUT" 'nfs +cli/nfs:1 +container +no +command line' "--nfs_mount_container= wins, policy container"
like "$OUT" 'fuse.sshfs +cli/sshfs:1 +container +yes +command line' "--vcs-image wins"

run km --vcs-image nfs=a:1 --nfs_mount_container=b:1 vcs list
is "$RC" 2 "a type given twice on the command line: exit 2"
like "$ERR" 'nfs_mount_container=b:1: type nfs is mapped twice in one source \(also at command line: --vcs-image nfs=a:1\)' \
        "... naming both"
run km --vcs-image 'nfs=x:1'$'\e' list
is "$RC" 2 "a bad mapping option fails any command"
run km --nfs_mount_containr=x:1 vcs list
is "$RC" 2 "a misspelt option is still unknown"

echo '{"mappings": [' >"$KUBEMOUNT_VCS_DIR/20-bad.json"
run km vcs list
is "$RC" 2 "a bad file: exit 2"
like "$ERR" "warning: $KUBEMOUNT_VCS_DIR/20-bad.json: invalid JSON at line 2 column 0; ignored" "... one line naming it"
like "$OUT" 'nfs4 +file/nfs:1 +host' "... the other files still used"

node_down "vcs-map"
done_testing
