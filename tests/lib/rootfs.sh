# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# A small root filesystem for test VCS containers (kubemount run), sourced by
# the integration tests, the demo and the benchmarks:
#
#     source tests/lib/rootfs.sh
#     rootfs_build [DIR] || exit 1     # sets ROOTFS=DIR
#
# or run as a script, which prints the directory:
#
#     ROOTFS=$(bash tests/lib/rootfs.sh [DIR])
#
# DIR defaults to $KM_BUILD_DIR/test-rootfs, else /tmp/kubemount-rootfs-$UID.
# A DIR whose .complete records the same inputs (this file, tests/lib/ctr/*.c,
# the host's busybox, FUSE tools and their libraries, gcc's version) and the
# same tree (names, types, modes, sizes, times) is reused; otherwise it is
# built anew in DIR.new.XXXXXX and renamed into place (under a lock, DIR.lock),
# in a few seconds.  Nothing is mounted.
#
# Contents:
#   /bin/busybox (busybox-static) and applet links: ROOTFS_APPLETS
#   /usr/bin/bindfs, squashfuse, fusermount3 (not setuid) with every shared
#     library ldd names, at the same paths, and the dynamic loader
#   /usr/bin/probe, orphans, zombies, tiocsti: static test programs built from
#     tests/lib/ctr/*.c (see the comment at the top of each)
#   empty /proc /sys /dev /tmp /etc /root /run /var/lib/kubelet /mnt /srv /data
#     (/mnt, /srv, /data and /var/lib/kubelet are mount points for --mount:
#     tests never need to create a directory in the image)
#   /etc/passwd, /etc/group with root; /etc/kubemount-test-rootfs, a marker
#     that commands which write or mount check first ($VCS_GUARD), so that a
#     kubemount that failed to enter the image cannot touch the machine
# Directories 0755 (/tmp 1777), files owned by root.
#
# A container that writes into the image changes its tree: the next
# rootfs_build rebuilds it.  Tests that need a modified image (THREATS 19)
# copy it: rootfs_copy DEST.
#
# The second part of this file is for the vcs-*.sh integration tests (after
# tests/lib/node.sh): vcs_setup, vcs_agent_start, vcs_agent_pids, km, vcs_run,
# vcs_json, vcs_status, vcs_pid, vcs_wait_status, vcs_gone, vcs_logs_has,
# vcs_cleanup, holds, with_stdin, now_ms, VCS_GUARD; for routing tests
# rootfs_mount_tarball, rootfs_mount_image, configmap_swap, routed_digest.

ROOTFS_APPLETS=(sh cat ls sleep true false echo mount umount mkdir id grep stat seq kill ps head wc env cut
        readlink touch rm chmod dd nproc hostname pwd tr sed printf test tail sort uniq xargs ln cp mv
        rmdir find md5sum sha256sum timeout usleep)
ROOTFS_FUSE_TOOLS=(bindfs squashfuse fusermount3)
ROOTFS_PROGRAMS=(probe orphans zombies tiocsti)
ROOTFS_DIRS=(bin usr/bin usr/sbin sbin lib lib64 proc sys dev tmp etc root run var/lib/kubelet mnt srv data)

_ROOTFS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

rootfs_default_dir() {
        if [[ -n ${KM_BUILD_DIR:-} ]]; then
                echo "$KM_BUILD_DIR/test-rootfs"
        else
                echo "/tmp/kubemount-rootfs-$UID"
        fi
}

_rootfs_err() { echo "rootfs_build: $*" >&2; }

# The shared libraries (and loader) a dynamic executable needs, one a line.
_rootfs_libs() { # EXE
        local out
        out=$(ldd "$1" 2>&1) || {
                # A static executable needs none.
                [[ $out == *"not a dynamic executable"* ]] && return 0
                _rootfs_err "ldd $1: $out"
                return 1
        }
        if [[ $out == *"not found"* ]]; then
                _rootfs_err "ldd $1: a library is missing: $out"
                return 1
        fi
        awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' <<<"$out"
}

