#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS.md for VCS containers (kubemount run / exec), with the test image's
# probe programs (tests/lib/ctr/):
#   20 capabilities: CapInh and CapAmb empty, CAP_SYS_ADMIN effective,
#      NoNewPrivs 1, Seccomp 2 (filter), clone3 ENOSYS, kexec_load EPERM;
#   17 only fds 0-2 (in run and exec, with and without -i); none a directory,
#      procfs, sysfs, the kubemount binary, its state dir or the image (the
#      caller's output files may be passed on purpose); through a pipe, a pipe;
#   16 --cwd / exec -w /proc/self/fd/N (N=3..64) and other escapes: refused or
#      confined to the image (probe cwd walks ".." to the root);
#   21 PID 1 reaps 1,000 orphans, forwards SIGTERM, 128+signal;
#   18 /proc/PID/exe of kubemount processes cannot be written: a copy of the
#      binary runs the agent, the probe may write only that copy, and the
#      checksums of both binaries stay the same;
#   19 an image whose /proc, /sys, /dev, /dev/pts are symlinks to /etc, to
#      ../../.. or to a host path, or whose /dev/null is a file or a symlink:
#      refused or replaced by fresh mounts; the targets untouched (/etc is
#      behind an overlay whose upper dir must stay empty), the host's mount
#      table unchanged;
#    9 kill -9 of the CLI during 20 runs (0-90 ms in) and of one whose
#      container runs: no container process or mount is left, the container
#      of a killed attached run ends, a retry with the same name works;
#   15 the state file truncated, garbage, empty, a symlink: ps and gc do not
#      crash, the other container is still listed, the symlink's target is
#      never written, rm -f still ends the container.
# shellcheck disable=SC2016,SC2317 # single-quoted scripts are expanded by the container's sh; t19 calls the alter_* functions
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

node_up --no-kubelet
vcs_setup
NL=$'\n'

# /etc behind an overlay for this namespace (before the agent starts, so that
# it and any namespace it makes see it): a container setup that wrote through
# a symlink to /etc writes the upper dir, never the machine's /etc.
ETC_OV=$NODE/etc-overlay
mkdir -p "$ETC_OV/upper" "$ETC_OV/work"
mount -t overlay km-etc -o "lowerdir=/etc,upperdir=$ETC_OV/upper,workdir=$ETC_OV/work" /etc ||
        { echo "Bail out! cannot put an overlay over /etc in the sandbox"; exit 1; }
vcs_agent_start
run vcs_run --detach --name t -- sleep 1000
is "$RC:$OUT" "0:t" "a detached container 't' for exec"

# probe_get KEY: the value of KEY= in $OUT.
probe_get() { sed -n "s/^$1=//p" <<<"$OUT" | head -n1; }

