#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 34 (issue 12): a default VCS container is unprivileged (a user
# namespace; the mount broker makes the mounts it may have).  From an image
# made of the test rootfs plus two static programs (build/tests/integration):
#   escape-probe, one escape primitive per run: unmount or remount /proc/sys
#      and /sys, core_pattern opened for writing, a cgroup v1 hierarchy and its
#      release_agent, mknod of the host's first disk, open_by_handle_at, a
#      mount outside the kubelet dir, /etc and / bound below it, a type no
#      policy allows, the new mount API (ENOSYS).  Each is refused in a
#      default container (--allow-mount tmpfs, so that a tmpfs below the
#      kubelet dir, the control, mounts) and works with --privileged: the
#      check that fails when its defence is removed.  open_by_handle_at is
#      refused even there (the seccomp profile of every container denies it):
#      its control runs the probe chrooted on the host;
#   a refusal is a line in `kubemount logs` of a detached container, with no
#      secret of the mount's options; ps --json shows "privileged" (false /
#      true) and "mounts_allowed"; the container's root is host uid
#      1879048192 (65536 ids), a privileged one's the host's root;
#   broker-hostile, the broker fed NULL and unmapped pointers, strings
#      without NUL, a caller killed mid-call, a target swapped during the
#      check; every case refused or confined below the kubelet dir, the
#      broker still mounts afterwards, and the host's mount table outside the
#      kubelet dir is unchanged.  In a privileged container (the kernel's
#      mount(2), no broker) its checks must see the mounts outside.
# Containers bind the kubelet dir at its own path, rslave (privileged ones
# too: their mounts stay in the container).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"
need_tools tar chroot comm
for v in ESCAPE_PROBE BROKER_HOSTILE; do
        [[ -n ${!v:-} && -x ${!v} ]] ||
                bail_out "no $v program: set $v (meson test sets it; a sanitizer build leaves it out)"
done

node_up --no-kubelet
vcs_setup
vcs_agent_start
NL=$'\n'

# ---- the image: the test rootfs with the two programs ----
W=$NODE/escape-image
mkdir -p "$W" && rootfs_copy "$W/root" || bail_out "cannot copy the test rootfs"
install -m 0755 "$ESCAPE_PROBE" "$W/root/usr/bin/escape-probe" &&
        install -m 0755 "$BROKER_HOSTILE" "$W/root/usr/bin/broker-hostile" &&
        tar -C "$W/root" -czf "$W/root.tar.gz" . || bail_out "cannot make the image's tarball"
check "image import: the test rootfs with escape-probe and broker-hostile (local/escape:1)" \
        km image import -q "rootfs:$W/root.tar.gz" local/escape:1
rm -f "$W/root.tar.gz"

# Targets below the kubelet dir are made here: a container's root owns nothing there.
P=$KUBELET_DIR/pods/uid-escape/volumes/kubernetes.io~csi/escape # its --mount-target
mkdir -p "$P"
KB=(--mount "$KUBELET_DIR:$KUBELET_DIR:rslave")
# esc [RUN-OPTIONS] -- CMD...: a default container: unprivileged, tmpfs allowed at $P and below.
esc() { km --kubelet-dir="$KUBELET_DIR" run --image local/escape:1 "${KB[@]}" --allow-mount tmpfs --mount-target "$P" "$@"; }
# escp [RUN-OPTIONS] -- CMD...: the same, --privileged (today's container).
escp() { km --kubelet-dir="$KUBELET_DIR" run --image local/escape:1 "${KB[@]}" --privileged "$@"; }
# The host's mount points, one a line, sorted (the sandbox's namespace: where the broker mounts).
host_mounts() { awk '{ print $5 }' /proc/1/mountinfo | sort; }
# host_changes BEFORE: "+ PATH" / "- PATH" for each mount point added or gone since BEFORE.
host_changes() { diff <(echo "$1") <(host_mounts) | sed -n 's/^> /+ /p; s/^< /- /p'; }
# outside LINES: the "+/- PATH" lines whose PATH is not below the kubelet dir, nor below the
# agent's state and store dirs (where it may keep mounts of its own for a container it runs).
outside() {
        awk -v k="$KUBELET_DIR/" -v s="$KUBEMOUNT_STATE_DIR/" -v t="$KUBEMOUNT_STORE_DIR/" \
                'NF { p = substr($0, 3); if (index(p, k) != 1 && index(p, s) != 1 && index(p, t) != 1) print }' <<<"$1"
}
# below_kubelet LINES: those whose PATH is below the kubelet dir.
below_kubelet() { awk -v k="$KUBELET_DIR/" 'index(substr($0, 3), k) == 1' <<<"$1"; }
first_line() { head -n1 <<<"$OUT"; }
line_of() { grep -m1 "^$1: " <<<"$OUT"; }
HOST_BEFORE=$(host_mounts)

