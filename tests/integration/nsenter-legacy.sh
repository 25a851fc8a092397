#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A legacy containerized kubelet (KUBELET.md) runs every host command as
#     nsenter --mount=/rootfs/proc/1/ns/mnt -- /bin/mount ...
# Here nsenter is nsenter-compat, bound into node.sh's kubelet container at
# its build path, with KUBEMOUNT_KUBELET_DIR set to the node's kubelet dir.
# Each command of the legacy list must have the effect the kubelet expects
# in the host namespace, print nothing of its own on success and give the
# exit status util-linux nsenter (with the real tools) gives:
#   mount -t tmpfs (host, kubelet and pod see it), a bind mount as two calls
#   (bind, then bind,remount,ro: read-only), mount --bind P P + --make-rshared,
#   umount, umount -f, the "not mounted" probe, the systemd-run wrapped mount
#   (works although systemd is not PID 1), the systemd-run probe (fails as
#   the real one does), findmnt (paths with spaces), stat, realpath, mkdir,
#   touch, ls, sh -c "cat > F", chmod; the --target=1 --mount --wd=. form and
#   a CSI driver's /host/proc/1/ns/mnt.
# That mounts go through kubemount: strace sees no exec of mount, and a
# symlink below the kubelet dir is refused.  THREATS 4 through the shim:
# argument injection is rejected (exit 1) with no exec and no mount.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

need_nsenter_pair
SHIM=$(realpath "$SHIM")
SHIM_DIR=$(dirname "$SHIM")
# The real systemd-run is a control: it fails here (not booted with systemd).
need_tools strace systemd-run
have_strace=1

node_up
pod_up a
# The shim at the same path in the kubelet container (and in a CSI driver's).
bind_shim() {
        # shellcheck disable=SC2016 # expanded by the container's sh
        in_ctr "$1" sh -c 'mkdir -p "$2" && mount --bind -o ro "$1$2" "$2"' sh "$2" "$SHIM_DIR"
}
bind_shim kubelet /rootfs || { echo "Bail out! cannot bind the shim into the kubelet container"; exit 1; }
check "sanity: the shim runs in the kubelet container" in_kubelet "$SHIM" --version

ENV=(env LC_ALL=C KUBEMOUNT_KUBELET_DIR="$KUBELET_DIR")
HOSTNS=/rootfs/proc/1/ns/mnt
# shim CMD... / real CMD...: the kubelet's nsenter --mount=HOSTNS -- CMD...
shim() { in_kubelet "${ENV[@]}" "$SHIM" --mount=$HOSTNS -- "$@"; }
real() { in_kubelet "${ENV[@]}" "$REAL" --mount=$HOSTNS -- "$@"; }

# quiet_ok DESC CMD...: exit 0 and no output at all (the kubelet takes any
# output as part of its error messages).
quiet_ok() {
        local desc=$1
        shift
        run "$@"
        if ((RC == 0)) && [[ -z $OUT && -z $ERR ]]; then ok "$desc"; else
                not_ok "$desc"
                diag "exit $RC: $*" "stdout: $OUT" "stderr: $ERR"
        fi
}

# like_real DESC CMD...: CMD through the shim and through util-linux nsenter
# (with the real tools) gives the same stdout, stderr and exit status.
like_real() {
        local desc=$1 rc out err
        shift
        run real "$@"
        rc=$RC out=$OUT err=$ERR
        run shim "$@"
        if [[ $RC == "$rc" && $OUT == "$out" && $ERR == "$err" ]]; then ok "$desc (exit $RC)"; else
                not_ok "$desc"
                diag "util-linux: exit $rc" "$out" "$err" "shim: exit $RC" "$OUT" "$ERR"
        fi
}

# execs_of NAME CMD...: EXECS, how many times CMD (traced from the host)
# successfully exec'd a program called NAME, and SHIM_EXECS, how many times
# the shim (so that a broken trace does not pass for "none").
execs_of() {
        local name=$1
        shift
        strace -f -qq -o "$KM_SCRATCH/strace" -e trace=execve "$@" >/dev/null 2>&1
        SHIM_EXECS=$(grep -E "execve\(\"$SHIM\"" "$KM_SCRATCH/strace" | grep -c ' = 0$')
        EXECS=$(grep -E "execve\(\"([^\"]*/)?$name\"" "$KM_SCRATCH/strace" | grep -c ' = 0$')
}

