#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2034 # KM_TODO is read by node.sh's TAP helpers
# The probes nsenter-compat answers in-process (nsenter-compat/kubelet-probes.c) against the
# real tools, on tricky paths: the kubelet's
#     findmnt -o target,fstype --noheadings --first-only --target PATH
#     realpath -e PATH / realpath -m PATH
#     stat -L --printf=%F PATH
# run through the shim and through util-linux nsenter into the sandbox host
# (--mount=/proc/1/ns/mnt), both as "nsenter" found through PATH: stdout,
# stderr and exit status byte for byte.  Paths: spaces (vSphere's
# "[datastore1] ..."), a symlink to a mount point, a symlink chain, a dangling
# link, a missing path, a file, a directory that is not a mount point, /, two
# mounts stacked on one target, a FUSE mount (bindfs), a bind-mounted file, a
# long path, relative and unclean paths, non-ASCII and control characters.
# Then, with strace, that the common cases exec nothing.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

need_nsenter_pair
need_tools findmnt realpath stat strace bindfs
[[ -c /dev/fuse ]] || bail_out "no /dev/fuse (modprobe fuse)"

node_up --no-kubelet
D=$KM_SCRATCH/probes
mkdir -p "$D/real" "$D/shim"
ln -s "$REAL" "$D/real/nsenter"
ln -s "$SHIM" "$D/shim/nsenter"

# ---- the paths -------------------------------------------------------------
P=$NODE/probes
mkdir -p "$P"
mp() { mkdir -p "$2" && mount -t tmpfs -o size=1m "$1" "$2"; }
mp plain "$P/mnt"
mkdir -p "$P/mnt/sub/dir"
echo data >"$P/mnt/file"
: >"$P/mnt/empty"
SPACES="$P/[datastore1] kubevols/vol 1"
mp spaces "$SPACES"
mkdir "$SPACES/in side"
mkdir -p "$P/dir/not a mount"
ln -s mnt "$P/link-to-mnt"
ln -s "$P/mnt" "$P/abs-link-to-mnt"
ln -s link-3 "$P/link-1"
ln -s link-4 "$P/link-2"
ln -s link-2 "$P/link-3" # link-1 -> link-3 -> link-2 -> link-4 -> mnt
ln -s mnt "$P/link-4"
ln -s "$P/no/such/thing" "$P/dangling"
ln -s "$P/loop-b" "$P/loop-a"
ln -s "$P/loop-a" "$P/loop-b"
# Two mounts on one target: findmnt --first-only prints the one that comes
# first in the table, the lower.
mp lower "$P/stacked"
mount -t ramfs -o size=1m upper "$P/stacked"
# A file bind-mounted onto a file.
: >"$P/bound-file"
mount --bind "$P/mnt/file" "$P/bound-file"
# A long path (about 3,000 characters, under PATH_MAX) with a mount on it,
# and one longer than PATH_MAX.
long=$P/long
for i in $(seq 1 30); do long+=/$(printf 'component-%02d-%s' "$i" "$(printf '%.0sx' $(seq 1 86))"); done
mp long "$long"
toolong=$long
for i in $(seq 1 12); do toolong+=/$(printf 'y%.0s' $(seq 1 200)); done
# Non-ASCII and control characters: findmnt and realpath escape or quote them.
mp utf8 "$P/vol-ünïcödé"
mp tab "$P/tab"$'\t'"here"
mp newline "$P/new"$'\n'"line"
mkfifo "$P/fifo"
have_fuse=0
if command -v bindfs >/dev/null && [[ -c /dev/fuse ]]; then
        mkdir -p "$P/fuse-src/inner" "$P/fuse"
        spawn bindfs -f "$P/fuse-src" "$P/fuse"
        FUSE_PID=$SPAWNED
        wait_for 10 mountpoint -q "$P/fuse" && have_fuse=1
fi

# ---- the comparison --------------------------------------------------------
# same DESC PROG ARG...: PROG ARG... through both binaries; stdout, stderr and
# exit status must match.  Prints the real tool's answer on failure.
CASES=0
VIA=(--mount=/proc/1/ns/mnt)
LOCALE=(LC_ALL=C)
same() {
        local desc=$1 w bad=0
        shift
        CASES=$((CASES + 1))
        for w in real shim; do
                (cd "$P" && exec env "${LOCALE[@]}" PATH="$D/$w:$PATH" nsenter "${VIA[@]}" -- "$@" \
                        </dev/null >"$D/$w.out" 2>"$D/$w.err")
                echo $? >"$D/$w.rc"
        done
        cmp -s "$D/real.rc" "$D/shim.rc" || { bad=1 && diag "exit: real $(<"$D/real.rc"), shim $(<"$D/shim.rc")"; }
        cmp -s "$D/real.out" "$D/shim.out" ||
                { bad=1 && diag "stdout:" "$(diff -u --label real --label shim "$D/real.out" "$D/shim.out" | cat -A | head -12)"; }
        cmp -s "$D/real.err" "$D/shim.err" ||
                { bad=1 && diag "stderr:" "$(diff -u --label real --label shim "$D/real.err" "$D/shim.err" | cat -A | head -12)"; }
        if ((bad)); then not_ok "$desc"; else ok "$desc (exit $(<"$D/real.rc"))"; fi
}

