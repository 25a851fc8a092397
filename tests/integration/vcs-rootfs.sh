#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A container's root filesystem (THREATS 29):
#   - run --image: the store's tree is the read-only lower layer of an overlay
#     whose upper dir is the container's own (STATE/containers/NAME/layer).
#     Container 1 writes /bin/mount.nfs and /etc/written: the store's tree
#     stays byte for byte what it was, container 2 of the same image sees
#     neither, nor does a new container of the same name; rm removes the
#     layer; nothing is mounted in the host.  The same through runc and crun
#     (the bundle's rootfs is the overlay, in the monitor's namespace only);
#   - a state directory on overlayfs: refused, and the message says why; the
#     mount(2) fallback of the layer (kernels without the new mount API)
#     through the vcs-layer driver;
#   - --mount SRC:DST whose DST is missing in the root: made (directories, a
#     file for a file), in the layer for an image, in DIR for --rootfs DIR;
#     the image's symlinks are followed inside the root only; what cannot be
#     made is named (a file on the way, a read-only root, a dangling link).
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"
need_tools runc crun python3
[[ -n ${VCS_LAYER:-} && -x $VCS_LAYER ]] || { echo "Bail out! no vcs-layer driver: set VCS_LAYER (meson test sets it)"; exit 1; }

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
STATE=$KUBEMOUNT_STATE_DIR
DATA=$NODE/vcs-data
NL=$'\n'
mkdir -p "$DATA" && echo "data of the node" >"$DATA/file"
vcs_agent_start