VOLS=$KUBELET_DIR/pods/uid-1/volumes
V=$VOLS/kubernetes.io~empty-dir/cache
mkdir -p "$V"

# ---- mount -t tmpfs, umount --------------------------------------------------
quiet_ok "mount -t tmpfs: exit 0, no output" shim /bin/mount -t tmpfs -o size=1m,mode=0750 legacy-vol "$V"
check "... mounted in the host" is_mounted host "$V"
check "... seen by the kubelet" is_mounted kubelet "$V"
check "... and by the pod" is_mounted pod:a "$V"
is "$(findmnt -no SOURCE,FSTYPE --mountpoint "$V")" "legacy-vol tmpfs" "... source and type as asked"
is "$(stat -c %a "$V")" 750 "... options as asked (mode=0750)"
quiet_ok "umount TARGET: exit 0, no output" shim /bin/umount "$V"
check_fails "... gone from the host" is_mounted host "$V"
check_fails "... and from the pod" is_mounted pod:a "$V"

if ((have_strace)); then
        IN_KUBELET=(nsenter -t "${KM_CTR_PID[kubelet]}" -m -r -w --) # in_kubelet, for strace
        execs_of mount "${IN_KUBELET[@]}" "${ENV[@]}" "$SHIM" --mount=$HOSTNS -- /bin/mount -t tmpfs -o size=1m routed "$V"
        is "$EXECS/$SHIM_EXECS" 0/1 "the mount went through kubemount: no exec of /bin/mount"
        check "... and it is mounted" is_mounted host "$V"
        execs_of umount "${IN_KUBELET[@]}" "${ENV[@]}" "$SHIM" --mount=$HOSTNS -- /bin/umount "$V"
        is "$EXECS/$SHIM_EXECS" 0/1 "the umount too: no exec of /bin/umount"
        check_fails "... and it is gone" is_mounted host "$V"
else
        not_ok "mounts go through kubemount (no exec of /bin/mount): strace is not installed"
fi

# ---- bind mounts ---------------------------------------------------------------
SRC=$KUBELET_DIR/plugins/legacy/src
B=$VOLS/kubernetes.io~local-volume/bound
mkdir -p "$SRC" "$B"
echo bound >"$SRC/file"
quiet_ok "bind mount, call 1: -o bind" shim /bin/mount -o bind "$SRC" "$B"
quiet_ok "bind mount, call 2: -o bind,remount,ro" shim /bin/mount -o bind,remount,ro "$SRC" "$B"
like "$(findmnt -no OPTIONS --mountpoint "$B")" "^ro," "... read-only in the host"
check_fails "... writing there fails in the host" touch "$B/new"
# A remount changes one mount's flags and does not propagate: the pod's copy
# is what util-linux mount leaves there too.
B2=$VOLS/kubernetes.io~local-volume/bound-by-util-linux
mkdir -p "$B2"
real /bin/mount -o bind "$SRC" "$B2" && real /bin/mount -o bind,remount,ro "$SRC" "$B2"
is "$(in_pod a findmnt -no OPTIONS --mountpoint "$B" | cut -d, -f1)" \
        "$(in_pod a findmnt -no OPTIONS --mountpoint "$B2" | cut -d, -f1)" "... the pod's copy as with util-linux mount"
umount "$B2"
is "$(in_pod a cat "$B/file" 2>&1)" bound "... the pod reads the source's file"
check "... the source stays writable" touch "$SRC/new"
quiet_ok "umount of the bind mount" shim /bin/umount "$B"
check_fails "... gone" is_mounted host "$B"

# The kubelet's root dir setup: bind P onto itself, then make it rshared.
# P lies on the node's private tmpfs, as on a distro whose / is private.
S=$NODE/kubelet-root
mkdir -p "$S"
quiet_ok "mount --bind P P" shim /bin/mount --bind "$S" "$S"
is "$(findmnt -no PROPAGATION --mountpoint "$S" | tail -1)" private "... P is a private mount point in the host"
quiet_ok "mount --make-rshared P" shim /bin/mount --make-rshared "$S"
is "$(findmnt -no PROPAGATION --mountpoint "$S" | tail -1)" shared "... P is shared in the host"
quiet_ok "umount P" shim /bin/umount "$S"
check_fails "... gone" is_mounted host "$S"

