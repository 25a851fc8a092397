#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VCS images end to end through the CLI: `kubemount image import` of a root
# filesystem tarball, of an OCI layout (oci:DIR:NAME) and of an OCI archive;
# `kubemount pull` from a real docker-registry on loopback (by tag and by
# digest; two pulls at once; the image size limit); `images`, `run --image`
# (the image's Cmd as the default command), `rmi` sparing a live container's
# root filesystem.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh" || { echo "Bail out! cannot load tests/lib/registry.sh"; exit 1; }
registry_private_net "$@"
node_sandbox "$@"
need_tools docker-registry skopeo umoci openssl python3 curl

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
W=$KM_SCRATCH/images
mkdir -p "$W"

# ---- rootfs: a root filesystem tarball becomes a one-layer image ----
tar -C "$ROOTFS" -czf "$W/rootfs.tar.gz" .
run km image import "rootfs:$W/rootfs.tar.gz"
is "$RC" 1 "image import rootfs: without NAME: refused"
check "image import rootfs:TAR vcs/test:1" km image import "rootfs:$W/rootfs.tar.gz" vcs/test:1
run km images --json
like "$OUT" '"ref": "docker.io/vcs/test:1"' "images: lists docker.io/vcs/test:1"
run km run --image vcs/test:1 -- sh -c 'cat /etc/kubemount-test-rootfs >/dev/null && echo from-image'
is "$RC:$OUT" "0:from-image" "run --image vcs/test:1 runs from the imported root filesystem"

# ---- oci: and oci-archive: (an OCI layout made with umoci; its Cmd is the default) ----
registry_test_image "$W/layout"
# (the test image has /bin/busybox and no applet links)
umoci config --image "$W/layout:test" --config.cmd=/bin/busybox --config.cmd=echo --config.cmd=cmd-from-config ||
        not_ok "umoci config"
check "image import oci:DIR:test local/layout:v1" km image import "oci:$W/layout:test" local/layout:v1
run km run --image local/layout:v1
is "$RC:$OUT" "0:cmd-from-config" "run --image without a command runs the image's Cmd"
tar -C "$W/layout" -cf "$W/layout.tar" .
check "image import oci-archive:FILE:test" km image import "oci-archive:$W/layout.tar:test" local/archive:v1
run km image import "oci:$W/layout:nosuchtag" local/x:1
is "$RC" 1 "image import of a name the layout lacks: exit 1"
like "$ERR" "nosuch|no image" "... and says so"

# ---- pull from a registry on loopback (plain HTTP: named insecure) ----
registry_start
registry_push "oci:$W/layout:test" vcs/pulled:1
run km pull "$REGISTRY/vcs/pulled:1"
is "$RC" 1 "pull over plain HTTP without --insecure-registry: refused"
printf '{"insecureRegistries": ["%s"]}\n' "$REGISTRY" >"$W/config.json"
run env KUBEMOUNT_CONFIG="$W/config.json" "$KUBEMOUNT" pull -q "$REGISTRY/vcs/pulled:1"
is "$RC" 0 "pull with the registry named insecure in the config file"
run km pull --insecure-registry "$REGISTRY" --json "$REGISTRY/vcs/pulled:1"
is "$RC" 0 "pull --insecure-registry REGISTRY/vcs/pulled:1"
digest=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["manifest"])' "$OUT" 2>/dev/null)
like "$digest" '^sha256:[0-9a-f]{64}$' "... its record names the manifest digest"
run km run --image "$REGISTRY/vcs/pulled:1" -- /bin/busybox echo pulled-ok
is "$RC:$OUT" "0:pulled-ok" "run --image of the pulled image"
check "pull by digest" km pull --insecure-registry "$REGISTRY" "$REGISTRY/vcs/pulled@$digest"
run km pull --insecure-registry "$REGISTRY" "$REGISTRY/vcs/pulled@sha256:$(printf '0%.0s' {1..64})"
is "$RC" 1 "pull of a digest the registry does not have: exit 1"

# The image size limit holds for pulls too: refused on what the manifest declares, before any layer is fetched.
rm -rf "$KUBEMOUNT_STORE_DIR"
run km pull --insecure-registry "$REGISTRY" --max-image-size 1M "$REGISTRY/vcs/pulled:1"
is "$RC" 1 "pull --max-image-size 1M of an image with a 2 MB layer: refused"
like "$ERR" "over the image size limit of 1048576 bytes" "... and says so"
is "$(find "$KUBEMOUNT_STORE_DIR/blobs/sha256" -type f -size +100k | wc -l)" 0 "... before fetching its layer"

# Two pulls of the same image at once: both succeed, the store stays whole.
rm -rf "$KUBEMOUNT_STORE_DIR"
km pull -q --insecure-registry "$REGISTRY" "$REGISTRY/vcs/pulled:1" & p1=$!
km pull -q --insecure-registry "$REGISTRY" "$REGISTRY/vcs/pulled:1" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
is "$r1:$r2" "0:0" "two concurrent pulls of one image both succeed"
run km run --image "$REGISTRY/vcs/pulled:1" -- /bin/busybox echo still-whole
is "$RC:$OUT" "0:still-whole" "... and the image runs"
holds "... no work left in the store's tmp/" test -z "$(ls -A "$KUBEMOUNT_STORE_DIR/tmp" 2>/dev/null)"

# ---- rmi spares what a container uses ----
check "run -d from the pulled image" km run -d --name keeper --image "$REGISTRY/vcs/pulled:1" -- /bin/busybox sleep 1000
check "rmi of its image" km rmi "$REGISTRY/vcs/pulled:1"
run km images --json
unlike "$OUT" "vcs/pulled" "images: the reference is gone"
check "... the container still runs (its root filesystem kept)" km exec keeper -- /bin/busybox true
km rm -f keeper >/dev/null 2>&1
run km rmi "$REGISTRY/vcs/nosuch:1"
is "$RC" 1 "rmi of an unknown image: exit 1"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
registry_stop
node_down "vcs-image"
done_testing