tar -C "$ROOTFS" -czf "$KM_SCRATCH/rootfs.tar.gz" . || not_ok "tar of the test rootfs"
check "image import of the test rootfs as vcs/rootfs:1" km image import "rootfs:$KM_SCRATCH/rootfs.tar.gz" vcs/rootfs:1
TREE=$(find "$KUBEMOUNT_STORE_DIR/rootfs" -mindepth 1 -maxdepth 1 -type d | head -n1)
holds "... its tree is in the store ($TREE)" test -e "$TREE/etc/kubemount-test-rootfs"
# The tree as it is: names, types, modes, owners, sizes, times, link targets, contents.
tree_sum() {
        (cd "$TREE" && find . -printf '%y %m %U %G %s %T@ %p %l\n' | LC_ALL=C sort &&
                find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum
}
SUM=$(tree_sum)
overlays_in_host() { awk '$9 == "overlay"' /proc/1/mountinfo | wc -l; }
OVERLAYS=$(overlays_in_host)

# ---- 29: what container 1 writes stays in its own layer ----
WRITE='echo "#!/bin/sh" >/bin/mount.nfs && echo "echo pwned" >>/bin/mount.nfs && chmod 755 /bin/mount.nfs &&
echo written >/etc/written && rm /etc/kubemount-test-rootfs && echo wrote'
run km run -d --name c1 --image vcs/rootfs:1 -- sh -c "$WRITE; exec sleep 1000"
is "$RC:$OUT" "0:c1" "[29] run -d --image: container 1"
if wait_for 10 test -e "$STATE/containers/c1/layer/upper/bin/mount.nfs"; then
        ok "[29] container 1 wrote /bin/mount.nfs into its own layer (containers/c1/layer/upper)"
else
        not_ok "[29] container 1 wrote /bin/mount.nfs into its own layer (containers/c1/layer/upper)"
        diag "$(km logs c1 2>&1)" "$(find "$STATE/containers/c1" 2>&1 | head -20)"
fi
run km exec c1 -- sh -c 'cat /etc/written; /bin/mount.nfs; test -e /etc/kubemount-test-rootfs || echo removed'
is "$OUT" "written${NL}pwned${NL}removed" "[29] ... and sees what it wrote"
is "$(tree_sum)" "$SUM" "[29] the store's tree is unchanged (byte for byte)"
check_fails "[29] ... no /bin/mount.nfs in it" test -e "$TREE/bin/mount.nfs"
run km run --image vcs/rootfs:1 -- sh -c 'for f in /bin/mount.nfs /etc/written; do test -e $f && echo $f; done; cat /etc/kubemount-test-rootfs'
unlike "$OUT" "mount.nfs|written" "[29] container 2 of the same image sees neither file"
like "$OUT" "kubemount test rootfs" "[29] ... and has what container 1 removed"
is "$(overlays_in_host)" "$OVERLAYS" "[29] no overlay is mounted in the host for them"
check "[29] stop c1" km stop c1
run km run -d --name c1 --image vcs/rootfs:1 -- sleep 1000
is "$RC" 0 "[29] a new container named c1 (the exited one makes way)"
run km exec c1 -- sh -c 'test -e /bin/mount.nfs && echo leaked; test -e /etc/written && echo leaked; echo checked'
is "$OUT" "checked" "[29] ... does not see what the old c1 wrote"
check "[29] rm -f c1" km rm -f c1
if wait_for 10 test ! -e "$STATE/containers/c1"; then ok "[29] after rm, its state dir and layer are gone"; else
        not_ok "[29] after rm, its state dir and layer are gone"
        diag "$(find "$STATE/containers/c1" 2>&1 | head)"
fi
run km run --name short --image vcs/rootfs:1 -- sh -c 'echo x >/etc/x; echo done'
is "$RC:$OUT" "0:done" "[29] a short run of the image writes"
holds "[29] ... its layer goes with it" wait_for 10 test ! -e "$STATE/containers/short"
run km run --image vcs/rootfs:1 --read-only -- sh -c 'echo x >/etc/x 2>/dev/null && echo written; echo rc=$?'
unlike "$OUT" "written" "[29] --image --read-only: the root cannot be written"

# ---- 29 through runc and crun: the bundle's rootfs is the overlay ----
for rt in runc crun; do
        run km run --runtime "$rt" --image vcs/rootfs:1 -- sh -c "$WRITE"
        is "$RC:$OUT" "0:wrote" "[29 $rt] run --runtime $rt --image writes into the root"
        run km run --runtime "$rt" --image vcs/rootfs:1 -- sh -c 'for f in /bin/mount.nfs /etc/written; do test -e $f && echo $f; done; echo end'
        is "$RC:$OUT" "0:end" "[29 $rt] ... the next container of the image sees nothing of it"
        is "$(tree_sum)" "$SUM" "[29 $rt] ... the store's tree is unchanged"
        run km run -d --name "r-$rt" --runtime "$rt" --image vcs/rootfs:1 --mount "$DATA:/new/data:ro" -- sleep 1000
        is "$RC" 0 "[29 $rt] run -d, with a --mount to a missing directory"
        # The runtime starts the container after run -d has answered.
        wait_for 10 km exec "r-$rt" -- true 2>/dev/null
        run km exec "r-$rt" -- sh -c 'cat /new/data/file; echo x >/bin/mount.nfs && echo wrote'
        is "$OUT" "data of the node${NL}wrote" "[29 $rt] ... the bind is there (made by the runtime in the layer)"
        holds "[29 $rt] ... in the container's layer" test -e "$STATE/containers/r-$rt/layer/upper/bin/mount.nfs"
        holds "[29 $rt] ... config.json names the bundle's rootfs" \
                grep -q "\"path\": \"$STATE/containers/r-$rt/rootfs\"" "$STATE/containers/r-$rt/config.json"
        is "$(overlays_in_host)" "$OVERLAYS" "[29 $rt] no overlay is mounted in the host"
        check "[29 $rt] rm -f" km rm -f "r-$rt"
        holds "[29 $rt] ... its layer is gone" wait_for 10 test ! -e "$STATE/containers/r-$rt"
done
is "$(tree_sum)" "$SUM" "[29] after all of it, the store's tree is unchanged"

# ---- the upper dir's filesystem ----
OV=$NODE/ovl
mkdir -p "$OV/lower" "$OV/upper" "$OV/work" "$OV/m"
mount -t overlay km-ovl -o "lowerdir=$OV/lower,upperdir=$OV/upper,workdir=$OV/work" "$OV/m" ||
        not_ok "an overlay for a state directory"
mkdir -p "$OV/m/state"
run env KUBEMOUNT_STATE_DIR="$OV/m/state" timeout 30 "$KUBEMOUNT" run --image vcs/rootfs:1 -- true
is "$RC" 125 "a state directory on overlayfs: run --image fails (exit 125)"
like "$ERR" "on overlayfs, which cannot hold an overlay's upper dir" "... and says why"
like "$ERR" "$OV/m/state" "... naming the directory"
# The agent that run started for that state directory.
for p in $(vcs_agent_pids); do
        [[ $p == "$AGENT" ]] || { kill "$p"; wait_for 5 vcs_gone "$p"; }
done
mkdir -p "$NODE/merged"
run "$VCS_LAYER" "$TREE" "$OV/m/state" "$NODE/merged" new
like "$ERR" "not supported as upperdir|on overlayfs" "... the kernel refuses it too, and its reason is in the message"
umount "$OV/m"

# The mount(2) fallback and the new API give the same layer.
for how in new old; do
        mkdir -p "$NODE/layer-$how" "$NODE/merged-$how"
        run "$VCS_LAYER" "$TREE" "$NODE/layer-$how" "$NODE/merged-$how" "$how"
        is "$RC" 0 "[$how] vcs-layer: the writable layer is mounted ($ERR)"
        echo pwned >"$NODE/merged-$how/bin/mount.nfs" 2>/dev/null
        holds "[$how] ... a write lands in the upper dir" test -e "$NODE/layer-$how/layer/upper/bin/mount.nfs"
        holds "[$how] ... the image's files are there" test -e "$NODE/merged-$how/etc/kubemount-test-rootfs"
        opts=$(findmnt -no OPTIONS --mountpoint "$NODE/merged-$how")
        like "$opts" "redirect_dir=nofollow" "[$how] ... redirect_dir=nofollow"
        unlike "$opts" "index=on|metacopy=on" "[$how] ... neither index nor metacopy ($opts)"
        umount "$NODE/merged-$how"
done
is "$(tree_sum)" "$SUM" "the store's tree is unchanged by the fallback"

# ---- --mount SRC:DST with DST missing ----
run km run --image vcs/rootfs:1 --mount "$DATA:/a/b/c" --mount "$DATA/file:/x/y/file.txt:ro" -- \
        sh -c 'cat /a/b/c/file /x/y/file.txt'
is "$RC:$OUT" "0:data of the node${NL}data of the node" "--image: missing directories and a file for a file bind are made"
check_fails "... in the container's layer, not in the store" test -e "$TREE/a"
COPY=$NODE/rootfs-copy
rootfs_copy "$COPY" || not_ok "rootfs_copy"
run km run --rootfs "$COPY" --mount "$DATA:/a/b/c" -- cat /a/b/c/file
is "$RC:$OUT" "0:data of the node" "--rootfs DIR: a missing mount point is made"
holds "... in DIR, as runc and crun make it" test -d "$COPY/a/b/c"
run km run --rootfs "$COPY" --read-only --mount "$DATA:/ro/made" -- cat /ro/made/file
is "$RC:$OUT" "0:data of the node" "--rootfs DIR --read-only: made too (before the root turns read-only)"
# Symlinks of the image resolve inside it.
ln -s /etc "$COPY/etc-link"
ln -s ../../../../../../../tmp "$COPY/up-link"
ln -s /nowhere/at/all "$COPY/dangling"
name=km-made-$$
run km run --rootfs "$COPY" --mount "$DATA:/etc-link/$name/d" --mount "$DATA:/up-link/$name" -- true
is "$RC" 0 "mount points through the image's symlinks (/etc-link -> /etc, /up-link -> ../../..)"
holds "... made inside the image ($COPY/etc/$name/d, $COPY/tmp/$name)" test -d "$COPY/etc/$name/d" -a -d "$COPY/tmp/$name"
check_fails "... never in the host's /etc" test -e "/etc/$name"
check_fails "... nor the host's /tmp" test -e "/tmp/$name"
run km run --rootfs "$COPY" --mount "$DATA:/dangling/x" -- true
is "$RC" 125 "a mount point through a dangling symlink: exit 125"
like "$ERR" "mount point /dangling/x: /dangling is a symlink to nothing in the image" "... the message names it"
run km run --rootfs "$COPY" --mount "$DATA:/etc/passwd/sub" -- true
is "$RC" 125 "a mount point below a file: exit 125"
like "$ERR" "mount point /etc/passwd/sub: /etc/passwd: Not a directory" "... the message names the file"
mkdir -p "$NODE/ro-root"
mount --bind -o ro "$COPY" "$NODE/ro-root"
run km run --rootfs "$NODE/ro-root" --mount "$DATA:/no/such/dir" -- true
is "$RC" 125 "a mount point on a read-only root filesystem: exit 125"
like "$ERR" "mount point /no/such/dir: cannot create /no: Read-only file system" "... the message names what was missing"
umount "$NODE/ro-root"

vcs_cleanup
node_down "vcs-rootfs"
done_testing
