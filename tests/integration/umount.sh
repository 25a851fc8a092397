#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kubemount umount: plain, -f, -l on a busy mount, -R on a tree of ~50 nested
# and sibling mounts (all gone, parent and neighbours untouched), --timeout on
# a busy mount (escalates to lazy), and "not mounted".
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
pod_up a
P=$KUBELET_DIR/pods/uid-1/volumes
mkdir -p "$P"/{plain,force,lazy,busy,empty}
km() { "$KUBEMOUNT" "$@"; }
cwd_is() { [[ $(readlink "/proc/$1/cwd") == "$2" ]]; }

for d in plain force; do
        km mount -t tmpfs -o size=1m "$d" "$P/$d"
done
check "umount of a tmpfs" km umount "$P/plain"
check_fails "... gone from the host" is_mounted host "$P/plain"
check_fails "... and from the pod" is_mounted pod:a "$P/plain"
check "umount -f of a tmpfs" km umount -f "$P/force"
check_fails "... gone" is_mounted host "$P/force"

run km umount "$P/empty"
is "$RC" 32 "umount of a plain dir: exit 32"
like "$ERR" "$P/empty: not mounted" "... and the kubelet's probe finds the words 'not mounted'"
# With --timeout each attempt runs in a worker process that reports back
# through a pipe: its answer must never be mistaken for success.
wrong=0
for _ in $(seq 100); do
        km umount --timeout=5 "$P/empty" 2>/dev/null
        (($? == 32)) || wrong=$((wrong + 1))
done
is "$wrong" 0 "umount --timeout of a plain dir: exit 32, 100 times out of 100"

# A busy mount: a process has its working directory in it.
km mount -t tmpfs -o size=1m lazy "$P/lazy"
(cd "$P/lazy" && exec sleep 1000) &
holder=$!
node_track "$holder"
wait_for 5 cwd_is "$holder" "$P/lazy"
run km umount "$P/lazy"
is "$RC" 32 "umount of a busy mount: exit 32"
like "$ERR" "busy" "... saying it is busy"
check "... still mounted" is_mounted host "$P/lazy"
check "umount -l of the busy mount" km umount -l "$P/lazy"
check_fails "... gone from the host" is_mounted host "$P/lazy"
check_fails "... and from the pod" is_mounted pod:a "$P/lazy"
check "... while its user goes on" kill -0 "$holder"
kill "$holder"
wait "$holder" 2>/dev/null

# --timeout on a busy mount: busy -> force -> lazy, each step on stderr.
km mount -t tmpfs -o size=1m busy "$P/busy"
(cd "$P/busy" && exec sleep 1000) &
holder=$!
node_track "$holder"
wait_for 5 cwd_is "$holder" "$P/busy"
run km umount --timeout=1 "$P/busy"
is "$RC" 0 "umount --timeout=1 of a busy mount: exit 0"
like "$ERR" "busy, retrying with force" "... reports the force step"
like "$ERR" "detaching lazily" "... then the lazy step"
check_fails "... gone" is_mounted host "$P/busy"
kill "$holder"
wait "$holder" 2>/dev/null

# -R: a tree of 50 mounts, nested and siblings, some stacked.
T=$P/tree
mkdir -p "$T" "$P/tree-sibling"
km mount -t tmpfs -o size=1m tree "$T"
for i in 1 2 3 4 5 6 7; do
        mkdir -p "$T/d$i"
        km mount -t tmpfs -o size=1m "t$i" "$T/d$i"
        for j in 1 2 3 4 5 6; do
                mkdir -p "$T/d$i/e$j"
                if ((j == 6)); then # a bind of a sibling, stacked twice
                        km mount --bind "$T/d$i/e1" "$T/d$i/e$j"
                        km mount -t tmpfs -o size=1m "s$i" "$T/d$i/e$j"
                else
                        km mount -t tmpfs -o size=1m "t$i$j" "$T/d$i/e$j"
                fi
        done
done
mkdir -p "$T/d1/e1/deep/er"
km mount -t tmpfs -o size=1m deep "$T/d1/e1/deep/er"
km mount -t tmpfs -o size=1m sibling "$P/tree-sibling"
# Under the shared kubelet dir the binds are peers, so propagation adds a
# few mounts of its own: count what is there.
n=$(mounts_in host "$T" | wc -l)
((n >= 50)) && ok "a tree of $n mounts under $T" || not_ok "a tree of at least 50 mounts under $T (got $n)"
is "$(mounts_in pod:a "$T" | wc -l)" "$n" "... propagated to the pod"
before=$(mount_count)
parent=$(findmnt -no ID --target "$P")
check "umount -R of the tree" km umount -R "$T"
is "$(mounts_in host "$T")" "" "-R: nothing left under $T in the host"
is "$(mounts_in pod:a "$T")" "" "-R: nor in the pod"
is "$(mounts_in kubelet "$T")" "" "-R: nor in the kubelet"
is "$(mount_count)" "$((before - n))" "-R: exactly $n mounts fewer"
check "-R: the sibling whose name starts like the tree is untouched" is_mounted host "$P/tree-sibling"
is "$(findmnt -no ID --target "$P")" "$parent" "-R: the parent mount is untouched"
run km umount -R "$T"
is "$RC" 32 "-R on a tree with nothing mounted: exit 32"
like "$ERR" "not mounted" "... 'not mounted'"
km umount "$P/tree-sibling"

node_down "umount"
done_testing