# The host files the image is made of, one a line (tools, then libraries).
_rootfs_host_files() {
        local t p
        [[ -x /bin/busybox ]] || {
                _rootfs_err "/bin/busybox is missing (Debian package busybox-static; scripts/deps installs it)"
                return 1
        }
        echo /bin/busybox
        for t in "${ROOTFS_FUSE_TOOLS[@]}"; do
                p=$(command -v "$t") || {
                        _rootfs_err "$t is not installed (scripts/deps installs it)"
                        return 1
                }
                echo "$p"
                _rootfs_libs "$p" || return 1
        done
}

# What the image is built from: a change in any of these rebuilds it.
_rootfs_inputs() {
        local files f
        files=$(_rootfs_host_files) || return 1
        echo "format 1"
        echo "gcc $(gcc -dumpfullversion 2>/dev/null || echo none)"
        (cd "$_ROOTFS_LIB_DIR" && sha256sum rootfs.sh ctr/*.c) || return 1
        while read -r f; do
                sha256sum "$(realpath "$f")" | sed "s|  .*|  $f|" || return 1
        done <<<"$(sort -u <<<"$files")"
}

# The built tree, so that a container that wrote into the image is noticed.
_rootfs_tree() { # DIR
        (cd "$1" && find . -mindepth 1 -path ./.complete -prune -o -printf '%y %m %U %G %s %T@ %p %l\n' | LC_ALL=C sort)
}

_rootfs_fingerprint() { # DIR INPUTS
        printf '%s\n--\n%s\n' "$2" "$(_rootfs_tree "$1" | sha256sum)"
}

_rootfs_copy_exe() { # SRC DEST: a file with its content, mode 0755, no setuid
        cp -L --remove-destination "$1" "$2" && chmod 0755 "$2"
}

_rootfs_make() { # DIR
        local dir=$1 d a t p lib files pids=() rc=0
        for d in "${ROOTFS_DIRS[@]}"; do
                mkdir -p "$dir/$d" || return 1
        done
        chmod 0755 "$dir" "$dir"/* "$dir/usr/bin" "$dir/var" "$dir/var/lib" "$dir/var/lib/kubelet" || return 1
        chmod 1777 "$dir/tmp" || return 1
        _rootfs_copy_exe /bin/busybox "$dir/bin/busybox" || return 1
        for a in "${ROOTFS_APPLETS[@]}"; do
                ln -s busybox "$dir/bin/$a" || return 1
        done
        for t in "${ROOTFS_FUSE_TOOLS[@]}"; do
                p=$(command -v "$t") || return 1
                _rootfs_copy_exe "$p" "$dir/usr/bin/$t" || return 1
                files=$(_rootfs_libs "$p") || return 1
                while read -r lib; do
                        [[ -n $lib ]] || continue
                        mkdir -p "$dir$(dirname "$lib")" &&
                                cp -L --remove-destination "$lib" "$dir$lib" && chmod 0755 "$dir$lib" || return 1
                done <<<"$files"
        done
        printf 'root:x:0:0:root:/root:/bin/sh\n' >"$dir/etc/passwd" &&
                printf 'root:x:0:\n' >"$dir/etc/group" &&
                echo "kubemount test rootfs (tests/lib/rootfs.sh)" >"$dir/etc/kubemount-test-rootfs" &&
                chmod 0644 "$dir/etc/passwd" "$dir/etc/group" "$dir/etc/kubemount-test-rootfs" || return 1
        command -v gcc >/dev/null || {
                _rootfs_err "gcc is not installed"
                return 1
        }
        for p in "${ROOTFS_PROGRAMS[@]}"; do
                gcc -static -O2 -Wall -o "$dir/usr/bin/$p" "$_ROOTFS_LIB_DIR/ctr/$p.c" 2>"$dir/.gcc-$p.log" &
                pids+=($!)
        done
        for p in "${!pids[@]}"; do
                if ! wait "${pids[$p]}"; then
                        _rootfs_err "gcc -static ${ROOTFS_PROGRAMS[$p]}.c failed: $(cat "$dir/.gcc-${ROOTFS_PROGRAMS[$p]}.log")"
                        rc=1
                fi
                rm -f "$dir/.gcc-${ROOTFS_PROGRAMS[$p]}.log"
        done
        ((rc == 0)) || return 1
        if ((EUID == 0)); then
                chown -R -h 0:0 "$dir" || return 1
        fi
}

# rootfs_build [DIR]: builds or reuses the image; sets ROOTFS.  Messages on
# stderr only.
rootfs_build() {
        local dir=${1:-$(rootfs_default_dir)} inputs tmp old lockfd rc
        dir=${dir%/}
        [[ $dir == /* ]] || dir=$PWD/$dir
        # Never replace a directory that is not ours.
        if [[ $dir == / || (-e $dir && ! -f $dir/.complete && -n $(ls -A "$dir" 2>/dev/null)) ]]; then
                _rootfs_err "$dir exists and is not an image rootfs_build made: not replacing it"
                return 1
        fi
        mkdir -p "$(dirname "$dir")" || return 1
        inputs=$(_rootfs_inputs) || return 1
        exec {lockfd}>"$dir.lock" || return 1
        flock "$lockfd" || {
                exec {lockfd}>&-
                return 1
        }
        if [[ -f $dir/.complete && ! -L $dir && ! -L $dir/.complete ]] &&
                [[ $(<"$dir/.complete") == "$(_rootfs_fingerprint "$dir" "$inputs")" ]]; then
                exec {lockfd}>&-
                ROOTFS=$dir
                return 0
        fi
        # Left by a build that was killed (we hold the lock).
        rm -rf --one-file-system "$dir".new.* "$dir".old.* 2>/dev/null
        tmp=$(mktemp -d "$dir.new.XXXXXX") || {
                exec {lockfd}>&-
                return 1
        }
        _rootfs_make "$tmp"
        rc=$?
        if ((rc == 0)); then
                _rootfs_fingerprint "$tmp" "$inputs" >"$tmp/.complete" || rc=1
        fi
        if ((rc == 0)) && [[ -e $dir || -L $dir ]]; then
                old=$dir.old.$$
                mv -T "$dir" "$old" && rm -rf --one-file-system "$old" || rc=1
        fi
        if ((rc == 0)); then
                mv -T "$tmp" "$dir" || rc=1
        fi
        ((rc == 0)) || rm -rf --one-file-system "$tmp"
        exec {lockfd}>&-
        ((rc == 0)) || {
                _rootfs_err "could not build $dir"
                return 1
        }
        ROOTFS=$dir
}

# rootfs_copy DEST: a copy of the built image (rootfs_build first) that a test
# may change; DEST must not exist.
rootfs_copy() {
        [[ -n ${ROOTFS:-} && -f $ROOTFS/.complete ]] || rootfs_build || return 1
        [[ ! -e $1 ]] || {
                _rootfs_err "rootfs_copy: $1 exists"
                return 1
        }
        cp -a "$ROOTFS" "$1" && rm -f "$1/.complete"
}

# need_images NAME...: bails out unless scripts/build-images made each image in
# $KM_BUILD_DIR/images (scripts/test builds them first).
need_images() {
        local i
        for i; do
                [[ -f ${KM_BUILD_DIR:-}/images/$i/index.json ]] ||
                        bail_out "no $KM_BUILD_DIR/images/$i (scripts/build-images $i makes it; scripts/test runs it)"
        done
}
# import_images NAME...: each of them into the node's store (after vcs_setup), a check each.
import_images() {
        local i
        for i; do check "image import oci:build/images/$i" km image import -q "oci:$KM_BUILD_DIR/images/$i"; done
}

# rootfs_mount_tarball WORKDIR NAME: WORKDIR/NAME.tar.gz, the test rootfs
# whose own `mount` (the command a routed mount runs) records its argv in
# $KUBELET_DIR/argv.NAME and then, for -t kmdaemon, mounts a FUSE daemon
# (bindfs, type fuse.kmdaemon: the broker allows it) on its last argument
# serving /image-name (NAME) as .served-by (which image serves a mount, read
# through it); for -t kmstray, the same beside its target instead, at
# ../stray-victim (another pod's volume: the broker must refuse it); with PASSWD_FD set (a
# cifs password kubemount hands over on an fd), what that fd holds goes to argv.NAME.fd; for any other type it fails as
# mount(8) does for an unknown type (exit 32).  The tarball has fixed times
# and owners: the same NAME, the same image manifest (image import rootfs:).
rootfs_mount_tarball() {
        local root=$1/$2
        mkdir -p "$1" && rootfs_copy "$root" || return 1
        echo "$2" >"$root/image-name"
        rm -f "$root/bin/mount"
        cat >"$root/bin/mount" <<EOF
#!/bin/sh
out=$KUBELET_DIR/argv.\$(cat /image-name)
: >"\$out"
for a; do printf '%s\n' "\$a" >>"\$out"; done
# A password handed over on an fd, as mount.cifs takes it (PASSWD_FD): what was on it.
[ -z "\${PASSWD_FD:-}" ] || { echo "PASSWD_FD=\$PASSWD_FD"; cat <&"\$PASSWD_FD"; } >"\$out.fd"
for a; do target=\$a; done
case " \$* " in
*" -t kmdaemon "*) /bin/busybox mkdir -p /tmp/served && /bin/busybox cp /image-name /tmp/served/.served-by &&
        exec bindfs -o subtype=kmdaemon /tmp/served "\$target" ;;
*" -t kmstray "*) /bin/busybox mkdir -p /tmp/served &&
        exec bindfs -o subtype=kmstray /tmp/served "\${target%/*}/stray-victim" ;;
esac
echo "mount: \$target: unknown filesystem type '\$2'." >&2
exit 32
EOF
        chmod 755 "$root/bin/mount"
        find "$root" -exec touch -h -d @0 {} + &&
                tar -C "$root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . |
                gzip -n >"$root.tar.gz" && rm -rf "$root"
}

# rootfs_mount_image WORKDIR NAME: imports local/NAME:1, the image of
# rootfs_mount_tarball.  Needs node_up and vcs_setup (the store, km).
rootfs_mount_image() {
        rootfs_mount_tarball "$1" "$2" &&
                km image import -q "rootfs:$1/$2.tar.gz" "local/$2:1" && rm -f "$1/$2.tar.gz"
}

# configmap_swap DIR VERSION KEY=VALUE...: a new version of a ConfigMap volume
# in DIR as the kubelet makes one: the keys in DIR/VERSION (a name starting
# with ..), then DIR/..data pointed at it by a rename, DIR/KEY -> ..data/KEY.
configmap_swap() {
        local dir=$1 version=$2 kv
        shift 2
        mkdir -p "$dir/$version" || return 1
        for kv; do
                printf '%s' "${kv#*=}" >"$dir/$version/${kv%%=*}" || return 1
        done
        ln -s "$version" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data" || return 1
        for kv; do
                [[ -L $dir/${kv%%=*} ]] || ln -s "..data/${kv%%=*}" "$dir/${kv%%=*}" || return 1
        done
}

# routed_digest TARGET: the image digest kubemount status --json shows for the
# routed mount on TARGET (nothing when it lists none).
routed_digest() {
        km status --json 2>/dev/null | python3 -c '
import json, sys
for m in json.load(sys.stdin).get("mounts", []):
    if m.get("target") == sys.argv[1]:
        print(m.get("digest") or "")' "$1"
}

# ---- for the vcs-*.sh integration tests (after tests/lib/node.sh) --------

# vcs_setup: after node_up.  The state directory inside the node's tmpfs
# (never the machine's /run), the rootfs in ROOTFS.  Bails out if the image
# cannot be built: a test without it would say nothing.
vcs_setup() {
        export KUBEMOUNT_STATE_DIR=$NODE/run/kubemount
        # An agent that run starts is the installed kubemount unless named: this build's.
        export KUBEMOUNT_AGENT_BINARY=$KUBEMOUNT
        mkdir -p "$NODE/run" || return 1
        rootfs_build || {
                echo "Bail out! cannot build the test rootfs (tests/lib/rootfs.sh)"
                exit 1
        }
        need_tools python3 # the --json checks
        "$KUBEMOUNT" run --help >/dev/null 2>&1 ||
                diag "'kubemount run --help' fails: this kubemount has no containers yet, the tests below fail"
}

# Prepended to an sh -c script that writes or mounts: it runs only inside
# the test image.
# shellcheck disable=SC2034 # used by the tests
VCS_GUARD='[ -e /etc/kubemount-test-rootfs ] || { echo "not in the test rootfs" >&2; exit 99; }; '

# km ARGS...: $KUBEMOUNT ARGS..., killed after $VCS_TIMEOUT seconds (30):
# a hung kubemount fails its test instead of the whole script.  After the
# first hang, later calls get 5 s, so that the script still ends within
# meson's timeout; the message is on stderr (ERR after run).
# A suite that sets KM_RUN_PRIVILEGED=1 tests --privileged containers (their own
# mounts, propagation of those): every `km run` of it gets --privileged.  The
# unprivileged default and its mount broker have suites of their own.
VCS_TIMEOUT=${VCS_TIMEOUT:-30}
km() {
        local limit=$VCS_TIMEOUT start=$SECONDS rc
        [[ -e $KM_SCRATCH/km-hung ]] && limit=5
        if [[ ${KM_RUN_PRIVILEGED:-0} == 1 ]]; then
                # before the command's "--" (or last), so that the rest reads as written
                local args=() arg seen=0 done=0
                for arg in "$@"; do
                        [[ $seen == 1 && $done == 0 && $arg == -- ]] && done=1 && args+=(--privileged)
                        args+=("$arg")
                        [[ $arg == run ]] && seen=1
                done
                [[ $seen == 1 && $done == 0 ]] && args+=(--privileged)
                set -- "${args[@]}"
        fi
        timeout -k 2 "$limit" "$KUBEMOUNT" "$@"
        rc=$?
        if ((rc == 124 || rc == 137)) && ((SECONDS - start >= limit)); then
                echo "kubemount $*: hung, killed after ${limit} s" >&2
                echo "kubemount $*: hung, killed after ${limit} s" >>"$KM_SCRATCH/km-hung"
        fi
        return $rc
}
# vcs_run ARGS...: kubemount run --rootfs $ROOTFS ARGS... (through km)
vcs_run() { km run --rootfs "$ROOTFS" "$@"; }
# with_stdin DATA CMD...: CMD with DATA (no newline added) on its stdin.
with_stdin() {
        local data=$1
        shift
        printf '%s' "$data" | "$@"
}
# now_ms: a monotonic-enough clock in milliseconds.
now_ms() {
        local t=${EPOCHREALTIME/[.,]/}
        echo $((10#$t / 1000))
}

# vcs_agent_start: `$KUBEMOUNT agent` in the foreground, tracked (node_down
# kills it), its output in $KM_SCRATCH/agent.log; AGENT=its pid.  Waits for
# $KUBEMOUNT_STATE_DIR/agent.sock.
vcs_agent_start() {
        spawn "$KUBEMOUNT" agent >>"$KM_SCRATCH/agent.log" 2>&1 </dev/null
        # shellcheck disable=SC2034 # used by the tests
        AGENT=$SPAWNED
        if wait_for 10 test -S "$KUBEMOUNT_STATE_DIR/agent.sock"; then
                ok "kubemount agent is listening on $KUBEMOUNT_STATE_DIR/agent.sock"
        else
                not_ok "kubemount agent is listening on $KUBEMOUNT_STATE_DIR/agent.sock"
                diag "$(cat "$KM_SCRATCH/agent.log" 2>&1)"
        fi
}

# vcs_agent_pids: processes running `kubemount agent` (any binary named
# kubemount whose first argument after the options is "agent") in our pid
# namespace.
vcs_agent_pids() {
        local p a x self
        self=$(readlink /proc/self/ns/pid)
        for p in /proc/[0-9]*; do
                # A container's PID 1 forked from the agent may carry its
                # argv: it is in a pid namespace of its own.
                [[ $(readlink "$p/ns/pid" 2>/dev/null) == "$self" ]] || continue
                mapfile -d '' -t a <"$p/cmdline" 2>/dev/null || continue
                ((${#a[@]} > 1)) || continue
                [[ ${a[0]##*/} == kubemount ]] || continue
                for x in "${a[@]:1}"; do
                        [[ $x == agent ]] && echo "${p#/proc/}" && break
                        [[ $x == -* ]] || break
                done
        done
}