# ---- umount -f and the "not mounted" probe -------------------------------------
shim /bin/mount -t tmpfs -o size=1m force "$V"
quiet_ok "umount -f TARGET" shim umount -f "$V"
check_fails "... gone" is_mounted host "$V"
E=$NODE/kubelet-detect-safe-umount123
mkdir -p "$E"
run shim umount "$E"
rc=$RC
like "$OUT$ERR" "not mounted" "umount <empty tmpdir>: the output says 'not mounted'"
run real umount "$E"
is "$rc" "$RC" "... with util-linux umount's exit status ($RC)"
like "$OUT$ERR" "not mounted" "... (control: util-linux says 'not mounted' too)"

# ---- systemd-run --scope ---------------------------------------------------------
SR=(/bin/systemd-run "--description=Kubernetes transient mount for $V" --scope --)
run real "${SR[@]}" /bin/mount -t tmpfs -o size=1m scoped "$V"
if ((RC != 0)) && ! is_mounted host "$V"; then ok "control: the real systemd-run fails here (exit $RC)"; else
        not_ok "control: the real systemd-run fails here"
        diag "exit $RC: $OUT $ERR"
        is_mounted host "$V" && umount "$V"
fi
quiet_ok "systemd-run ... --scope -- /bin/mount -t tmpfs: routed, exit 0" shim "${SR[@]}" /bin/mount -t tmpfs -o size=1m scoped "$V"
check "... mounted in the host" is_mounted host "$V"
check "... and in the pod" is_mounted pod:a "$V"
quiet_ok "systemd-run ... --scope -- /bin/umount" shim /bin/systemd-run "--description=Kubernetes transient mount for $V" \
        --scope -- /bin/umount "$V"
check_fails "... gone" is_mounted host "$V"
quiet_ok "systemd-run-wrapped bind, call 1" shim "${SR[@]}" /bin/mount -o bind "$SRC" "$B"
quiet_ok "systemd-run-wrapped bind, call 2 (remount,ro)" shim "${SR[@]}" /bin/mount -o bind,remount,ro "$SRC" "$B"
like "$(findmnt -no OPTIONS --mountpoint "$B")" "^ro," "... read-only"
shim /bin/umount "$B"
like_real "the probe: systemd-run --description=Kubernetes systemd probe --scope true" \
        systemd-run "--description=Kubernetes systemd probe" --scope true
# A FUSE type is routed too: kubemount runs its helper in cgroups of its own,
# which is what the scope gave (fuse-survival.sh shows the daemon outliving
# the kubelet's cgroup).  sshfs is not installed: the helper fails.
run shim "${SR[@]}" /bin/mount -t fuse.sshfs -o ro u@h:/ "$V"
((RC != 0)) && ok "systemd-run-wrapped FUSE mount: routed; the missing sshfs fails it (exit $RC)" ||
        not_ok "systemd-run-wrapped FUSE mount: routed; the missing sshfs fails it"
unlike "$ERR" "booted with systemd" "... without calling systemd-run"
check_fails "... nothing mounted" is_mounted host "$V"

# ---- findmnt, stat, realpath -------------------------------------------------------
DS="$VOLS/kubernetes.io~vsphere-volume/[datastore1] kubevols/vol 1"
mkdir -p "$DS"
quiet_ok "mount on a path with spaces" shim /bin/mount -t tmpfs -o size=1m vsphere "$DS"
check "... in the host" is_mounted host "$DS"
# shellcheck disable=SC2054 # the commas belong to findmnt's column list
FM=(findmnt -o target,fstype --noheadings --first-only --target)
shim /bin/mount -t tmpfs -o size=1m probe "$V"
mkdir -p "$V/sub dir"
run shim "${FM[@]}" "$V"
is "$OUT|$RC" "$V tmpfs|0" "findmnt --target on a mount point: 'TARGET FSTYPE'"
like_real "... as findmnt prints it" "${FM[@]}" "$V"
run shim "${FM[@]}" "$DS"
is "$OUT|$RC" "$DS tmpfs|0" "findmnt --target on a path with spaces"
like_real "... as findmnt prints it" "${FM[@]}" "$DS"
like_real "findmnt --target below a mount point (with a space)" "${FM[@]}" "$V/sub dir"
like_real "findmnt --target on a dir that is not a mount point" "${FM[@]}" "$VOLS"
like_real "findmnt --target on a missing path" "${FM[@]}" "$VOLS/missing"
like_real "findmnt --target on a path only the host has" "${FM[@]}" "$NODE"
run shim stat -L --printf=%F "$V"
is "$OUT|$RC" "directory|0" "stat -L --printf=%F on a directory"
like_real "... as stat prints it" stat -L --printf=%F "$V"
echo x >"$V/file"
like_real "stat -L --printf=%F on a file" stat -L --printf=%F "$V/file"
run shim stat -L --printf=%F "$V/missing"
like "$ERR|$RC" "No such file.*\|1$" "stat -L on a missing path: 'No such file', exit 1"
like_real "... as stat prints it" stat -L --printf=%F "$V/missing"
ln -s cache "$VOLS/kubernetes.io~empty-dir/link"
run shim realpath -e "$VOLS/kubernetes.io~empty-dir/link"
is "$OUT|$RC" "$V|0" "realpath -e through a symlink"
like_real "realpath -e on a missing path" realpath -e "$V/missing/deeper"
like_real "realpath -m on a missing path" realpath -m "$VOLS/kubernetes.io~empty-dir/link/missing/deeper"
like_real "realpath -e on a path with spaces" realpath -e "$DS"
shim /bin/umount "$V"
shim /bin/umount "$DS"

