#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 11, end to end against real servers in the sandbox's own network: a
# node whose host has no glusterfs, sshfs or FUSE client (hide_host_clients)
# and no configuration; the kubelet, in its container, mounts
#   - glusterfs through the mounter-path form (`kubemount mount -t glusterfs
#     127.0.0.2:/gv0 TARGET`), served by the glusterfs image (policy auto);
#   - fuse.sshfs with its key in a secret volume, served by fuse-tools;
# a pod reads and writes both; the kubelet's container is killed and the pod
# keeps reading; `kubemount status` shows both healthy; `kubemount umount`
# ends each client and its container; nothing is left.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/servers.sh" || { echo "Bail out! cannot load tests/lib/servers.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
need_images glusterfs fuse-tools
node_sandbox --net "$@"

node_up
vcs_setup
gluster_up || bail_out "gluster_up failed"
sshd_up || bail_out "sshd_up failed"
import_images glusterfs fuse-tools
hide_host_clients
pod_up a
K=("$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt)
in_k() { in_kubelet "$@"; }

VOLS=$KUBELET_DIR/pods/uid-a/volumes
G=$VOLS/kubernetes.io~glusterfs/gv S=$VOLS/kubernetes.io~csi/ssh
SECRET=$VOLS/kubernetes.io~secret/ssh-key
mkdir -p "$G" "$S" "$SECRET"
# A secret volume's default mode, 0644: the unprivileged client (its root is not the host's)
# reads it as others do.  ssh takes it: the key is not its own user's.
install -m 0644 "$SSHD_KEY" "$SECRET/id"
SSH_OPTS=${SSHFS_OPTIONS/IdentityFile=$SSHD_KEY/IdentityFile=$SECRET/id}

run in_k "${K[@]}" status --json
like "$OUT" '"type": "glusterfs",[^}]*"route": "container"' "status: glusterfs would go to its image (the host has no client)"

# glusterfs, as the kubelet's mounter path runs it.
t0=$(now_ms)
run in_k "${K[@]}" mount -t glusterfs -o log-level=WARNING "$GLUSTER_VOLUME" "$G"
is "$RC" 0 "kubelet: kubemount mount -t glusterfs $GLUSTER_VOLUME: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
diag "routed glusterfs mount: $(($(now_ms) - t0)) ms"
check "... the pod writes to the volume" in_pod a sh -c "echo from the pod >'$G/pod-file'"
is "$(cat "$GLUSTER_BRICK/pod-file" 2>&1)" "from the pod" "... it is on the server's brick"
echo "from the server" >"$GLUSTER_BRICK/server-file"
is "$(in_pod a cat "$G/server-file" 2>&1)" "from the server" "... the pod reads the server's file"

# sshfs, as a CSI driver or the shim would ask for it.
t0=$(now_ms)
run in_k "${K[@]}" mount -t fuse.sshfs -o "$SSH_OPTS" "$SSHD_SOURCE" "$S"
is "$RC" 0 "kubelet: kubemount mount -t fuse.sshfs: exit 0"
[[ $RC == 0 ]] || diag "$OUT" "$ERR"
diag "routed sshfs mount: $(($(now_ms) - t0)) ms"
is "$(in_pod a cat "$S/${SSHD_FILE##*/}" 2>&1)" "$SSHD_FILE_CONTENT" "... the pod reads the served file"

run km ps
like "$OUT" "mount glusterfs on $G" "ps: the glusterfs container and its target"
like "$OUT" "mount fuse.sshfs on $S" "ps: the sshfs container and its target"
run km status --json
like "$OUT" "\"health\": \"ok\",[^}]*\"target\": \"$G\"|\"target\": \"$G\"[^}]*\"health\": \"ok\"" "status: the glusterfs mount is healthy"
is "$RC" 0 "status: exit 0"
like "$OUT" '"ref": "docker.io/library/glusterfs:latest"' "status: the store's images"

# The kubelet's container dies: the volumes keep serving.
kill -KILL "${KM_CTR_PID[kubelet]}"
wait "${KM_CTR_PID[kubelet]}" 2>/dev/null
is "$(in_pod a cat "$G/server-file" 2>&1)" "from the server" "the kubelet is gone: the pod still reads glusterfs"
is "$(in_pod a cat "$S/${SSHD_FILE##*/}" 2>&1)" "$SSHD_FILE_CONTENT" "... and sshfs"

# A new kubelet unmounts: each client and container ends.
kubelet_up || bail_out "no kubelet container"
check "kubelet: kubemount umount (glusterfs)" in_k "${K[@]}" umount "$G"
check "kubelet: kubemount umount (sshfs)" in_k "${K[@]}" umount "$S"
check_fails "... glusterfs gone from the host" is_mounted host "$G"
check_fails "... sshfs gone from the host" is_mounted host "$S"
is "$(km ps -a --json | grep -c '"mount"')" 0 "... and both containers"
wait_for 10 sh -c '! pgrep -x glusterfs >/dev/null'
check_fails "... no glusterfs client is left" pgrep -x glusterfs

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
sshd_down
gluster_down
node_down "route-servers"
done_testing