# ---- who the container is ----
run esc -- cat /proc/self/uid_map
like "$RC:$OUT" "^0: *0 +1879048192 +65536$" "a default container's root is host uid 1879048192, 65536 ids (uid_map: ${OUT//$NL/ })"
run escp -- cat /proc/self/uid_map
like "$RC:$OUT" "^0: *0 +0 +4294967295$" "a privileged container's root is the host's (uid_map: ${OUT//$NL/ })"

# ---- the escape primitives ----
# t34 NAME ERRNO-ERE PRIVILEGED [dir]: NAME refused with ERRNO-ERE in a
# default container; PRIVILEGED "ok" (the hole is there when the user
# namespace and the broker are gone) or "refused:ERE" (closed even then);
# "dir": the probe gets a fresh directory below the kubelet dir.
t34() {
        local name=$1 want=$2 priv=$3 arg=()
        if [[ ${4:-} == dir ]]; then
                mkdir -p "$P/$name" "$P/$name-priv"
                arg=("$P/$name")
        fi
        run esc -- /usr/bin/escape-probe "$name" "${arg[@]}"
        if [[ $RC == 0 && $(first_line) =~ ^$name:\ refused:\ ($want)$ ]]; then
                ok "[34 $name] a default container: $(first_line)"
        else
                not_ok "[34 $name] a default container: refused ($want)"
                diag "exit $RC" "$OUT" "$ERR"
        fi
        [[ ${4:-} == dir ]] && arg=("$P/$name-priv")
        run escp -- /usr/bin/escape-probe "$name" "${arg[@]}"
        if [[ $priv == ok ]]; then
                if [[ $RC == 1 && $(first_line) == "$name: ok" ]]; then
                        ok "[34 $name] --privileged: ok (the probe sees the hole without its defence)"
                else
                        not_ok "[34 $name] --privileged: ok (the probe sees the hole without its defence)"
                        diag "exit $RC" "$OUT" "$ERR"
                fi
        elif [[ $RC == 0 && $(first_line) =~ ^$name:\ refused:\ (${priv#refused:})$ ]]; then
                ok "[34 $name] --privileged: still $(first_line)"
        else
                not_ok "[34 $name] --privileged: still refused (${priv#refused:})"
                diag "exit $RC" "$OUT" "$ERR"
        fi
}

# The control first: a tmpfs below the kubelet dir mounts (and unmounts) in
# both, so that a refusal below says something about its primitive.
for how in esc escp; do
        label=default
        [[ $how == escp ]] && label=--privileged
        mkdir -p "$P/legit-$how"
        run $how -- /usr/bin/escape-probe legit-tmpfs "$P/legit-$how"
        is "$RC:$(line_of legit-tmpfs):$(line_of umount-own)" "1:legit-tmpfs: ok:umount-own: ok" \
                "[34 control, $label] a tmpfs below the kubelet dir mounts, shows there, and unmounts"
        ((RC == 1)) || diag "$OUT" "$ERR"
done
is "$(outside "$(host_changes "$HOST_BEFORE")")" "" "[34 control] ... nothing changed in the host outside the kubelet dir"
is "$(below_kubelet "$(host_changes "$HOST_BEFORE")")" "" "[34 control] ... and the broker's tmpfs is gone from the host again"

# The reviewer's primitives (issue 12).  Refusals are the broker's EPERM,
# except where the kernel answers (no capability in the host's user
# namespace): core_pattern (EROFS: /proc/sys stays read-only; EACCES: root
# of the container is not the file's owner), mknod, open_by_handle_at.
t34 umount-proc-sys EPERM ok
t34 remount-proc-sys-rw EPERM ok
t34 core-pattern 'EROFS|EACCES|EPERM' ok
t34 remount-sys-rw EPERM ok
t34 mknod-block EPERM ok
# Refused even privileged: the seccomp profile (src/lib/container/seccomp-profile.c)
# denies name_to_handle_at and open_by_handle_at in every container.
t34 open-by-handle EPERM refused:EPERM
t34 mount-outside EPERM ok
t34 bind-etc EPERM ok dir
t34 bind-root EPERM ok dir
t34 type-not-allowed EPERM ok dir
t34 newapi ENOSYS ok
# A cgroup v1 hierarchy needs a kernel that still has them.
if grep -qP '\tcgroup$' /proc/filesystems; then
        t34 cgroup-v1 EPERM ok dir
        is "$(line_of cgroup-v1-release-agent)" "cgroup-v1-release-agent: ok" \
                "[34 cgroup-v1] --privileged: its release_agent opens for writing"
else
        run esc -- /usr/bin/escape-probe cgroup-v1 "$P"
        like "$RC:$(first_line)" "^0:cgroup-v1: refused: " "[34 cgroup-v1] a default container: refused"
        skip "[34 cgroup-v1] --privileged: ok" "this kernel has no cgroup v1 (/proc/filesystems)"
fi
# open_by_handle_at's control: the probe chrooted on the host (root in the
# host's user namespace, no seccomp filter) gets through.
run chroot "$W/root" /usr/bin/escape-probe open-by-handle
is "$RC:$OUT" "1:open-by-handle: ok" "[34 open-by-handle] control: chrooted on the host, the probe opens by handle"
rm -rf --one-file-system "$W"

ch=$(host_changes "$HOST_BEFORE")
is "$(outside "$ch")" "" "[34] the host's mount table outside the kubelet dir is unchanged"
is "$(below_kubelet "$ch")" "" "[34] ... and nothing is left mounted below it"

# ---- a refusal is in logs, without the options' secret ----
SECRET=km-escape-secret-$RANDOM$RANDOM
mkdir -p "$P/logged"
run esc -d --name esc-log -- /usr/bin/escape-probe type-not-allowed "$P/logged" "size=1m,password=$SECRET"
is "$RC:$OUT" "0:esc-log" "[logs] a detached default container that asks for a ramfs"
vcs_wait_status esc-log '^exited' 15
is "$(vcs_status esc-log)" "exited 0" "[logs] ... its probe was refused (exit 0)"
run km logs esc-log
like "$OUT$ERR" "type-not-allowed: refused: EPERM" "[logs] ... the client got EPERM"
like "$OUT$ERR" "(ramfs[^$NL]*$P/logged|$P/logged[^$NL]*ramfs)[^$NL]*refused|refused[^$NL]*ramfs" \
        "[logs] ... and logs has the broker's refusal, naming the type and the target"
unlike "$OUT$ERR" "$SECRET" "[logs] ... the password is not in logs"
diag "logs esc-log: ${OUT//$NL/ | } ${ERR//$NL/ | }"
run km ps --json -a
unlike "$OUT" "$SECRET" "[logs] ... nor in ps --json"
check "[logs] rm esc-log" km rm -f esc-log

# ---- ps --json: privileged and mounts_allowed ----
run esc -d --name esc-default -- sleep 1000
is "$RC:$OUT" "0:esc-default" "[ps] a detached default container"
run escp -d --name esc-priv -- sleep 1000
is "$RC:$OUT" "0:esc-priv" "[ps] a detached --privileged one"
is "$(vcs_json "(get('esc-default') or {}).get('privileged')")" "False" "[ps] ps --json: \"privileged\": false for the default one"
is "$(vcs_json "(get('esc-priv') or {}).get('privileged')")" "True" "[ps] ps --json: \"privileged\": true for --privileged"
is "$(vcs_json "(get('esc-default') or {}).get('mounts_allowed')")" '["tmpfs"]' \
        "[ps] ps --json: \"mounts_allowed\": [\"tmpfs\"] (--allow-mount tmpfs)"
run km ps
diag "ps: ${OUT//$NL/ | }"
check "[ps] rm -f esc-default" km rm -f esc-default
check "[ps] rm -f esc-priv" km rm -f esc-priv

# ---- the broker fed hostile arguments ----
H=$P/hostile
mkdir -p "$H"/{t,k,swap,final,bindsrc} "$H-priv"/{t,k,swap,final,bindsrc}
echo marker >"$H/bindsrc/marker"
echo marker >"$H-priv/bindsrc/marker"
ln -s /etc "$H/link"
ln -s /etc "$H-priv/link"
before=$(host_mounts)
VCS_TIMEOUT=120 run esc -- /usr/bin/broker-hostile "$H"
n=0
while IFS= read -r line; do
        case $line in
        "PASS "*) ok "[hostile] ${line#PASS }" ;;
        "FAIL "*) not_ok "[hostile] ${line#FAIL }" ;;
        *) continue ;;
        esac
        n=$((n + 1))
done <<<"$OUT"
if [[ $RC == 0 && $OUT =~ (^|$NL)DONE\ pass=[0-9]+\ fail=0($|$NL) ]] && ((n >= 40)); then
        ok "[hostile] broker-hostile ran to the end: $n cases, none failed"
else
        not_ok "[hostile] broker-hostile ran to the end: exit 0, $n cases (>= 40), DONE ... fail=0"
        diag "exit $RC" "$(grep -v '^PASS ' <<<"$OUT")" "$ERR"
fi
ch=$(host_changes "$before")
is "$(outside "$ch")" "" "[hostile] the host's mount table outside the kubelet dir is unchanged"
[[ -z $(below_kubelet "$ch") ]] || diag "[hostile] left below the kubelet dir: $(below_kubelet "$ch" | tr '\n' ' ')"
check "[hostile] the agent is still there" kill -0 "$AGENT"

# Without a broker the same checks must see what the kernel's mount(2) lets a
# privileged container do: these cases fail, the others pass.
XFAIL='^(mount on a symlink to /etc|mount on DIR/t/\.\./\.\./\.\.\./etc|mount on /etc|bind /etc on DIR/t|bind through DIR/link \(-> /etc\)|umount2 /proc/sys|target swapped between DIR/swap and /etc|bind source swapped between DIR/bindsrc and /etc)$'
VCS_TIMEOUT=120 run escp -- /usr/bin/broker-hostile "$H-priv"
missed="" unexpected="" n=0
while IFS= read -r line; do
        case $line in
        "PASS "* | "FAIL "*) ;;
        *) continue ;;
        esac
        n=$((n + 1))
        name=${line#* }
        name=${name%%: *}
        if [[ $name =~ $XFAIL ]]; then
                [[ $line == FAIL* ]] || missed+="$line$NL"
        else
                [[ $line == PASS* ]] || unexpected+="$line$NL"
        fi
done <<<"$OUT"
if [[ -z $missed && $OUT =~ (^|$NL)DONE\ pass=[0-9]+\ fail=8($|$NL) ]]; then
        ok "[hostile --privileged] without a broker, the 8 checks of mounts outside the kubelet dir fail"
else
        not_ok "[hostile --privileged] without a broker, the 8 checks of mounts outside the kubelet dir fail"
        diag "exit $RC, $n cases; passed though they should not:" "$missed" "$(grep -E '^(FAIL|DONE|SETUP)' <<<"$OUT")" "$ERR"
fi
if [[ -z $unexpected ]] && ((n >= 40)); then
        ok "[hostile --privileged] ... and the $((n - 8)) others pass (the kernel refuses bad pointers)"
else
        not_ok "[hostile --privileged] ... and the others pass (the kernel refuses bad pointers; $n cases, >= 40)"
        diag "$unexpected"
fi
is "$(outside "$(host_changes "$before")")" "" "[hostile --privileged] ... the host's mount table outside the kubelet dir is unchanged"

vcs_cleanup
node_down "vcs escape"
done_testing
