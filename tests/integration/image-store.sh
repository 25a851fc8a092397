#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The image store against what other tools write and what a hostile file or a
# container does (issue 9 items 5, 9, 15 and 16; THREATS 22, 29):
# - layouts made by umoci (its layers name the root "/"), by skopeo from a
#   docker-archive, by tar -C DIR . (oci-archive: and rootfs:) import and run;
#   absolute names land inside the root, ".." and a symlink named "/" do not;
# - a tree in the store changed after import (a file added, one rewritten) is
#   found and unpacked again by the next import and by run --image, and what
#   a container writes into its root reaches no later container of the image;
# - a FIFO index.json (oci-archive: and oci:) is refused at once, not waited
#   on; a blob, or blobs/sha256, that is a symlink out of the layout is refused;
# - --max-image-size and "maxImageSize": an image over the limit is refused
#   (by what it declares, or while unpacking), nothing of it left in the store.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh" || { echo "Bail out! cannot load tests/lib/registry.sh"; exit 1; }
node_sandbox "$@"
need_tools skopeo umoci python3 tar gzip sha256sum dpkg

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
W=$KM_SCRATCH/store-test
mkdir -p "$W/rootfs/bin"
cp /bin/busybox "$W/rootfs/bin/busybox" || { echo "Bail out! cannot copy /bin/busybox"; exit 1; }

