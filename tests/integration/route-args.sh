#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 11, points 1 and 3: what a routed mount hands the image and where the
# image comes from.  Three images made from the test rootfs, whose own
# `mount` records its argv in the kubelet dir (the container has it at its
# own path) and then fails as mount(8) does for an unknown type, or, for type
# kmdaemon, mounts a FUSE daemon (fuse.kmdaemon) and keeps its container:
#   - the argv reaches the image's mount exactly as the kubelet gave it, the
#     secret in -o included, and the secret is nowhere else (ps, ps --json,
#     the state dir's files, kubemount's messages with -v);
#   - the image's status is the mount's (32), no container is left;
#   - precedence: command line > ConfigMap > vcs.d > defaults, each pair;
#   - a ConfigMap ..data swap changes new mounts only: a running daemon
#     keeps the image (digest) it was started from;
#   - policy host with no helper, container with a missing image, a type
#     nobody maps, a target outside the kubelet dir: clear errors, exit 32.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

node_up --no-kubelet
# The images' mount records its argv in the kubelet dir; an unprivileged container's root is
# a host id of its own, not the dir's owner.
chmod 1777 "$KUBELET_DIR"
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store KUBEMOUNT_VCS_DIR=$NODE/vcs.d
mkdir -p "$KUBEMOUNT_VCS_DIR" "$NODE/cm" "$KUBELET_DIR/pods/p/volumes"
W=$NODE/images # (the scratch tmpfs is too small for four root filesystems)

for i in img-cli img-cm img-file img-def; do
        check "image local/$i:1 (its mount records its argv)" rootfs_mount_image "$W" "$i"
done

T=$KUBELET_DIR/pods/p/volumes/t1
mkdir -p "$T"
SECRET=hunter2-routed
KM_V=("$KUBEMOUNT" --kubelet-dir="$KUBELET_DIR")

# 1. The argv as the kubelet gives it, through policy container.
run "${KM_V[@]}" -v --vcs-image kmtest=local/img-cli:1 mount -t kmtest -o "ro,user=u,password=$SECRET,x=a b" \
        "srv:/export" "$T"
is "$RC" 32 "a routed mount whose image fails: exit 32 (the image's status)"
like "$ERR" "unknown filesystem type 'kmtest'" "the image's mount(8) message reaches the caller"
is "$(cat "$KUBELET_DIR/argv.img-cli" 2>&1)" "-t
kmtest
-o
ro,user=u,password=$SECRET,x=a b
srv:/export
$T" "the image's mount got the kubelet's argv exactly, the secret included"
unlike "$OUT$ERR" "$SECRET" "the secret is not in kubemount's messages (-v)"
is "$(km ps -a --json | grep -c '"mount"')" 0 "no container is left"
if grep -rqs -- "$SECRET" "$KUBEMOUNT_STATE_DIR"; then
        not_ok "the secret is in no file of the state dir"
        diag "$(grep -rls -- "$SECRET" "$KUBEMOUNT_STATE_DIR")"
else
        ok "the secret is in no file of the state dir"
fi

# A cifs (or smb3) password never reaches an argv (/proc/PID/cmdline is everyone's): the image's
# mount gets the options without it, and mount.cifs's PASSWD_FD=0 with the password on its stdin.
for type in cifs smb3; do
        rm -f "$KUBELET_DIR"/argv.img-cli*
        run "${KM_V[@]}" -v --vcs-image "$type=local/img-cli:1" mount -t "$type" \
                -o "username=u,password=$SECRET,vers=3.0" //127.0.0.1/share "$T"
        is "$RC" 32 "[$type] a routed mount whose image fails: exit 32"
        is "$(sed -n 4p "$KUBELET_DIR/argv.img-cli" 2>&1)" "username=u,vers=3.0" "[$type] the image's mount got the options without the password"
        unlike "$(cat "$KUBELET_DIR/argv.img-cli" 2>&1)" "$SECRET" "[$type] ... nowhere in its argv"
        is "$(cat "$KUBELET_DIR/argv.img-cli.fd" 2>&1)" "PASSWD_FD=0
$SECRET" "[$type] ... but on its stdin, with PASSWD_FD=0 (mount.cifs reads it there)"
        unlike "$OUT$ERR" "$SECRET" "[$type] the password is not in kubemount's messages (-v)"
        check_fails "[$type] ... nor in any file of the state dir" grep -rqs -- "$SECRET" "$KUBEMOUNT_STATE_DIR"
done
rm -f "$KUBELET_DIR"/argv.img-cli*