# ---- plain commands in the host: mkdir, touch, ls, cat > F, chmod ------------------
H=$NODE/host-only/dir
check_fails "sanity: $NODE/host-only does not exist in the kubelet container" in_kubelet test -e "$NODE/host-only"
quiet_ok "mkdir -p" shim mkdir -p "$H/a/b"
check "... the dirs are in the host" test -d "$H/a/b"
quiet_ok "touch" shim touch "$H/a/b/f"
check "... the file is in the host" test -f "$H/a/b/f"
run shim ls "$H/a/b"
is "$OUT|$RC" "f|0" "ls lists the host's dir"
run in_kubelet "${ENV[@]}" "$SHIM" --mount=$HOSTNS -- sh -c "cat > '$H/a/b/data'" <<<"payload of the kubelet"
is "$RC|$OUT$ERR" "0|" "sh -c \"cat > F\" with data on stdin"
is "$(cat "$H/a/b/data")" "payload of the kubelet" "... the host's file holds the data"
quiet_ok "chmod 0750 F" shim chmod 0750 "$H/a/b/data"
is "$(stat -c %a "$H/a/b/data")" 750 "... mode 750 in the host"
like_real "ls -la of a missing dir" ls -la "$H/missing"

# ---- the other forms: --target=1 --mount [--wd=.], /host ------------------------------
quiet_ok "--target=1 --mount --wd=. -- /bin/mount" \
        in_kubelet "${ENV[@]}" "$SHIM" --target=1 --mount --wd=. -- /bin/mount -t tmpfs -o size=1m target-form "$V"
check "... in the host" is_mounted host "$V"
run in_kubelet "${ENV[@]}" "$SHIM" --target=1 --mount -- "${FM[@]}" "$V"
is "$OUT|$RC" "$V tmpfs|0" "--target=1 --mount -- findmnt"
quiet_ok "--target=1 --mount -- /bin/umount" in_kubelet "${ENV[@]}" "$SHIM" --target=1 --mount -- /bin/umount "$V"
check_fails "... gone" is_mounted host "$V"

ctr_up csi "/:/host:rslave" "$KUBELET_DIR:$KUBELET_DIR:rshared" || { echo "Bail out! the CSI container did not start"; exit 1; }
bind_shim csi /host || { echo "Bail out! cannot bind the shim into the CSI container"; exit 1; }
quiet_ok "CSI: nsenter --mount=/host/proc/1/ns/mnt -- mount" \
        in_ctr csi "${ENV[@]}" "$SHIM" --mount=/host/proc/1/ns/mnt -- mount -t tmpfs -o size=1m csi "$V"
check "... in the host" is_mounted host "$V"
check "... and in the pod" is_mounted pod:a "$V"
quiet_ok "CSI: umount" in_ctr csi "${ENV[@]}" "$SHIM" --mount=/host/proc/1/ns/mnt -- umount "$V"
check_fails "... gone" is_mounted host "$V"

# ---- kubemount's confinement: a symlink below the kubelet dir ------------------------
OUTSIDE=$NODE/outside
mkdir -p "$OUTSIDE"
ln -s "$OUTSIDE" "$VOLS/kubernetes.io~empty-dir/escape"
before=$(cat /proc/1/mountinfo)
run shim /bin/mount -t tmpfs -o size=1m evil "$VOLS/kubernetes.io~empty-dir/escape"
if ((RC == 32 || RC == 1)); then ok "a symlink target below the kubelet dir is refused (exit $RC)"; else
        not_ok "a symlink target below the kubelet dir is refused"
        diag "exit $RC: $ERR"
