#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount refs PATH answers for any path, as k8s.io/mount-utils'
# GetMountRefs does (SearchMountPoints): for a mount point its other binds,
# for a directory inside a mount the bind that still references it (a subPath
# source), for a plain directory, a missing path or a corrupted mount an
# empty list and exit 0.  Text and --json, from the host and from the kubelet
# container.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"
need_tools python3 bindfs
[[ -c /dev/fuse ]] || { echo "Bail out! no /dev/fuse (a corrupted FUSE mount)"; exit 1; }

node_up
P=$KUBELET_DIR/pods/uid-1
V=$P/volumes/kubernetes.io~empty-dir/v
G=$KUBELET_DIR/plugins/kubernetes.io/csi/example/abc/globalmount
S=$P/volume-subpaths/v/app/0
mkdir -p "$V" "$G" "$S" "$P/plain"
"$KUBEMOUNT" mount -t tmpfs -o size=1m vol "$G" || { echo "Bail out! cannot mount the volume"; exit 1; }
mkdir -p "$G/data/deeper" "$G/other"
touch "$G/file"
# The pod's bind of the global mount, and a subPath bind of a directory in it.
mount --bind "$G" "$V" && mount --bind "$V/data" "$S" || { echo "Bail out! cannot make the binds"; exit 1; }
ln -s "$V/data" "$P/link-to-data"

# refs WHERE PATH: RC, OUT (one path per line), ERR.
refs() {
        if [[ $1 == host ]]; then run "$KUBEMOUNT" refs "$2"; else
                run in_kubelet "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt refs "$2"
        fi
}
# json WHERE PATH: the --json array, one path per line (sorted as printed).
json() {
        if [[ $1 == host ]]; then run "$KUBEMOUNT" refs --json "$2"; else
                run in_kubelet "$KUBEMOUNT" --host-mount-ns=/rootfs/proc/1/ns/mnt refs --json "$2"
        fi
        JRC=$RC
        JSON=$(python3 -c 'import json, sys
a = json.loads(sys.argv[1])
assert isinstance(a, list) and all(isinstance(x, str) for x in a)
print("\n".join(a))' "$OUT" 2>&1) || JSON="invalid JSON: $OUT"
}
lines() { printf '%s\n' "$@"; }

for where in host kubelet; do
        # A directory inside a mount: the subPath bind that references it.
        refs $where "$G/data"
        is "$RC:$OUT:$ERR" "0:$S:" "[$where] directory inside a mount: its subPath bind"
        json $where "$G/data"
        is "$JRC:$JSON" "0:$S" "[$where] ... --json: [\"$S\"]"
        # The same directory seen through the pod's bind of the mount.
        refs $where "$V/data"
        is "$RC:$OUT" "0:$S" "[$where] the same directory through another bind of the mount"
        refs $where "$P/link-to-data"
        is "$RC:$OUT" "0:$S" "[$where] through a symlink to it"
        # Mount points: each bind of the volume's root names the other one.
        refs $where "$G"
        is "$RC:$OUT" "0:$V" "[$where] the global mount: the pod's bind"
        refs $where "$V"
        is "$RC:$OUT" "0:$G" "[$where] the pod's bind: the global mount"
        refs $where "$S"
        is "$RC:$OUT" "0:" "[$where] the subPath bind itself: nothing else shows data/"
        # Plain directories and files: an empty list, exit 0.
        for p in "$P/plain" "$G/other" "$G/data/deeper" "$G/file"; do
                refs $where "$p"
                is "$RC:$OUT:$ERR" "0::" "[$where] ${p#"$KUBELET_DIR"/}: no refs, exit 0"
        done
        json $where "$P/plain"
        is "$JRC:$OUT:$JSON" "0:[]:" "[$where] plain directory --json: []"
        # Missing: an empty list, exit 0.
        refs $where "$P/missing"
        is "$RC:$OUT:$ERR" "0::" "[$where] missing path: no refs, exit 0"
        json $where "$P/missing/deeper"
        is "$JRC:$OUT" "0:[]" "[$where] missing path --json: []"
        # An error that is not "missing": one line, exit 2.
        refs $where "$G/file/x"
        is "$RC:$OUT" "2:" "[$where] a path through a file: exit 2"
        like "$ERR" "^kubemount: refs: refs $G/file/x: Not a directory$" "[$where] ... one line naming the path and why"
done

# Stacked binds at one path (on the node's private tmpfs, where nothing
# propagates): mount-utils leaves out only the topmost by its id.
A=$NODE/stack/a B=$NODE/stack/b
mkdir -p "$A" "$B"
mount -t tmpfs stack "$A" && mount --bind "$A" "$B" && mount --bind "$A" "$B" || { echo "Bail out! cannot stack binds"; exit 1; }
refs host "$A"
is "$RC:$OUT" "0:$(lines "$B" "$B")" "stacked binds at one path: both listed for the source"
refs host "$B"
is "$RC:$OUT" "0:$(lines "$A" "$B")" "... for the path itself: the source and the bind under the top"
umount "$B" "$B" "$A"

# A corrupted mount (its FUSE daemon killed): no refs, a warning, exit 0, as GetMountRefs.
F=$P/fuse
mkdir -p "$F"
spawn bindfs -f "$G/data" "$F"
if wait_for 10 is_mounted host "$F"; then
        kill -KILL "$SPAWNED"
        wait "$SPAWNED" 2>/dev/null
        # The kernel serves the root's cached attributes for a second.
        corrupted() { refs host "$F" && [[ $ERR == *corrupted* ]]; }
        wait_for 5 corrupted
        is "$RC:$OUT" "0:" "a corrupted mount (dead FUSE daemon): no refs, exit 0"
        like "$ERR" "^kubemount: warning: refs $F: corrupted mount \\(Transport endpoint is not connected\\)" \
                "... and a warning saying so"
        json host "$F/below"
        is "$JRC:$OUT" "0:[]" "... below it, --json: []"
        umount -l "$F"
else
        not_ok "bindfs mounts $F"
fi

umount "$S" "$V" "$G"
node_down "refs"
done_testing