# ceph: mount.ceph takes its key in the options (secret=), as the kubelet gives them; masked
# everywhere else.  (No Ceph cluster runs here: docs/storage.md.)
run "${KM_V[@]}" -v --vcs-image ceph=local/img-cli:1 mount -t ceph -o "name=admin,secret=$SECRET,mds_namespace=fs1" \
        127.0.0.1:6789:/ "$T"
is "$RC" 32 "[ceph] a routed mount whose image fails: exit 32"
is "$(sed -n 2p "$KUBELET_DIR/argv.img-cli"; sed -n 4p "$KUBELET_DIR/argv.img-cli")" "ceph
name=admin,secret=$SECRET,mds_namespace=fs1" "[ceph] the image's mount -t ceph got the kubelet's options, secret= included"
unlike "$OUT$ERR" "$SECRET" "[ceph] the secret is not in kubemount's messages (-v)"
check_fails "[ceph] ... nor in any file of the state dir" grep -rqs -- "$SECRET" "$KUBEMOUNT_STATE_DIR"
rm -f "$KUBELET_DIR"/argv.img-cli*

# An entry's options come after the kubelet's.
echo '{"mappings": [{"types": ["kmopt"], "image": "local/img-def:1", "policy": "container", "options": "nolock,x-km"}]}' \
        >"$KUBEMOUNT_VCS_DIR/30-opt.json"
run "${KM_V[@]}" mount -r -t kmopt -o vers=3 srv:/x "$T"
is "$(sed -n 4p "$KUBELET_DIR/argv.img-def" 2>&1)" "ro,vers=3,nolock,x-km" "an entry's options follow the kubelet's (-r first, as ro)"
run km vcs list
like "$OUT" "kmopt .*\(options nolock,x-km\)" "vcs list shows the entry's options"
rm "$KUBEMOUNT_VCS_DIR/30-opt.json"

# 2. Precedence, each pair: cli > configmap > file > default.
# (A ConfigMap's entry is never privileged: the daemon's fake client mounts fuse.kmdaemon, which
# the broker allows.)
cm_version() { # NAME TYPE IMAGE [DAEMON]
        configmap_swap "$NODE/cm" "$1" "$(printf 'mappings={"mappings": [{"types": ["%s"], "image": "%s", "daemon": %s}]}' \
                "$2" "$3" "${4:-false}")"
}
cm_version ..v1 kmtest local/img-cm:1
echo '{"mappings": [{"types": ["kmtest"], "image": "local/img-file:1", "policy": "container"}]}' \
        >"$KUBEMOUNT_VCS_DIR/10-kmtest.json"
served_by() { # ARGS...: the image whose mount ran for kubemount ARGS mount -t kmtest x $T
        rm -f "$KUBELET_DIR"/argv.*
        "${KM_V[@]}" "$@" mount -t kmtest x "$T" >/dev/null 2>&1
        local f
        for f in "$KUBELET_DIR"/argv.*; do [[ -e $f ]] && echo "${f##*/argv.}"; done
}
is "$(served_by --vcs-image kmtest=local/img-cli:1 --vcs-configmap "$NODE/cm")" img-cli "command line over ConfigMap"
is "$(served_by --kmtest_mount_container=local/img-cli:1)" img-cli "command line (--TYPE_mount_container) over vcs.d"
is "$(served_by --vcs-configmap "$NODE/cm")" img-cm "ConfigMap over vcs.d"
is "$(served_by)" img-file "vcs.d over the defaults"
rm "$KUBEMOUNT_VCS_DIR/10-kmtest.json"
is "$(served_by --vcs-image kmtest=local/img-def:1)" img-def "(the command line alone)"

# 3. A ..data swap changes new mounts only; a running daemon keeps its image.
cm_version ..v2 kmdaemon local/img-cm:1 true
D1=$KUBELET_DIR/pods/p/volumes/d1 D2=$KUBELET_DIR/pods/p/volumes/d2
mkdir -p "$D1" "$D2"
check "a daemon type's mount through the ConfigMap's image" "${KM_V[@]}" --vcs-configmap "$NODE/cm" mount \
        -t kmdaemon -o "token=$SECRET" x "$D1"