fi
like "$ERR" "symlink" "... by kubemount (the message says symlink)"
is "$(cat /proc/1/mountinfo)" "$before" "... the host's mount table is unchanged"
mountpoint -q "$OUTSIDE" && umount "$OUTSIDE"
run shim "${SR[@]}" /bin/mount -o bind "$SRC" "$VOLS/kubernetes.io~empty-dir/escape"
if ((RC == 32 || RC == 1)) && [[ $ERR =~ symlink ]]; then ok "... also as a systemd-run-wrapped bind (exit $RC)"; else
        not_ok "... also as a systemd-run-wrapped bind"
        diag "exit $RC: $ERR"
fi
is "$(cat /proc/1/mountinfo)" "$before" "... the host's mount table is unchanged"
mountpoint -q "$OUTSIDE" && umount "$OUTSIDE"

# ---- THREATS 4 through the shim -----------------------------------------------------
T=$VOLS/kubernetes.io~empty-dir/t
mkdir -p "$T"
# injected WHY-ERE DESC CMD...: nsenter-compat --mount=/proc/1/ns/mnt -- CMD
# (from the host) exits 1 saying WHY, nothing is exec'd, mount(2) is never
# called, the mount table is unchanged and /etc is not a mount point.
injected() {
        local why=$1 desc=$2 before calls
        shift 2
        before=$(cat /proc/1/mountinfo)
        if ((have_strace)); then
                run strace -f -qq -o "$KM_SCRATCH/strace" -e trace=execve,mount,fsopen,fsmount,move_mount,open_tree \
                        "${ENV[@]}" "$SHIM" --mount=/proc/1/ns/mnt -- "$@"
        else
                run "${ENV[@]}" "$SHIM" --mount=/proc/1/ns/mnt -- "$@"
        fi
        is "$RC" 1 "$desc: exit 1"
        like "$ERR" "$why" "$desc: says why"
        if [[ $(cat /proc/1/mountinfo) == "$before" ]]; then ok "$desc: mount table unchanged"; else
                not_ok "$desc: mount table unchanged"
                diag "$(diff <(echo "$before") /proc/1/mountinfo)"
        fi
        if ((have_strace)); then
                calls=$(grep -cE '^[0-9]+ +(execve|mount|fsopen|fsmount|move_mount|open_tree)\(' "$KM_SCRATCH/strace")
                # Two execve: strace starting env, env starting the shim.
                is "$calls" 2 "$desc: no exec and no mount system call"
        fi
        check_fails "$desc: /etc is not a mount point" mountpoint -q /etc
        mountpoint -q /etc && umount /etc # the sandbox's /etc, never the machine's
}
injected "source '-oro,--target=/etc' starts with '-'" "source '-oro,--target=/etc' after --" \
        mount -t tmpfs -- "-oro,--target=/etc" "$T"
injected "can't find in /etc/fstab|no source" "source '-oro,--target=/etc' as a kubelet passes it" \
        mount -t tmpfs "-oro,--target=/etc" "$T"
injected "target '-x' starts with '-'" "target '-x' after --" mount -t tmpfs tmpfs -- -x
injected "starts with '-'" "target '--target=/etc' after --" /bin/mount -t tmpfs tmpfs -- --target=/etc
injected "target '-x' starts with '-'" "umount -- -x" /bin/umount -- -x
injected "is not a filesystem type name" "type 'tmpfs,--bind'" /bin/mount -t "tmpfs,--bind" tmpfs "$T"
injected "is not a filesystem type name" "type '../../bin/sh'" mount -t ../../bin/sh tmpfs "$T"
injected "contains a control character" "an option with a newline" mount -t tmpfs -o $'size=1m\nro' tmpfs "$T"
injected "source '-oro,--target=/etc' starts with '-'" "systemd-run-wrapped: source '-oro,--target=/etc'" \
        /bin/systemd-run "--description=Kubernetes transient mount for $T" --scope -- \
        /bin/mount -t tmpfs -- "-oro,--target=/etc" "$T"
check_fails "nothing is mounted on the target" is_mounted host "$T"

node_down "legacy kubelet through nsenter-compat"
done_testing