# probe_all NAME PATH: the four probes on PATH.
probe_all() {
        local name=$1 path=$2
        same "$name: findmnt --target" findmnt -o target,fstype --noheadings --first-only --target "$path"
        same "$name: realpath -e" realpath -e "$path"
        same "$name: realpath -m" realpath -m "$path"
        same "$name: stat -L --printf=%F" stat -L --printf=%F "$path"
}

probe_all "a mount point" "$P/mnt"
probe_all "a mount point with spaces" "$SPACES"
probe_all "a dir with spaces below it" "$SPACES/in side"
probe_all "a directory that is not a mount point" "$P/dir/not a mount"
probe_all "a dir below a mount point" "$P/mnt/sub/dir"
probe_all "a file" "$P/mnt/file"
probe_all "an empty file" "$P/mnt/empty"
probe_all "a relative symlink to a mount point" "$P/link-to-mnt"
probe_all "an absolute symlink to a mount point" "$P/abs-link-to-mnt"
probe_all "a symlink chain" "$P/link-1"
probe_all "a path through a symlink chain" "$P/link-1/sub/dir"
probe_all "a dangling link" "$P/dangling"
probe_all "a symlink loop" "$P/loop-a"
probe_all "a missing path" "$P/missing/deeper"
probe_all "a missing last component" "$P/mnt/missing"
probe_all "a file used as a directory" "$P/mnt/file/x"
probe_all "/" /
probe_all "two mounts stacked on one target" "$P/stacked"
probe_all "a bind-mounted file" "$P/bound-file"
probe_all "a long path (~3,000 chars) mount point" "$long"
probe_all "a path longer than PATH_MAX" "$toolong"
probe_all "a trailing slash" "$P/mnt/"
probe_all "an unclean path (// and /./ and ..)" "$P//mnt/./sub/../sub/"
probe_all "a relative path" "mnt/sub"
probe_all "a relative path ." "."
probe_all "an empty path" ""
# Words the tools take for options ("-" is stdin to stat).
mkdir -p "$P/-e" "$P/-"
probe_all "a path '-e' (an option to realpath)" -e
probe_all "a path '-' (stdin to stat)" -
probe_all "a path '--'" --
probe_all "a relative path starting with '-'" -e/../-
probe_all "a non-ASCII mount point" "$P/vol-ünïcödé"
probe_all "a mount point with a tab" "$P/tab"$'\t'"here"
probe_all "a mount point with a newline" "$P/new"$'\n'"line"
probe_all "a character device" /dev/null
probe_all "a fifo" "$P/fifo"
probe_all "the proc mount" /proc/sys
probe_all "a magic link into proc (/proc/1/root)" /proc/1/root
if ((have_fuse)); then
        probe_all "a FUSE mount (bindfs)" "$P/fuse"
        probe_all "a dir in a FUSE mount" "$P/fuse/inner"
else
        not_ok "a FUSE mount (bindfs): bindfs did not mount $P/fuse"
fi
# The same probes by absolute path, as some callers run them.
same "findmnt by path (/usr/bin/findmnt)" /usr/bin/findmnt -o target,fstype --noheadings --first-only --target "$SPACES"
same "realpath by path (/usr/bin/realpath)" /usr/bin/realpath -e "$P/link-1"
same "stat by path (/usr/bin/stat)" /usr/bin/stat -L --printf=%F "$P/mnt"
# Not quite the probe: the shim must leave these to the real tools.
same "findmnt with other columns" findmnt -o target,fstype,source --noheadings --first-only --target "$P/mnt"
same "findmnt --target without --first-only" findmnt -o target,fstype --noheadings --target "$P/stacked"
same "realpath -e with two paths" realpath -e "$P/mnt" "$P/link-1"
same "realpath without an option" realpath "$P/link-1"
same "stat without -L" stat --printf=%F "$P/link-to-mnt"
same "stat -L with another format" stat -L --printf=%n "$P/mnt"
LOCALE=(LC_ALL=de_DE.UTF-8 LANGUAGE=de)
same "stat -L --printf=%F in German" stat -L --printf=%F "$P/mnt"
same "stat -L --printf=%F in German, a missing path" stat -L --printf=%F "$P/missing"
LOCALE=(LC_ALL=C)
# Chrooted (-r) into a root that has the tools: the tools see only the
# mounts below it, and the mount holding the root is not one of them.
R=$NODE/chroot
mkdir -p "$R/dir/not a mount"
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32; do
        if [[ -L $d ]]; then
                ln -s "$(readlink "$d")" "$R$d"
        elif [[ -d $d ]]; then
                mkdir -p "$R$d" && mount --bind -o ro "$d" "$R$d"
        fi