check "... is mounted on the host" is_mounted host "$D1"
like "$(sed -n 4p "$KUBELET_DIR/argv.img-cm")" "token=$SECRET" "... its image's mount got the secret"
unlike "$(km ps -a --json; km ps)" "$SECRET" "... which its running container shows nowhere in ps"
check_fails "... nor in any file of the state dir" grep -rqs -- "$SECRET" "$KUBEMOUNT_STATE_DIR"
digest_of() { # TARGET: the digest ps --json shows for its container
        km ps --json | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if (c.get("mount") or {}).get("target") == sys.argv[1]:
        print(c.get("digest", ""))' "$1"
}
DIG1=$(digest_of "$D1")
like "$DIG1" "^sha256:" "ps --json: the container of $D1 shows its image digest"
cm_version ..v3 kmdaemon local/img-file:1 true
check "after a ..data swap, a new mount" "${KM_V[@]}" --vcs-configmap "$NODE/cm" mount -t kmdaemon x "$D2"
DIG2=$(digest_of "$D2")
like "$DIG2" "^sha256:" "... its container shows its digest"
[[ $DIG1 != "$DIG2" ]] && ok "... from the new image ($DIG2)" || not_ok "... from the new image"
is "$(digest_of "$D1")" "$DIG1" "the running daemon of $D1 keeps its image"
run km rmi local/img-cm:1
is "$RC" 1 "rmi of the image that serves $D1: exit 1"
like "$ERR" "serves the mount $D1" "... naming the mount"
check "... and the image stays" sh -c "'$KUBEMOUNT' images | grep -q img-cm"
check "umount $D1" "${KM_V[@]}" umount "$D1"
check "umount $D2" "${KM_V[@]}" umount "$D2"
is "$(km ps -a --json | grep -c '"mount"')" 0 "umount removed both containers"
check "rmi now" km rmi local/img-cm:1

# 4. Clear errors.
echo '{"mappings": [{"types": ["kmtest"], "policy": "host"}]}' >"$KUBEMOUNT_VCS_DIR/20-host.json"
run "${KM_V[@]}" mount -t kmtest x "$T"
is "$RC" 32 "policy host with no mount.kmtest on the host: exit 32"
like "$ERR" "kmtest" "... naming the type"
rm "$KUBEMOUNT_VCS_DIR/20-host.json"
run "${KM_V[@]}" --vcs-image kmtest=local/missing:1 mount -t kmtest x "$T"
is "$RC" 32 "policy container, image not in the store: exit 32"
like "$ERR" "local/missing:1.*not in the store" "... naming the image"
like "$ERR" "kubemount pull|vcs pull" "... and how to get it"
run "${KM_V[@]}" mount -t kmnobody x "$T"
is "$RC" 32 "a type nobody maps and the kernel does not know: exit 32"
like "$ERR" "kubemount --vcs-image kmnobody=IMAGE" "... saying how to map it"
mkdir -p "$NODE/outside"
rm -f "$KUBELET_DIR"/argv.*
ln -s /etc "$KUBELET_DIR/pods/p/volumes/evil"
run "${KM_V[@]}" --vcs-image kmtest=local/img-cli:1 mount -t kmtest x "$KUBELET_DIR/pods/p/volumes/evil"
is "$RC" 32 "THREATS 1: a routed target through a symlink below the kubelet dir: exit 32"
like "$ERR" "symlink" "... saying why"
check_fails "... and the image's mount never ran" test -e "$KUBELET_DIR/argv.img-cli"
run "${KM_V[@]}" --vcs-image kmtest=local/img-cli:1 mount -t kmtest x "$NODE/outside"
is "$RC" 32 "a routed target outside the kubelet dir: exit 32"
like "$ERR" "only below the kubelet dir" "... saying why"

# A routed client mounts only at its own target (and below): not at another volume beside it.
mkdir -p "$KUBELET_DIR/pods/p/volumes/t-stray" "$KUBELET_DIR/pods/p/volumes/stray-victim"
run "${KM_V[@]}" --vcs-image kmstray=local/img-cli:1 mount -t kmstray x "$KUBELET_DIR/pods/p/volumes/t-stray"
unlike "$RC" "^0$" "a routed client that mounts beside its target, at another volume: it fails (exit $RC)"
like "$ERR" "the mount of image local/img-cli:1 exited with status" "... its mount(8)'s failure is the mount's"
like "$ERR" "failed to exec fusermount" "... its mount(2) was refused (libfuse then falls back to fusermount)"
check_fails "... nothing is mounted there" is_mounted host "$KUBELET_DIR/pods/p/volumes/stray-victim"

vcs_cleanup
agents=$(vcs_agent_pids)
# shellcheck disable=SC2086 # a list of pids: the agent the first command started, ended by node_down
[[ -n $agents ]] && node_track $agents
node_down "route-args"
done_testing
