#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What a VCS container can reach of the host:
#   31 run --mount SRC:DST sources below the kubelet dir are walked as mount
#      targets are: a symlink anywhere in SRC (to /etc, relative, reached
#      through a symlink to the kubelet dir or the magic link /proc/self/root),
#      and "..", are refused with the embedded launcher and with runc; a plain
#      directory binds; above the kubelet dir symlinks are followed as the
#      host has them; a source swapped between a directory and a symlink to
#      /etc during 30 runs never shows /etc;
#   17 the exec helper is not dumpable: between dropping to the container's
#      capabilities and execve it holds a copy of the agent's memory, which a
#      process of the container could otherwise open as /proc/PID/mem and
#      read (the agent's environment, with a canary in it).  Its execve is
#      held in a lookup on a FUSE mount whose daemon is stopped, so that the
#      window stays open for as long as the test needs; PID 1's memory
#      cannot be opened either, and /proc/PID/environ of both (which
#      CAP_SYS_ADMIN opens, dumpable or not) holds nothing of the agent's.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"
need_tools runc pgrep

node_up --no-kubelet
vcs_setup
# The agent's environment holds a canary: a container must never read it.
export KM_AGENT_CANARY=km-agent-canary-$$-$RANDOM
vcs_agent_start
unset KM_AGENT_CANARY
NL=$'\n'
DATA=$NODE/vcs-data
mkdir -p "$DATA" && echo "data of the node" >"$DATA/file"
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir/v
mkdir -p "$V/real" && echo "the volume" >"$V/real/f"
ln -s /etc "$V/sub"
ln -s real "$V/rel"
ln -s "$KUBELET_DIR" "$NODE/kubelet-link"
# kr ARGS...: run with the kubelet dir named, from the test image.
kr() { km --kubelet-dir="$KUBELET_DIR" run --rootfs "$ROOTFS" "$@"; }
# What a container prints of /mnt: ETC if it is the host's /etc.
SHOW='test -e /mnt/passwd && echo ETC; cat /mnt/f 2>/dev/null; echo ran'

# ---- 31: bind sources below the kubelet dir ----
# refused DESC SRC WHY [RUNTIME...]
refused() {
        local desc=$1 src=$2 why=$3
        shift 3
        run kr "$@" --mount "$src:/mnt" -- sh -c "$SHOW"
        is "$RC" 125 "[31] $desc: refused (exit 125)"
        like "$ERR" "(bind source|binds\[0\]\.source).*($why)" "[31] ... the message says why"
        unlike "$OUT" "ran" "[31] ... the container did not run"
}
for rt in embedded runc; do
        refused "[$rt] a symlink to /etc" "$V/sub" "'sub' is a symlink, refused below $KUBELET_DIR" --runtime $rt
        refused "[$rt] a file through a symlink" "$V/sub/hostname" "'sub' is a symlink" --runtime $rt
        refused "[$rt] a relative symlink that stays inside" "$V/rel" "'rel' is a symlink" --runtime $rt
        refused "[$rt] '..'" "$V/real/../sub" "must not contain \"..\"|'..' is not allowed below" --runtime $rt
        refused "[$rt] through a symlink to the kubelet dir" "$NODE/kubelet-link/pods/uid-1/volumes/kubernetes.io~empty-dir/v/sub" \
                "'sub' is a symlink" --runtime $rt
        refused "[$rt] through the magic link /proc/self/root" "/proc/self/root$V/sub" "'sub' is a symlink" --runtime $rt
        run kr --runtime $rt --mount "$V/real:/mnt" -- cat /mnt/f
        is "$RC:$OUT" "0:the volume" "[31 $rt] a plain directory of the volume binds"
done
# The clone bound is a peer of its source: a mount made below an rshared bind still reaches the host.
mkdir -p "$V/real/m"
for rt in embedded runc; do
        run kr --runtime $rt --mount "$KUBELET_DIR:/var/lib/kubelet:rshared" -- \
                sh -c "$VCS_GUARD"'mount -t tmpfs -o size=1m km-prop-'$rt' /var/lib/kubelet/'"${V#"$KUBELET_DIR"/}"'/real/m'
        is "$RC:$(findmnt -no SOURCE --mountpoint "$V/real/m")" "0:km-prop-$rt" \
                "[31 $rt] a mount below an rshared bind of the kubelet dir reaches the host"
        umount "$V/real/m" 2>/dev/null