done
mkdir -p "$R/proc"
mount -t proc proc "$R/proc"
mp chroot-vol "$R/vol"
mkdir -p "$R/vol/sub"
ln -s /vol "$R/link-to-vol"
VIA=(--mount=/proc/1/ns/mnt -r"$R")
probe_all "chrooted: a mount point" /vol
probe_all "chrooted: a dir in it" /vol/sub
probe_all "chrooted: a symlink to it" /link-to-vol
probe_all "chrooted: a dir not a mount point" "/dir/not a mount"
probe_all "chrooted: the root, not a mount point" /
probe_all "chrooted: a read-only bind mount" /usr
# A program that does not exist is not run by util-linux nsenter (exit 127),
# whatever its name; findmnt fails without /proc.  The shim answers only for
# a tool that is there, and findmnt only where /proc is.
VIA=(--mount=/proc/1/ns/mnt -r"$R/vol")
probe_all "chrooted into a root without the tools" /
VIA=(--mount=/proc/1/ns/mnt)
same "a missing /nonexistent/findmnt" /nonexistent/findmnt -o target,fstype --noheadings --first-only --target "$P/mnt"
same "a missing /nonexistent/realpath" /nonexistent/realpath -e "$P/mnt"
same "a missing /nonexistent/stat" /nonexistent/stat -L --printf=%F "$P/mnt"
umount "$R/proc"
VIA=(--mount=/proc/1/ns/mnt -r"$R")
same "findmnt in a root without /proc" findmnt -o target,fstype --noheadings --first-only --target /vol
VIA=(--mount=/proc/1/ns/mnt)
umount "$R/vol" && for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32; do
        mountpoint -q "$R$d" && umount "$R$d"
done
# In a pod's mount namespace (its own root): a volume mounted in the host
# reaches the pod (HostToContainer).
pod_up a
V=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~empty-dir/vol
mp pod-vol "$V"
VIA=(--mount="/proc/${KM_CTR_PID[pod-a]}/ns/mnt" -r"/proc/${KM_CTR_PID[pod-a]}/root")
probe_all "in a pod: a volume" "$V"
probe_all "in a pod: its root" /
probe_all "in a pod: /proc" /proc
VIA=(--mount=/proc/1/ns/mnt)
umount "$V"
diag "$CASES probe invocations compared"

# ---- nothing is executed for the common cases ------------------------------
if command -v strace >/dev/null; then
        # execs CMD...: the execve calls that succeeded (execvp's tries
        # along PATH fail with ENOENT and do not count).
        execs() {
                strace -f -qq -o "$D/strace" -e trace=execve env LC_ALL=C "$SHIM" --mount=/proc/1/ns/mnt -- "$@" \
                        >/dev/null 2>&1
                grep -cE '^[0-9]+ +execve\(.* = 0$' "$D/strace"
        }
        # env + the shim = 2 execve.
        is "$(execs findmnt -o target,fstype --noheadings --first-only --target "$P/mnt")" 2 \
                "findmnt on a mount point: the shim execs nothing"
        is "$(execs findmnt -o target,fstype --noheadings --first-only --target "$SPACES")" 2 \
                "findmnt on a mount point with spaces: execs nothing"
        is "$(execs findmnt -o target,fstype --noheadings --first-only --target "$P/dir/not a mount")" 2 \
                "findmnt on a directory: execs nothing"
        is "$(execs realpath -e "$P/link-1")" 2 "realpath -e on a symlink chain: execs nothing"
        is "$(execs realpath -m "$P/mnt/sub")" 2 "realpath -m on an existing dir: execs nothing"
        is "$(execs stat -L --printf=%F "$P/mnt")" 2 "stat -L --printf=%F on a directory: execs nothing"
        is "$(execs stat -L --printf=%F "$P/mnt/file")" 2 "stat -L --printf=%F on a file: execs nothing"
        # Control: a case left to the real tool is seen to exec it.
        is "$(execs realpath -e "$P/dangling")" 3 "control: realpath -e on a dangling link execs realpath"
else
        not_ok "the shim execs nothing for the common probes: strace is not installed"
fi

if ((have_fuse)); then
        umount "$P/fuse"
        wait "$FUSE_PID" 2>/dev/null
fi
umount "$P/bound-file" "$P/stacked" "$P/stacked" "$long" "$P/vol-ünïcödé" "$P/tab"$'\t'"here" \
        "$P/new"$'\n'"line" "$SPACES" "$P/mnt"
node_down "probes"
done_testing