# ---- 20: capabilities, no_new_privs, seccomp ----
for via in run exec; do
        if [[ $via == run ]]; then run vcs_run -- /usr/bin/probe; else run km exec t -- /usr/bin/probe; fi
        is "$RC" 0 "[20 $via] probe runs"
        is "$(probe_get CapInh)" "0000000000000000" "[20 $via] CapInh is empty"
        is "$(probe_get CapAmb)" "0000000000000000" "[20 $via] CapAmb is empty"
        eff=$(probe_get CapEff) prm=$(probe_get CapPrm) bnd=$(probe_get CapBnd)
        [[ $eff =~ ^[0-9a-f]{1,16}$ ]] || eff=0
        [[ $prm =~ ^[0-9a-f]{1,16}$ ]] || prm=0
        [[ $bnd =~ ^[0-9a-f]{1,16}$ ]] || bnd=ffffffffffffffff
        holds "[20 $via] CAP_SYS_ADMIN is effective (CapEff=$eff)" test $(((16#$eff >> 21) & 1)) = 1
        holds "[20 $via] the bounding set is the VCS set: nothing beyond the permitted set (CapBnd=$bnd CapPrm=$prm)" \
                test $((16#$bnd & ~16#$prm)) = 0
        is "$(probe_get NoNewPrivs)" "1" "[20 $via] no_new_privs is set"
        is "$(probe_get Seccomp)" "2" "[20 $via] a seccomp filter is active"
        is "$(probe_get clone3)" "ENOSYS" "[20 $via] clone3 (not in the filter): ENOSYS"
        is "$(probe_get kexec_load)" "EPERM" "[20 $via] kexec_load: EPERM"
done

# ---- 17: only fds 0-2, none pointing at the host ----
# fds 0-2 may be what the caller passed on purpose (run's output files here),
# never a directory, procfs or sysfs, the kubemount binary, the state dir or
# the image; through a pipe, fd 1 is a pipe or a socket.
fd_ok() { # TARGET TYPE
        [[ -n $1 && $2 != dir && $1 != /proc/* && $1 != /sys/* && $1 != "$KUBEMOUNT" &&
                $1 != "$KUBEMOUNT_STATE_DIR"* && $1 != "$ROOTFS"* ]]
}
for via in run exec run-i exec-i; do
        case $via in
        run) run vcs_run -- /usr/bin/probe ;;
        run-i) run with_stdin "" vcs_run -i -- /usr/bin/probe ;;
        exec) run km exec t -- /usr/bin/probe ;;
        exec-i) run with_stdin "" km exec -i t -- /usr/bin/probe ;;
        esac
        is "$(probe_get fds)" "0 1 2" "[17 $via] only fds 0, 1 and 2 are open"
        bad=""
        for n in 0 1 2; do
                fd_ok "$(probe_get "fd\.$n")" "$(probe_get "fdtype\.$n")" ||
                        bad+=" fd $n: $(probe_get "fd\.$n") ($(probe_get "fdtype\.$n"));"
        done
        is "$bad" "" "[17 $via] fds 0-2: none a directory, procfs, sysfs, kubemount, its state or the image"
done
for via in run exec; do
        if [[ $via == run ]]; then
                run timeout 30 bash -c '"$1" run --rootfs "$2" -- /usr/bin/probe | cat' sh "$KUBEMOUNT" "$ROOTFS"
        else
                run timeout 30 bash -c '"$1" exec t -- /usr/bin/probe | cat' sh "$KUBEMOUNT"
        fi
        is "$(probe_get fds)" "0 1 2" "[17 $via | cat] only fds 0, 1 and 2 are open"
        like "$(probe_get "fd\.1")" "^(pipe|socket):" "[17 $via | cat] fd 1 is a pipe or a socket ($(probe_get "fd\.1"))"
        like "$(probe_get "fd\.0")" "^(/dev/null|pipe:|socket:)" "[17 $via | cat] fd 0 is /dev/null (or a pipe or socket)"
done

# ---- 16: working directory /proc/self/fd/N and other escapes ----
# Refused (non-zero, the command never ran) or confined (probe cwd says so).
cwd_verdict() { # -> "" if fine, else why
        if ((RC == 0)); then
                [[ $(probe_get confined) == yes ]] || { echo "ran outside the image: ${OUT//$NL/ }"; return; }
                [[ $(probe_get cwd) == /* ]] || echo "unreachable cwd: ${OUT//$NL/ }"
        else
                [[ $OUT != *confined=* ]] || echo "exit $RC but the command ran: ${OUT//$NL/ }"
        fi
}
# The control: a working directory that is fine.
run vcs_run --cwd /usr/bin -- /usr/bin/probe cwd
is "$RC:$(probe_get cwd):$(probe_get confined)" "0:/usr/bin:yes" "[16 run] control: --cwd /usr/bin runs there, confined"
run km exec -w /usr/bin t -- /usr/bin/probe cwd
is "$RC:$(probe_get cwd):$(probe_get confined)" "0:/usr/bin:yes" "[16 exec] control: -w /usr/bin runs there, confined"
bad_run="" bad_exec=""
for n in $(seq 3 64); do
        run vcs_run --cwd "/proc/self/fd/$n" -- /usr/bin/probe cwd
        v=$(cwd_verdict)
        [[ -z $v ]] || bad_run+=" fd $n: $v;"
        run km exec -w "/proc/self/fd/$n" t -- /usr/bin/probe cwd
        v=$(cwd_verdict)
        [[ -z $v ]] || bad_exec+=" fd $n: $v;"
done
is "$bad_run" "" "[16 run] --cwd /proc/self/fd/N, N=3..64: refused or confined"
is "$bad_exec" "" "[16 exec] -w /proc/self/fd/N, N=3..64: refused or confined"
for d in /.. /proc/self/cwd /proc/1/cwd /proc/1/root/.. /proc/self/root/../..; do
        run vcs_run --cwd "$d" -- /usr/bin/probe cwd
        is "$(cwd_verdict)" "" "[16 run] --cwd $d: refused or confined"
        run km exec -w "$d" t -- /usr/bin/probe cwd
        is "$(cwd_verdict)" "" "[16 exec] -w $d: refused or confined"
done

# ---- 21: PID 1 reaps orphans, forwards SIGTERM, 128+signal ----
run vcs_run -- sh -c '/usr/bin/orphans 1000 20 && /usr/bin/zombies 10; sleep 0.2; echo "ps-zombies=$(ps -o stat | grep -c Z)"'
is "$(probe_get orphans)" "1000" "[21 run] 1,000 orphans made"
is "$(probe_get zombies)" "0" "[21 run] ... all reaped: no zombies"
is "$(probe_get ps-zombies)" "0" "[21 run] ... ps shows none"
run km exec t -- /usr/bin/orphans 1000 20
is "$OUT" "orphans=1000" "[21 exec] 1,000 orphans made by an exec'd process"
run km exec t -- /usr/bin/zombies 10
is "$(probe_get zombies)" "0" "[21 exec] ... all reaped by the container's PID 1"
run vcs_run --detach --name t21 -- sh -c 'trap "echo got TERM; exit 42" TERM; echo ready; while :; do sleep 0.1; done'
wait_for 5 vcs_logs_has t21 ready
check "[21] kill -TERM of the container's PID 1 from the host" kill -TERM "$(vcs_pid t21)"
vcs_wait_status t21 '^exited'
is "$(vcs_status t21)" "exited 42" "[21] ... forwarded: the command's TERM trap's status"
like "$(km logs t21 2>&1)" "got TERM" "[21] ... its trap ran"
km rm t21 >/dev/null 2>&1
run vcs_run --detach --name t21b -- sh -c 'sleep 0.2; kill -USR1 $$'
vcs_wait_status t21b '^exited'
is "$(vcs_status t21b)" "exited 138" "[21] a command killed by SIGUSR1: exited 128+10"
km rm t21b >/dev/null 2>&1
# A short run: TERM to PID 1 reaches the command, the run exits with its status.
km run --rootfs "$ROOTFS" --name t21c -- \
        sh -c 'trap "echo got TERM; exit 5" TERM; echo ready; while :; do sleep 0.1; done' >"$KM_SCRATCH/t21c" 2>&1 &
cli=$!
wait_for 5 grep -q ready "$KM_SCRATCH/t21c"
wait_for 5 eval '[[ -n $(vcs_pid t21c) ]]'
check "[21 run] ps lists the attached run; kill -TERM of its PID 1" kill -TERM "$(vcs_pid t21c)"
wait "$cli"
is "$?" 5 "[21 run] ... the run exits with the trap's status"
like "$(cat "$KM_SCRATCH/t21c")" "got TERM" "[21 run] ... and its output"

# ---- 18: /proc/PID/exe ----
sum() { sha256sum <"$1" | cut -d' ' -f1; }
orig_sum=$(sum "$KUBEMOUNT")
KM_COPY=$NODE/kmcopy/kubemount
mkdir -p "$(dirname "$KM_COPY")"
cp "$KUBEMOUNT" "$KM_COPY"
copy_sum=$(sum "$KM_COPY")
copy_id=$(stat -c %d:%i "$KM_COPY")
saved_km=$KUBEMOUNT saved_state=$KUBEMOUNT_STATE_DIR saved_agent=$AGENT
KUBEMOUNT=$KM_COPY KUBEMOUNT_STATE_DIR=$NODE/run/kubemount-copy
vcs_agent_start
run vcs_run -- /usr/bin/probe
diag "[18] probe through the copy: proc1_exe_write=$(probe_get proc1_exe_write)"
run vcs_run --detach --name t18 -- /usr/bin/probe exe-write --write "$copy_id" 4
is "$RC" 0 "[18] a container that watches for kubemount processes' /proc/PID/exe for 4 s"
for i in $(seq 1 20); do
        km exec t18 -- true >/dev/null 2>&1
        km exec t18 -- /usr/bin/probe exe-write --write "$copy_id" >>"$KM_SCRATCH/t18.exec" 2>&1
done
vcs_wait_status t18 '^exited' 15
run km logs t18
diag "[18] watcher: $(grep -E '^exe_(held|opened|written)=' <<<"$OUT" | tr '\n' ' ')"
is "$(probe_get exe_written)" "0" "[18] the watcher wrote nothing"
is "$(grep -c '^exe_written=[1-9]' "$KM_SCRATCH/t18.exec")" "0" "[18] exec'd probes wrote nothing"
run vcs_run -- /usr/bin/probe exe-write --write "$copy_id"
is "$(probe_get exe_written)" "0" "[18] nor does a run"
km rm -f t18 >/dev/null 2>&1
vcs_cleanup
kill -KILL "$AGENT" 2>/dev/null
wait "$AGENT" 2>/dev/null
KUBEMOUNT=$saved_km KUBEMOUNT_STATE_DIR=$saved_state AGENT=$saved_agent
is "$(sum "$KM_COPY")" "$copy_sum" "[18] the copy of kubemount that ran the containers is unchanged"
is "$(sum "$KUBEMOUNT")" "$orig_sum" "[18] the kubemount binary is unchanged"

# ---- 19: /proc, /sys, /dev symlinks; /dev/null a file or a symlink ----
CAN=$KUBELET_DIR/canary # on the rshared kubelet dir: a mount made on it would reach the host
mkdir -p "$CAN/dir"
echo canary >"$CAN/file"
R=$CAN/a/b/rootfs # ../../.. from the image's root is $CAN
canary_state() {
        find "$CAN" -path "$CAN/a" -prune -o -printf '%y %m %s %T@ %p %l\n' | LC_ALL=C sort
        cat "$CAN/file"
}
host_mounts() { awk '{ print $5 }' /proc/1/mountinfo | sort; }
t19() { # DESC ALTER-FUNCTION [RUN OPTIONS]
        local desc=$1 alter=$2 before_can before_mounts want
        shift 2
        rm -rf --one-file-system "${CAN:?}/a"
        mkdir -p "$CAN/a/b"
        rootfs_copy "$R" || { echo "Bail out! cannot copy the image"; exit 1; }
        "$alter" "$R"
        before_can=$(canary_state)
        before_mounts=$(host_mounts)
        run km run --rootfs "$R" "$@" -- sh -c "$VCS_GUARD"'stat -c "%F %t:%T" /dev/null; echo x >/dev/null; stat -f -c %T /proc /sys /dev'
        want="character special file 1:3${NL}proc${NL}sysfs${NL}tmpfs"
        if [[ $alter == alter_nothing ]]; then
                is "$RC:$OUT" "0:$want" "[19 $desc] runs: /dev/null, /proc, /sys and /dev are fresh"
        elif ((RC == 0)); then
                is "$OUT" "$want" "[19 $desc] replaced: /dev/null, /proc, /sys and /dev are fresh"
        elif ((RC == 125)); then
                like "$ERR" "^kubemount" "[19 $desc] refused: $ERR"
        else
                not_ok "[19 $desc] refused (125) or replaced (0)"
                diag "exit $RC" "$OUT" "$ERR"
        fi
        is "$(canary_state)" "$before_can" "[19 $desc] the canary directory is untouched"
        is "$(ls -A "$ETC_OV/upper")" "" "[19 $desc] /etc is untouched (nothing in its overlay's upper dir)"
        is "$(host_mounts)" "$before_mounts" "[19 $desc] the host's mount table is unchanged"
}
alter_proc_etc() { rm -rf "${1:?}/proc" && ln -s /etc "${1:?}/proc"; }
alter_sys_etc() { rm -rf "${1:?}/sys" && ln -s /etc "${1:?}/sys"; }
alter_dev_etc() { rm -rf "${1:?}/dev" && ln -s /etc "${1:?}/dev"; }
alter_proc_up() { rm -rf "${1:?}/proc" && ln -s ../../.. "${1:?}/proc"; }
alter_sys_up() { rm -rf "${1:?}/sys" && ln -s ../../.. "${1:?}/sys"; }
alter_dev_up() { rm -rf "${1:?}/dev" && ln -s ../../.. "${1:?}/dev"; }
alter_dev_host() { rm -rf "${1:?}/dev" && ln -s "$CAN" "${1:?}/dev"; }
alter_pts_etc() { ln -s /etc "${1:?}/dev/pts" && ln -s "$CAN/dir" "${1:?}/dev/shm"; }
alter_null_file() { echo canary-null >"${1:?}/dev/null"; }
alter_null_passwd() { ln -s /etc/passwd "${1:?}/dev/null"; }
alter_null_host() { ln -s "$CAN/file" "${1:?}/dev/null" && ln -s "$CAN/file" "${1:?}/dev/fuse"; }
alter_nothing() { :; }
t19 "control: an unchanged copy" alter_nothing
t19 "/proc -> /etc" alter_proc_etc
t19 "/sys -> /etc" alter_sys_etc
t19 "/dev -> /etc" alter_dev_etc
t19 "/proc -> ../../.." alter_proc_up
t19 "/sys -> ../../.." alter_sys_up
t19 "/dev -> ../../.." alter_dev_up
t19 "/dev -> a host path" alter_dev_host
t19 "/dev/pts -> /etc, /dev/shm -> a host dir" alter_pts_etc
t19 "/dev/null a regular file" alter_null_file
is "$(cat "$R/dev/null" 2>&1)" "canary-null" "[19 /dev/null a regular file] the image's file is unchanged"
t19 "/dev/null -> /etc/passwd" alter_null_passwd
t19 "/dev/null, /dev/fuse -> a host file" alter_null_host
t19 "/proc -> /etc, --read-only" alter_proc_etc --read-only
# An escape through a symlink in the image as the working directory.
alter_escape() { ln -s ../../.. "${1:?}/escape"; }
rm -rf --one-file-system "${CAN:?}/a"
mkdir -p "$CAN/a/b"
rootfs_copy "$R" && alter_escape "$R"
run km run --rootfs "$R" --cwd /escape -- /usr/bin/probe cwd
is "$(cwd_verdict)" "" "[16 run] --cwd /escape (-> ../../..): refused or confined"
rm -rf --one-file-system "${CAN:?}/a"

# ---- 9: kill -9 of the CLI during runs ----
# Killed at 0-90 ms: before the request, while the container is set up, while
# it runs.  An attached run whose caller is gone is ended and its state
# removed, as its end would have: the same name works again.
before_mounts=$(host_mounts)
for i in $(seq 1 20); do
        "$KUBEMOUNT" run --rootfs "$ROOTFS" --name "t9-$i" --mount "$KUBELET_DIR:/var/lib/kubelet:rslave" -- \
                sleep 30 >/dev/null 2>&1 &
        cli=$!
        sleep "0.0$((i % 10))"
        kill -KILL "$cli" 2>/dev/null
        wait "$cli" 2>/dev/null
done
# Left: a process of theirs, or one that ps lists as running.  Checked twice,
# a second apart, so that a container still being set up is not missed.
t9_left() { pgrep -fx "sleep 30" >/dev/null || km ps 2>/dev/null | grep -q "^t9-"; }
if wait_for 15 eval '! t9_left' && sleep 1 && ! t9_left; then ok "[9] no container of a killed run is left"; else
        not_ok "[9] no container of a killed run is left"
        diag "$(ps -eo pid,ppid,args)" "$(km ps 2>&1)"
fi
if wait_for 5 eval '[[ $(host_mounts) == "$before_mounts" ]]'; then ok "[9] no mount is left in the host"; else
        not_ok "[9] no mount is left in the host"
        diag "$(diff <(echo "$before_mounts") <(host_mounts))"
fi
run km ps
unlike "$OUT" "t9-" "[9] ps lists none of them running"
# Killed while its container runs, then the same run again at once (what a
# kubelet does after a timeout), then after the container is gone.
"$KUBEMOUNT" run --rootfs "$ROOTFS" --name t9 -- sleep 30 >/dev/null 2>&1 &
cli=$!
wait_for 10 eval '[[ $(vcs_status t9) == running ]]'
t9=$(vcs_pid t9)
kill -KILL "$cli"
wait "$cli" 2>/dev/null
run vcs_run --name t9 -- echo retry
diag "[9] the same run at once: exit $RC ${ERR//$NL/ }"
if wait_for 10 vcs_gone "$t9"; then ok "[9] the container of the killed run ends"; else
        not_ok "[9] the container of the killed run ends"
        kill -KILL "$t9" 2>/dev/null
fi
run vcs_run --name t9 -- echo retry
is "$RC:$OUT" "0:retry" "[9] then a retry with the same name works"
run vcs_run -- echo retry
is "$RC:$OUT" "0:retry" "[9] a retry works"
bad=""
for i in $(seq 1 20); do
        run vcs_run --name "t9-$i" --mount "$KUBELET_DIR:/var/lib/kubelet:rslave" -- echo retry
        [[ $RC:$OUT == 0:retry ]] || bad+=" t9-$i: exit $RC, ${ERR//$NL/ };"
done
is "$bad" "" "[9] a retry with the same name works"
check "[9] the agent is still there" kill -0 "$AGENT"

# ---- 15: the state file corrupted ----
run vcs_run --detach --name s1 -- sleep 1000
run vcs_run --detach --name s2 -- sleep 1000
s1=$(vcs_pid s1) s2=$(vcs_pid s2)
sf=$(find "$KUBEMOUNT_STATE_DIR" -name state.json -path '*s1*' 2>/dev/null | head -n1)
[[ -n $sf ]] || sf=$(grep -rlF '"s1"' "$KUBEMOUNT_STATE_DIR" --include='*.json' 2>/dev/null | head -n1)
if [[ -n $sf ]]; then ok "[15] s1's state file: ${sf#"$KUBEMOUNT_STATE_DIR"/}"; else
        not_ok "[15] s1's state file (state.json) is found"
        diag "$(find "$KUBEMOUNT_STATE_DIR" 2>&1)"
        sf=$KUBEMOUNT_STATE_DIR/state.json
fi
good=$(cat "$sf" 2>/dev/null)
VICTIM=$NODE/victim
mkdir -p "$VICTIM"
printf '{"name":"victim","pid":1}\n' >"$VICTIM/state.json"
victim_state() { find "$VICTIM" -printf '%y %m %s %p\n' | sort; sha256sum <"$VICTIM/state.json"; }
victim_before=$(victim_state)
for mode in truncated garbage empty symlink; do
        rm -f "$sf"
        case $mode in
        truncated) printf '%s' "${good:0:$((${#good} / 2))}" >"$sf" ;;
        garbage) head -c 512 /dev/urandom >"$sf" ;;
        empty) : >"$sf" ;;
        symlink) ln -s "$VICTIM/state.json" "$sf" ;;
        esac
        run km ps -a
        holds "[15 $mode] ps -a does not crash (exit $RC)" test "$RC" -lt 128
        like "$OUT" "(^|$NL)s2[[:space:]]+${s2}[[:space:]]+running" "[15 $mode] ps -a still lists s2 running"
        like "$OUT$ERR" "s1|[Ss]tate|corrupt" "[15 $mode] ... and s1, or says what is wrong"
        run km ps --json -a
        holds "[15 $mode] ps --json -a does not crash (exit $RC)" test "$RC" -lt 128
        holds "[15 $mode] ... prints valid JSON" python3 -c 'import json, sys; json.loads(sys.argv[1])' "$OUT"
        run km --kubelet-dir="$KUBELET_DIR" gc
        holds "[15 $mode] gc does not crash (exit $RC)" test "$RC" -lt 128
        check "[15 $mode] the agent is still there" kill -0 "$AGENT"
        is "$(victim_state)" "$victim_before" "[15 $mode] the symlink's target is untouched"
done
run km rm -f s1
is "$RC" 0 "[15] rm -f s1 with its state a symlink"
if wait_for 10 vcs_gone "$s1"; then ok "[15] ... s1's PID 1 is gone"; else
        not_ok "[15] ... s1's PID 1 is gone"
        kill -KILL "$s1" 2>/dev/null
fi
is "$(victim_state)" "$victim_before" "[15] ... the symlink's target is untouched"
check "[15] rm -f s2" km rm -f s2

km rm -f t >/dev/null 2>&1
vcs_cleanup
umount /etc || umount -l /etc
is "$(ls -A "$ETC_OV/upper")" "" "/etc: nothing was written"
node_down "vcs threats"
done_testing
