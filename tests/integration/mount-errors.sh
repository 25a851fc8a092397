#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 8: a missing target, a file where a directory is needed, a target
# on a read-only filesystem, a target already mounted with the same source,
# a missing bind source, a filesystem the kernel does not have: each gives
# one clear line naming the path and a mount(8) exit code, and changes
# nothing.  Asked from the host and from the kubelet container.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
P=$KUBELET_DIR/pods/uid-1/volumes
RO=$NODE/readonly
mkdir -p "$P"/{dup,dir} "$RO/existing"
touch "$P/file"
mount --bind -o ro "$RO" "$RO"
"$KUBEMOUNT" mount -t tmpfs -o size=1m dup-src "$P/dup"

# fails WHERE DESC EXIT NAME-ERE WHY-ERE ARGS...
fails() {
        local where=$1 desc=$2 want=$3 name=$4 why=$5 before
        shift 5
        before=$(cat /proc/1/mountinfo)
        if [[ $where == host ]]; then run "$KUBEMOUNT" "$@"; else run in_kubelet "$KUBEMOUNT" "$@"; fi
        is "$RC" "$want" "[$where] $desc: exit $want"
        is "$(wc -l <<<"$ERR")" 1 "[$where] $desc: one line on stderr"
        like "$ERR" "$name" "[$where] $desc: names the path"
        like "$ERR" "$why" "[$where] $desc: says why"
        is "$OUT" "" "[$where] $desc: nothing on stdout"
        if [[ $(cat /proc/1/mountinfo) == "$before" ]]; then ok "[$where] $desc: mount table unchanged"; else
                not_ok "[$where] $desc: mount table unchanged"
                diag "$(diff <(echo "$before") /proc/1/mountinfo)"
        fi
}

for where in host kubelet; do
        fails "$where" "missing target" 32 "$P/missing" "does not exist" \
                mount -t tmpfs -o size=1m x "$P/missing"
        fails "$where" "a file as the target of a tmpfs" 32 "$P/file" "not a directory" \
                mount -t tmpfs -o size=1m x "$P/file"
        fails "$where" "a directory bound onto a file" 32 "$P/file" "not a directory|Not a directory" \
                mount --bind "$P/dir" "$P/file"
        fails "$where" "a missing target on a read-only filesystem" 32 "$RO/new" "does not exist" \
                mount -t tmpfs -o size=1m x "$RO/new"
        fails "$where" "already mounted with the same source" 32 "$P/dup" "already mounted" \
                mount -t tmpfs -o size=1m dup-src "$P/dup"
        fails "$where" "a missing bind source" 32 "$P/nonexistent" "does not exist" \
                mount --bind "$P/nonexistent" "$P/dir"
        fails "$where" "a filesystem type the kernel lacks (nfs)" 32 "$P/dir" "unknown filesystem type|nfs" \
                mount -t nfs -o vers=4 server.invalid:/export "$P/dir"
        fails "$where" "umount of a plain directory" 32 "$P/dir" "not mounted" umount "$P/dir"
        fails "$where" "umount of a missing path" 32 "$P/missing" "No such file|not mounted|does not exist" \
                umount "$P/missing"
done
is "$(mounts_in host "$P/dup" | wc -l)" 1 "the duplicate was not stacked"

# The kernel allows mounting on a directory of a read-only filesystem, and so
# does mount(8): kubemount too.
check "a tmpfs on an existing directory of a read-only filesystem mounts" \
        "$KUBEMOUNT" mount -t tmpfs -o size=1m x "$RO/existing"
check "... and unmounts" "$KUBEMOUNT" umount "$RO/existing"
# A different source on a mount point stacks, as with mount(8).
check "another source on a mount point stacks" "$KUBEMOUNT" mount -t tmpfs -o size=1m other-src "$P/dup"
is "$(mounts_in host "$P/dup" | wc -l)" 2 "... two mounts there now"
check "umount takes the top one" "$KUBEMOUNT" umount "$P/dup"
is "$(findmnt -no SOURCE --mountpoint "$P/dup" | tail -n1)" dup-src "... leaving the first"
"$KUBEMOUNT" umount "$P/dup"
umount "$RO"

node_down "mount errors"
done_testing