done
ln -s "$DATA" "$NODE/data-link"
run kr --mount "$NODE/data-link:/mnt" -- cat /mnt/file
is "$RC:$OUT" "0:data of the node" "[31] above the kubelet dir a symlink is followed (the host's own paths)"

# A source swapped back and forth: every run binds the volume or is refused, none shows /etc.
mkdir -p "$V/swapdir" && echo "the volume" >"$V/swapdir/f"
(
        while :; do
                rm -rf "$V/swap" && ln -s /etc "$V/swap"
                sleep 0.002
                rm -f "$V/swap" && mkdir "$V/swap" && echo "the volume" >"$V/swap/f"
                sleep 0.002
        done
) 2>/dev/null &
swapper=$!
node_track "$swapper"
bad="" bound=0 refusals=0
for i in $(seq 1 30); do
        run kr --mount "$V/swap:/mnt" -- sh -c "$SHOW"
        if [[ $OUT == *ETC* || ($RC == 0 && $OUT != "the volume${NL}ran" && $OUT != ran) ]]; then
                bad+=" run $i: exit $RC, '$OUT';"
        elif ((RC == 0)); then
                bound=$((bound + 1))
        else
                refusals=$((refusals + 1))
        fi
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
is "$bad" "" "[31] a source swapped with a symlink to /etc during 30 runs: never /etc ($bound bound, $refusals refused)"

# ---- 17: the exec helper is not dumpable ----
run kr -d --name d1 --mount "$DATA:/srv" -- sh -c 'bindfs -f /srv /mnt & exec sleep 1000'
is "$RC:$OUT" "0:d1" "[17] a container with a FUSE mount on /mnt (bindfs)"
wait_for 10 km exec d1 -- test -e /mnt/file || not_ok "[17] bindfs serves /mnt"
bindfs=$(pgrep -x bindfs | head -n1)
like "$bindfs" '^[0-9]+$' "[17] bindfs runs ($bindfs)"
node_track "$bindfs"
kill -STOP "$bindfs"
# Held in execve: the lookup of /mnt/x waits for the stopped daemon.
km exec d1 -- /mnt/x >/dev/null 2>&1 &
held=$!
node_track "$held"
# From inside the container: the process that is still kubemount (not PID 1), and whether its memory
# can be opened (/proc/PID/mem: ptrace attach mode; what a dumpable process with our capabilities allows)
# and read where the agent's environment is.  /proc/PID/environ opens with CAP_SYS_ADMIN, which a VCS
# container has, dumpable or not (measured on 6.18): the strings themselves must be gone.
PEEK='env() {
        if tr "\0" "\n" <$1/environ 2>/dev/null | grep -q KM_AGENT_CANARY; then echo "$2: the agent canary"
        else echo "$2: no canary"; fi
}
mem() {
        if (exec 3<$1/mem) 2>/dev/null; then
                es=$(cut -d" " -f50 $1/stat)
                dd if=$1/mem bs=4096 skip=$((es / 4096)) count=2 2>/dev/null | tr "\0" "\n" |
                        grep -q KM_AGENT_CANARY && echo "$2: the agent canary" || echo "$2: readable"
        else
                echo "$2: denied"
        fi
}
for i in $(seq 1 100); do
        for p in /proc/[0-9]*; do
                n=${p#/proc/}
                [ "$n" = 1 ] || [ "$n" = $$ ] && continue
                grep -q kubemount $p/cmdline 2>/dev/null || continue
                echo "helper $n: $(grep CapEff $p/status)"
                mem $p "helper mem"
                mem /proc/1 "pid 1 mem"
                env $p "helper environ"
                env /proc/1 "pid 1 environ"
                exit 0
        done
        usleep 50000
done
echo "no helper"'
run km exec d1 -- sh -c "$PEEK"
like "$OUT" "helper" "[17] the exec helper's child is seen in the container while its execve waits"
like "$OUT" "helper mem: denied" "[17] ... it is not dumpable: its memory (a copy of the agent's) cannot be opened"
unlike "$OUT" "mem: the agent canary" "[17] ... the agent's environment is not read from it"
like "$OUT" "pid 1 mem: denied" "[17] PID 1's memory cannot be opened either"
like "$OUT" "helper environ: no canary${NL}pid 1 environ: no canary" \
        "[17] /proc/PID/environ of both shows nothing of the agent's environment"
kill -CONT "$bindfs"
wait "$held"
is "$?" 127 "[17] the held exec ends once the daemon goes on (/mnt/x: not found, 127)"
check "[17] rm -f d1" km rm -f d1

vcs_cleanup
node_down "vcs-confine"
done_testing