# The test writes into the tree it gets: anything but a tree in the test's own
# store would write into the machine (an empty answer made it /bin/busybox).
# rootfs_of JSON: sets tree.
rootfs_of() {
        local t
        t=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rootfs"])' "$1" 2>/dev/null)
        if [[ -z $t || $t != "$KUBEMOUNT_STORE_DIR"/* || ! -d $t ]]; then
                echo "Bail out! no image root in the test's store: '$t' (import said: $1)"
                exit 1
        fi
        tree=$t
}
# layer_of LAYOUT: the first layer digest (hex) of the layout's first image
layer_of() {
        python3 - "$1" <<'EOF'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/index.json"))["manifests"][0]["digest"].split(":")[1]
print(json.load(open(d + "/blobs/sha256/" + m))["layers"][0]["digest"].split(":")[1])
EOF
}
store_listing() { (cd "$KUBEMOUNT_STORE_DIR" && find rootfs sums tmp -maxdepth 1 | sort); }

# ---- item 5: what other tools write ----

# umoci insert ROOTFS / writes the root as an entry named "/".
umoci init --layout "$W/umoci" && umoci new --image "$W/umoci:t" && umoci insert --image "$W/umoci:t" "$W/rootfs" / &&
        umoci config --image "$W/umoci:t" --config.cmd=/bin/busybox --config.cmd=echo --config.cmd=umoci-ok ||
        not_ok "umoci could not build the layout"
layer=$(layer_of "$W/umoci")
holds "sanity: umoci's layer names the root '/'" sh -c "tar -tzf '$W/umoci/blobs/sha256/$layer' 2>/dev/null | grep -qx /"
check "image import oci: of a layout made by umoci insert ... /" km image import "oci:$W/umoci:t" local/umoci:1
run km run --image local/umoci:1
is "$RC:$OUT" "0:umoci-ok" "... and run --image runs it"

# A docker-archive made by hand (manifest.json, config, layer tar), copied by skopeo to an OCI layout.
mkdir -p "$W/da"
tar -C "$W/rootfs" -cf "$W/da/layer.tar" bin
cat >"$W/da/config.json" <<EOF
{"architecture": "$(dpkg --print-architecture)", "os": "linux",
 "config": {"Cmd": ["/bin/busybox", "echo", "docker-archive-ok"]},
 "rootfs": {"type": "layers", "diff_ids": ["sha256:$(sha256sum <"$W/da/layer.tar" | cut -d' ' -f1)"]}}
EOF
echo '[{"Config": "config.json", "RepoTags": ["local/da:1"], "Layers": ["layer.tar"]}]' >"$W/da/manifest.json"
tar -C "$W/da" -cf "$W/da.tar" manifest.json config.json layer.tar
skopeo --insecure-policy copy --quiet "docker-archive:$W/da.tar" "oci:$W/da-oci:t" || not_ok "skopeo copy docker-archive: failed"
check "image import oci: of a layout skopeo copied from a docker-archive" km image import "oci:$W/da-oci:t" local/da:1
run km run --image local/da:1
is "$RC:$OUT" "0:docker-archive-ok" "... and run --image runs it"

# tar -C DIR . : "./" names, as an OCI archive and as a root filesystem tarball.
tar -C "$W/umoci" -cf "$W/umoci.tar" .
check "image import oci-archive: of tar -C LAYOUT ." km image import "oci-archive:$W/umoci.tar:t" local/umoci-archive:1
tar -C "$W/rootfs" -czf "$W/rootfs.tar.gz" .
check "image import rootfs: of tar -C DIR ." km image import "rootfs:$W/rootfs.tar.gz" local/dot:1
run km run --image local/dot:1 -- /bin/busybox echo dot-ok
is "$RC:$OUT" "0:dot-ok" "... and run --image runs it"

# A NAME pinning a digest must name what is imported (the manifest, or the index it was chosen from).
wrong=sha256:0000000000000000000000000000000000000000000000000000000000000001
run km images
before=$OUT
run km image import "rootfs:$W/rootfs.tar.gz" "local/pin@$wrong"
is "$RC" 1 "image import rootfs: under a name pinning another digest: refused"
like "$ERR" "$wrong" "... the error names the pinned digest"
is "$(wc -l <<<"$ERR")" 1 "... in one line"
run km images
is "$OUT" "$before" "... and kubemount images is unchanged"
run km image import "oci:$W/umoci:t" "local/pin@$wrong"
is "$RC:$(km images)" "1:$before" "image import oci: under a name pinning another digest: refused, nothing recorded"
run km image import --json "rootfs:$W/rootfs.tar.gz" local/pin:probe
right=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["manifest"])' "$OUT")
like "$ERR$right" "sha256:" "sanity: the rootfs import's manifest digest"
check "image import rootfs: under a name pinning its manifest's digest" km image import "rootfs:$W/rootfs.tar.gz" "local/pin@$right"
run km run --image "local/pin@$right" -- /bin/busybox echo pin-ok
is "$RC:$OUT" "0:pin-ok" "... and run --image NAME@DIGEST runs it"
oci_right=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$W/umoci/index.json")
check "image import oci: under a name pinning the layout's manifest" km image import "oci:$W/umoci:t" "local/pin-oci@$oci_right"
check "rmi of it (the umoci checks below count that image's references)" km rmi "local/pin-oci@$oci_right"
rm -rf "$W/da" "$W/da.tar" "$W/da-oci" "$W/umoci.tar" "$W/rootfs.tar.gz" # the sandbox's tmpfs is small

# Absolute names (a host path among them) land inside the root; the host's file is untouched.
echo canary >"$W/canary"
python3 - "$W" <<'EOF' || not_ok "python3 could not write the layers"
import io, sys, tarfile
w = sys.argv[1]
def add(t, name, data=b"", type=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name)
    i.type, i.linkname, i.mode, i.size = type, link, 0o755, len(data)
    t.addfile(i, io.BytesIO(data))
with tarfile.open(w + "/abs.tar", "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "/", type=tarfile.DIRTYPE)
    add(t, "/bin", type=tarfile.DIRTYPE)
    add(t, "/bin/busybox", open(w + "/rootfs/bin/busybox", "rb").read())
    add(t, w + "/canary", b"inside\n")
    add(t, "/hard", type=tarfile.LNKTYPE, link=w + "/canary")
with tarfile.open(w + "/dotdot.tar", "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "../escape", b"out\n")
with tarfile.open(w + "/rootlink.tar", "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "/", type=tarfile.SYMTYPE, link="/etc")
EOF
run km image import --json "rootfs:$W/abs.tar" local/abs:1
is "$RC" 0 "image import of a layer with absolute names"
rootfs_of "$OUT"
is "$(cat "$W/canary")" canary "... the host file its name names is untouched"
is "$(cat "$tree/$W/canary" 2>&1)" inside "... the entry is inside the image's root"
run km run --image local/abs:1 -- /bin/busybox cat /hard
is "$RC:$OUT" "0:inside" "... and so is a hard link to an absolute target"
run km image import "rootfs:$W/dotdot.tar" local/dotdot:1
is "$RC" 1 "a layer with '../escape': refused"
like "$ERR" "'\.\.' refused" "... and says so"
holds "... nothing written beside the store" test ! -e "$NODE/escape" -a ! -e "$KUBEMOUNT_STORE_DIR/escape"
run km image import "rootfs:$W/rootlink.tar" local/rootlink:1
is "$RC" 1 "a symlink named '/': refused"
like "$ERR" "names the root" "... and says so"

# ---- item 9: a tree that differs from its image is unpacked again ----

run km image import --json "oci:$W/umoci:t" local/umoci:1
rootfs_of "$OUT"
sum=$(sha256sum <"$tree/bin/busybox")
t0=$(date +%s%N)
check "re-import of an unchanged image" km image import "oci:$W/umoci:t" local/umoci:1
diag "re-import of the unchanged image: $((($(date +%s%N) - t0) / 1000000)) ms"
echo '#!/bin/sh' >"$tree/bin/mount.nfs"
chmod 755 "$tree/bin/mount.nfs"
printf 'X' | dd of="$tree/bin/busybox" bs=1 seek=4096 conv=notrunc status=none
check "re-import after the store's tree was changed" km image import "oci:$W/umoci:t" local/umoci:1
holds "... the added file is gone" test ! -e "$tree/bin/mount.nfs"
is "$(sha256sum <"$tree/bin/busybox")" "$sum" "... the changed file has the image's bytes again"
holds "... no work left in tmp/" test -z "$(ls -A "$KUBEMOUNT_STORE_DIR/tmp")"

echo '#!/bin/sh' >"$tree/bin/mount.nfs"
run km run --image local/umoci:1 -- /bin/busybox sh -c 'test -e /bin/mount.nfs && echo present || echo absent'
is "$RC:$OUT" "0:absent" "run --image of a changed tree: unpacked again first (no registry needed)"

# A container writes into its root; the next container of the image does not see it (THREATS 29).
run km run --image local/umoci:1 -- /bin/busybox sh -c 'echo "#!/bin/sh" >/bin/mount.nfs; echo wrote'
diag "a container writing /bin/mount.nfs: exit $RC ($OUT $ERR)"
run km run --image local/umoci:1 -- /bin/busybox sh -c 'test -e /bin/mount.nfs && echo present || echo absent'
is "$RC:$OUT" "0:absent" "what a container wrote into its root is not in the next container of the image"
holds "... nor in the store's tree" test ! -e "$tree/bin/mount.nfs"
is "$(sha256sum <"$tree/bin/busybox")" "$sum" "... whose files have the image's bytes"
old=$(find "$KUBEMOUNT_STORE_DIR/rootfs" -maxdepth 1 -name "$(basename "$tree").old-*" | wc -l)
((old > 0)) && ok "the replaced trees are set aside ($old) for containers that may still run from them" ||
        not_ok "the replaced trees are set aside for containers that may still run from them"
check "rmi of the image's references" km rmi local/umoci:1 local/umoci-archive:1
is "$(find "$KUBEMOUNT_STORE_DIR/rootfs" "$KUBEMOUNT_STORE_DIR/sums" -maxdepth 1 -name "$(basename "$tree")*" | wc -l)" 0 \
        "... removes its tree, its record and the replaced trees (no container of it is left)"

# ---- item 15: FIFOs and symlinks in a layout ----

export KUBEMOUNT_STORE_DIR=$NODE/store2 # nothing in it yet: every blob is read from the layout
mkdir -p "$W/fifo"
cp -a "$W/umoci/blobs" "$W/umoci/oci-layout" "$W/fifo/"
mkfifo "$W/fifo/index.json"
tar -C "$W/fifo" -cf "$W/fifo.tar" .
run timeout 20 "$KUBEMOUNT" image import "oci-archive:$W/fifo.tar" local/fifo:1
is "$RC" 1 "oci-archive: whose index.json is a FIFO: refused at once (not hung)"
like "$ERR" "index.json: not a regular file" "... and says so"
run timeout 20 "$KUBEMOUNT" image import "oci:$W/fifo" local/fifo:1
is "$RC" 1 "oci: whose index.json is a FIFO: refused at once"
like "$ERR" "index.json: not a regular file" "... and says so"
run timeout 20 "$KUBEMOUNT" image import "oci-archive:$W/fifo" local/fifo:1
is "$RC" 1 "oci-archive: of a directory: refused"

cp -a "$W/umoci" "$W/symblob"
layer=$(layer_of "$W/symblob")
mv "$W/symblob/blobs/sha256/$layer" "$W/outside-blob"
ln -s "$W/outside-blob" "$W/symblob/blobs/sha256/$layer"
run km image import "oci:$W/symblob:t" local/symblob:1
is "$RC" 1 "a layer blob that is a symlink out of the layout (with the right bytes): refused"
like "$ERR" "symlink" "... and says so"
cp -a "$W/umoci" "$W/symdir"
mv "$W/symdir/blobs/sha256" "$W/outside-sha256"
ln -s "$W/outside-sha256" "$W/symdir/blobs/sha256"
run km image import "oci:$W/symdir:t" local/symdir:1
is "$RC" 1 "blobs/sha256 a symlink out of the layout: refused"
like "$ERR" "blobs/sha256/[0-9a-f]+: a symlink on the way" "... and says so"
cp -a "$W/umoci" "$W/nolayout"
rm "$W/nolayout/oci-layout"
run km image import "oci:$W/nolayout:t" local/nolayout:1
is "$RC" 1 "a layout without oci-layout: refused"
like "$ERR" "oci-layout" "... and says so"
holds "nothing of them is in the store" test -z "$(find "$KUBEMOUNT_STORE_DIR"/{rootfs,refs,tmp} -mindepth 1)"
rm -rf "$W/fifo" "$W/fifo.tar" "$W/symblob" "$W/symdir" "$W/nolayout" "$W/outside-blob" "$W/outside-sha256"

# ---- item 16: the image size limit ----

mkdir -p "$W/zeros"
head -c 6M /dev/zero >"$W/zeros/zeros"
tar -C "$W/zeros" -czf "$W/zeros.tar.gz" .
rm -rf "$W/zeros"
before=$(store_listing)
run km image import --max-image-size 4M "rootfs:$W/zeros.tar.gz" local/zeros:1
is "$RC" 1 "--max-image-size 4M: an image of a few KiB that unpacks to 6 MiB is refused"
like "$ERR" "more than its limit of 4194304 bytes" "... with the limit in the message"
is "$(store_listing)" "$before" "... and nothing of it is left in the store"
printf '{"maxImageSize": "4M"}\n' >"$W/config.json"
run env KUBEMOUNT_CONFIG="$W/config.json" "$KUBEMOUNT" image import "rootfs:$W/zeros.tar.gz" local/zeros:1
is "$RC" 1 "\"maxImageSize\": \"4M\" in config.json: refused too"
printf '{"maxImageSize": 4194304}\n' >"$W/config.json"
run env KUBEMOUNT_CONFIG="$W/config.json" "$KUBEMOUNT" image import "rootfs:$W/zeros.tar.gz" local/zeros:1
like "$RC:$ERR" "^1:.*limit of 4194304 bytes" "\"maxImageSize\" as a number of bytes: the same"
printf '{"maxImageSize": "lots"}\n' >"$W/config.json"
run env KUBEMOUNT_CONFIG="$W/config.json" "$KUBEMOUNT" image import "rootfs:$W/zeros.tar.gz" local/zeros:1
is "$RC" 2 "an invalid \"maxImageSize\": a usage error"
like "$ERR" "maxImageSize" "... naming the setting"
run km image import --max-image-size 12Q "rootfs:$W/zeros.tar.gz" local/zeros:1
is "$RC" 2 "--max-image-size 12Q: a usage error"
check "--max-image-size 8M: the same image fits" km image import --max-image-size 8M "rootfs:$W/zeros.tar.gz" local/zeros:1
# Declared sizes: refused before a byte of the layers is read.
registry_test_image "$W/random" || not_ok "umoci could not build the test image"
run km image import --max-image-size 1M "oci:$W/random:test" local/random:1
is "$RC" 1 "--max-image-size 1M: an image whose layers declare 2 MB is refused"
like "$ERR" "over the image size limit of 1048576 bytes" "... before fetching them"
holds "... no layer of it in the store" test ! -e "$KUBEMOUNT_STORE_DIR/blobs/sha256/$(layer_of "$W/random")"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "image-store"
done_testing