# vcs_json PYTHON-EXPR: evaluates EXPR with c = the list of containers of
# `kubemount ps --json -a` (a list, or the first list in an object) and
# prints the result (nothing for None).  Exit 1 if the JSON does not parse.
vcs_json() {
        km ps --json -a 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("bad json: %s" % e, file=sys.stderr)
    sys.exit(1)
if isinstance(d, dict):
    d = d.get("containers", next((v for v in d.values() if isinstance(v, list)), []))
c = d
def get(name):
    return next((x for x in c if x.get("name") == name), None)
def status(name):
    x = get(name)
    if x is None:
        return None
    s = str(x.get("status", x.get("state", "")))
    if s.startswith("exited") and not any(ch.isdigit() for ch in s):
        for k in ("exit_code", "exitcode", "exit_status", "status_code", "code"):
            if k in x:
                s = "exited %s" % x[k]
                break
    return s
r = eval(sys.argv[1])
if r is not None:
    print(r if not isinstance(r, (list, dict)) else json.dumps(r))
' "$1"
}
# vcs_status NAME: running / exited N / nothing when NAME is unknown.
vcs_status() { vcs_json "status('$1')"; }
# vcs_pid NAME: the host pid of NAME's PID 1.
vcs_pid() { vcs_json "(get('$1') or {}).get('pid')"; }
# holds DESC CMD...: ok if CMD succeeds; unlike check, RC, OUT and ERR are
# left as the last run set them (for `holds DESC test ...` between a run and
# the checks of its output).
holds() {
        local desc=$1
        shift
        if "$@" >/dev/null 2>&1; then ok "$desc"; else
                not_ok "$desc"
                diag "failed: $*"
        fi
}
# vcs_gone PID: the process is gone (for wait_for).
vcs_gone() { ! kill -0 "$1" 2>/dev/null; }
# vcs_logs_has NAME ERE: kubemount logs NAME matches ERE (for wait_for).
vcs_logs_has() { km logs "$1" 2>/dev/null | grep -Eq "$2"; }
# vcs_wait_status NAME ERE [SECS]: waits (default 10 s) until NAME's status
# matches ERE; gives up after 2 s if ps does not know NAME at all.
vcs_wait_status() {
        local deadline=$((SECONDS + ${3:-10})) unknown=$((SECONDS + 2)) st
        until [[ ${st=$(vcs_status "$1")} =~ $2 ]]; do
                ((SECONDS < deadline)) || return 1
                [[ -n $st ]] || ((SECONDS < unknown)) || return 1
                sleep 0.05
                unset st
        done
}

# vcs_cleanup: rm -f of every container kubemount lists, then a check that
# none is left (and a note of every kubemount call that hung).  Before
# node_down, which counts leaked processes.
vcs_cleanup() {
        local names n
        [[ -e $KM_SCRATCH/km-hung ]] && diag "kubemount hung and was killed:" "$(cat "$KM_SCRATCH/km-hung")"
        names=$(vcs_json "' '.join(x.get('name','') for x in c)" 2>/dev/null)
        for n in $names; do
                km rm -f "$n" >/dev/null 2>&1
        done
        if names=$(vcs_json "' '.join(x.get('name','') for x in c)" 2>&1); then
                is "$names" "" "kubemount rm -f removed every container"
        else
                not_ok "kubemount rm -f removed every container"
                diag "ps --json -a: $names"
        fi
}

# As a script: build and print the directory.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
        rootfs_build "${1:-}" || exit 1
        echo "$ROOTFS"
fi
