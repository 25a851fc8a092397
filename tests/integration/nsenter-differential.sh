#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2016 # $(...) and $$ in single quotes are for the shell nsenter runs
# THREATS 26: nsenter-compat against util-linux nsenter, vector by vector.
# Each argument vector runs through both binaries, each installed as
# "nsenter" in a directory of its own and found through PATH (so argv[0] and
# getopt's messages are the same), from the same working directory, with the
# same stdin and environment.  Both must give the same stdout, the same
# stderr and the same exit status (or die of the same signal).  Each vector
# also states what util-linux does (exit 3, signal 9, ...), so that a vector
# that silently fails the same way in both (say, a namespace that cannot be
# entered at all) does not pass for nothing.
#
# Namespaces entered: the sandbox host (/proc/1/ns/*, -t 1), a pod of
# node.sh (its mount namespace) and "pod sandboxes" with their own pid, UTS,
# IPC and network namespaces.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

need_nsenter_pair
need_tools perl # tells an exit status from a signal

node_up
pod_up a
POD=${KM_CTR_PID[pod-a]}

D=$KM_SCRATCH/differential
mkdir -p "$D/real" "$D/shim" "$D/cwd"
ln -s "$REAL" "$D/real/nsenter"
ln -s "$SHIM" "$D/shim/nsenter"
printf 'not a program\n' >"$D/cwd/not-executable"
chmod 0644 "$D/cwd/not-executable"

# A pod sandbox: its own pid, UTS, IPC, net and time namespaces, hostname
# "pod-sandbox".  unshare --fork: $! is unshare, the holder is its child.
unshare --pid --uts --ipc --net --fork --kill-child -- \
        sh -c 'hostname pod-sandbox; exec sleep infinity' </dev/null >/dev/null 2>&1 &
node_track $!
holder_of() { local c; c=$(cat "/proc/$1/task/$1/children" 2>/dev/null) && [[ -n $c ]] && HOLDER=${c%% *}; }
wait_for 5 holder_of $! || { echo "Bail out! the pod sandbox did not start"; exit 1; }
wait_for 5 test "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep
SBX=$HOLDER
node_track "$SBX"
# A rootless-style container: a child user namespace (root mapped to root)
# owning its mount and UTS namespaces.
unshare --user --map-root-user --mount --uts --fork --kill-child -- \
        sh -c 'hostname userns-box; exec sleep infinity' </dev/null >/dev/null 2>&1 &
node_track $!
wait_for 5 holder_of $! || { echo "Bail out! the user namespace holder did not start"; exit 1; }
wait_for 5 test "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep
USR=$HOLDER
node_track "$USR"

# perl tells exit from signal: "exit N" or "signal N" into the file $1.
# shellcheck disable=SC2016
PERL_RUN='my $f = shift; system { $ARGV[0] } @ARGV; my $s = $?;
open(my $o, ">", $f) or die; print $o ($s == -1 ? "exec failed" : $s & 127 ? "signal " . ($s & 127) : "exit " . ($s >> 8));'

VECTORS=0
# differ WANT DESC [--stdin TEXT] [--env VAR=VALUE]... [--out TEXT] [--status-only] -- ARG...
#   WANT: "exit N" or "signal N", what util-linux nsenter gives; --out: the
#   stdout util-linux gives; --status-only: stdout and stderr differ by design.
differ() {
        local want=$1 desc=$2 stdin=none out=none status_only=0 w
        local -a envs=(LC_ALL=C SHELL=/bin/sh)
        shift 2
        while [[ $1 != -- ]]; do
                case $1 in
                --stdin) stdin=$2 && shift 2 ;;
                --env) envs+=("$2") && shift 2 ;;
                --out) out=$2 && shift 2 ;;
                --status-only) status_only=1 && shift ;;
                *) echo "Bail out! differ: unknown option $1" && exit 1 ;;
                esac
        done
        shift
        VECTORS=$((VECTORS + 1))
        for w in real shim; do
                rm -f "$D/$w.status"
                if [[ $stdin == none ]]; then
                        (cd "$D/cwd" && exec env "${envs[@]}" PATH="$D/$w:$PATH" perl -e "$PERL_RUN" "$D/$w.status" \
                                nsenter "$@" </dev/null >"$D/$w.out" 2>"$D/$w.err")
                else
                        printf '%s\n' "$stdin" | (cd "$D/cwd" && exec env "${envs[@]}" PATH="$D/$w:$PATH" \
                                perl -e "$PERL_RUN" "$D/$w.status" nsenter "$@" >"$D/$w.out" 2>"$D/$w.err")
                fi
        done
        local rs ss why=()
        rs=$(cat "$D/real.status" 2>/dev/null) ss=$(cat "$D/shim.status" 2>/dev/null)
        local what="same stdout, stderr and status"
        ((status_only)) && what="same status (output differs by design)"
        [[ $rs == "$ss" ]] || why+=("status: util-linux '$rs', shim '$ss'")
        if ((!status_only)) && ! cmp -s "$D/real.out" "$D/shim.out"; then
                why+=("stdout differs:" "$(diff -u --label util-linux --label shim "$D/real.out" "$D/shim.out" | head -20)")
        fi
        if ((!status_only)) && ! cmp -s "$D/real.err" "$D/shim.err"; then
                why+=("stderr differs:" "$(diff -u --label util-linux --label shim "$D/real.err" "$D/shim.err" | head -20)")
        fi
        # What util-linux gives: the vector tests what it means to.
        [[ $rs == "$want" ]] || why+=("util-linux gave '$rs', the vector expects '$want':" "$(head -c 400 "$D/real.err")")
        if [[ $out != none && $(<"$D/real.out") != "$out" ]]; then
                why+=("util-linux printed:" "$(head -c 400 "$D/real.out")" "the vector expects:" "$out")
        fi
        if ((${#why[@]})); then
                not_ok "$desc: $what ($rs)"
                diag "argv: nsenter$(printf ' %q' "$@")" "${why[@]}"
        else
                ok "$desc: $what ($rs)"
        fi
}

ns() { readlink "/proc/$1/ns/$2"; }
HOSTMNT=/proc/1/ns/mnt
PODMNT=/proc/$POD/ns/mnt
SANDBOX_PIDNS=$(ns self pid)

# ---- namespace files and targets ----------------------------------------
differ "exit 0" "--mount=FILE -- PROG" --out "$(ns 1 mnt)" -- --mount=$HOSTMNT -- readlink /proc/self/ns/mnt
differ "exit 0" "--mount=FILE PROG (no --)" --out "hi" -- --mount=$HOSTMNT echo hi
differ "exit 0" "-mFILE" --out "$(ns "$POD" mnt)" -- -m"$PODMNT" readlink /proc/self/ns/mnt
differ "exit 0" "-mFILE in a pod: its root" -- -m"$PODMNT" -t "$POD" -r ls /
differ "exit 1" "-m FILE: FILE is the program, and -m has no target" -- -m $HOSTMNT true
differ "exit 1" "--mount FILE: FILE is the program, and --mount has no target" -- --mount $HOSTMNT
differ "exit 126" "-t 1 -m FILE: FILE is run as the program" -- -t 1 -m $HOSTMNT
differ "exit 0" "-t PID -m" --out "$(ns "$POD" mnt)" -- -t "$POD" -m readlink /proc/self/ns/mnt
differ "exit 0" "--target=PID --mount --" --out "$(ns "$POD" mnt)" -- --target="$POD" --mount -- readlink /proc/self/ns/mnt
differ "exit 0" "--target PID (separate argument)" -- --target 1 --mount true
differ "exit 0" "-tPID -m" -- -t1 -m true
differ "exit 0" "-a -t PID: every namespace but the own user namespace" \
        --out "$(ns "$SBX" uts) $(ns "$SBX" net) $(ns "$SBX" pid)" -- \
        -a -t "$SBX" sh -c 'echo $(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/net) $(readlink /proc/self/ns/pid)'
differ "exit 1" "-a without a target" -- -a true
differ "exit 0" "-u: the pod's hostname" --out pod-sandbox -- -t "$SBX" -u hostname
differ "exit 0" "--uts=FILE" --out pod-sandbox -- --uts=/proc/"$SBX"/ns/uts hostname
differ "exit 0" "-i" --out "$(ns "$SBX" ipc)" -- -t "$SBX" -i readlink /proc/self/ns/ipc
differ "exit 0" "-iFILE" --out "$(ns "$SBX" ipc)" -- -i/proc/"$SBX"/ns/ipc readlink /proc/self/ns/ipc
differ "exit 0" "-n" --out "$(ns "$SBX" net)" -- -t "$SBX" -n readlink /proc/self/ns/net
differ "exit 0" "--net=FILE" --out "$(ns "$SBX" net)" -- --net=/proc/"$SBX"/ns/net readlink /proc/self/ns/net
differ "exit 1" "-U into the own user namespace: setns fails" -- -t 1 -U true
differ "exit 1" "--user=FILE of the own user namespace" -- --user=/proc/1/ns/user true
differ "exit 1" "--preserve-credentials -U" -- --preserve-credentials -t 1 -U true
differ "exit 0" "-C" -- -t 1 -C true
differ "exit 0" "--cgroup=FILE" -- --cgroup=/proc/1/ns/cgroup true
differ "exit 0" "-T" -- -t 1 -T true
differ "exit 0" "-TFILE" -- -T/proc/1/ns/time true
differ "exit 0" "-u -i -n -p -C -T together" -- -t "$SBX" -u -i -n -p -C -T hostname
differ "exit 0" "-U -m -u into a child user namespace" --out "0 userns-box" -- \
        -t "$USR" -U -m -u sh -c 'echo $(id -u) $(hostname)'
differ "exit 0" "-m -U: the user namespace is still entered first" --out "$(ns "$USR" user)" -- \
        -t "$USR" -m -U readlink /proc/self/ns/user
differ "exit 0" "-a with a child user namespace" --out "$(ns "$USR" user) $(ns "$USR" mnt)" -- \
        -a -t "$USR" sh -c 'echo $(readlink /proc/self/ns/user) $(readlink /proc/self/ns/mnt)'
differ "exit 0" "--user=FILE --mount=FILE" -- --user=/proc/"$USR"/ns/user --mount=/proc/"$USR"/ns/mnt id -u
differ "exit 0" "--mount=FILE --user=FILE (other order)" -- --mount=/proc/"$USR"/ns/mnt --user=/proc/"$USR"/ns/user hostname
differ "exit 1" "-U -S UID not mapped there: setuid fails" -- -t "$USR" -U -S 1000 id
differ "exit 0" "-U --preserve-credentials" -- -t "$USR" -U --preserve-credentials id -u
differ "exit 0" "--pid=FILE (pid_for_children)" -- --pid=/proc/1/ns/pid_for_children echo ok

# ---- the pid namespace: a fork, the child inside ------------------------
differ "exit 0" "-p: the child is in the target's pid namespace" --out "$(ns "$SBX" pid)" -- \
        -t "$SBX" -p readlink /proc/self/ns/pid
differ "exit 0" "-p: the child is not PID 1 there, the holder is" --out "not 1" -- \
        -t "$SBX" -p sh -c 'test $$ != 1 && echo not 1'
differ "exit 0" "-F -p: no fork, the program stays in our pid namespace" --out "$SANDBOX_PIDNS" -- \
        -F -t "$SBX" -p readlink /proc/self/ns/pid
differ "exit 3" "-p: the child's exit status" -- -t "$SBX" -p sh -c 'exit 3'
differ "signal 9" "-p: the child is killed (SIGKILL): nsenter dies of it too" -- -t "$SBX" -p sh -c 'kill -9 $$'
differ "signal 15" "-p: the child is killed (SIGTERM)" -- -t "$SBX" -p sh -c 'kill -TERM $$'
differ "exit 0" "-p: stdin reaches the child" --stdin data --out data -- -t "$SBX" -p cat

# ---- credentials, root, working directory --------------------------------
differ "exit 0" "-S/-G" --out "4242 4343" -- -t 1 -m -S 4242 -G 4343 sh -c 'echo $(id -u) $(id -g)'
differ "exit 0" "--setuid=/--setgid=" --out "0" -- -t 1 -m --setuid=0 --setgid=0 id -u
differ "exit 1" "-S not a number" -- -t 1 -m -S abc id -u
differ "exit 1" "-G out of range" -- -t 1 -m -G 99999999999999999999 id -g
differ "exit 1" "-S without an argument" -- -S
differ "exit 0" "--preserve-credentials without -U" -- --preserve-credentials -t 1 -m -S 7 id -u
differ "exit 0" "-r: the target's root" -- -t "$POD" -m -r ls /
differ "exit 0" "-rDIR" -- -r/ pwd
differ "exit 126" "-r DIR: DIR is the program" -- -t 1 -r /tmp
differ "exit 1" "-rDIR missing" -- -r/nonexistent true
differ "exit 0" "-w: the target's working directory" -- -t "$POD" -m -w pwd
differ "exit 0" "-wDIR" --out /tmp -- -w/tmp pwd
differ "exit 0" "--wd=. (the kubelet's form)" -- --target=1 --mount --wd=. -- pwd
differ "exit 1" "-wDIR missing" -- -w/nonexistent true
differ "exit 0" "-W DIR" --out /etc -- -t 1 -m -W /etc pwd
differ "exit 0" "-WDIR" --out /etc -- -t 1 -m -W/etc pwd
differ "exit 0" "--wdns=DIR" --out /etc -- -t 1 -m --wdns=/etc pwd
differ "exit 126" "--wdns DIR: DIR is the program" -- -t 1 -m --wdns /etc pwd
differ "exit 1" "-W DIR missing" -- -t 1 -m -W /nonexistent pwd
differ "exit 1" "-w -W conflict" -- -t 1 -w -W / true
differ "exit 1" "-W -w conflict" -- -t 1 -W / -w true
differ "exit 0" "-r with -W: -W is inside the new root" --out /etc -- -t "$POD" -m -r -W /etc pwd
differ "exit 0" "-F" -- -F -t 1 -m true
differ "exit 0" "-Z (no SELinux here)" -- -Z -t 1 -m true
differ "exit 0" "--follow-context" -- --follow-context -t 1 -m true

# ---- getopt: --, clusters, abbreviations, unknown options -----------------
differ "exit 127" "-- then a program starting with -" -- -t 1 -m -- -x
differ "exit 0" "nothing after --: the shell" --env SHELL=/bin/true -- -t 1 -m --
differ "exit 0" "clustered -Ft1 -m" -- -Ft1 -m true
differ "exit 0" "clustered -FZm -t 1" -- -FZm -t 1 true
differ "exit 1" "clustered -mui: -m takes 'ui' as its file" -- -t 1 -mui true
differ "exit 0" "abbreviation --mou=FILE" -- --mou=$HOSTMNT true
differ "exit 0" "abbreviations --targ=1 --mo" -- --targ=1 --mo true
differ "exit 0" "abbreviation --pr (preserve-credentials)" -- --pr -t 1 -m true
differ "exit 1" "ambiguous --p" -- --p true
differ "exit 1" "unknown long option" -- --bogus true
differ "exit 1" "unknown short option" -- -x true
differ "exit 1" "-t without an argument" -- -t
differ "exit 1" "--target without an argument" -- --target
differ "exit 1" "--mount= (empty file name)" -- --mount= true
differ "exit 1" "-m=FILE (the = is part of the name)" -- -m=$HOSTMNT true
differ "exit 1" "no-argument option given one: --no-fork=1" -- --no-fork=1 true

# ---- bad pids ------------------------------------------------------------
differ "exit 1" "pid 'abc'" -- -t abc -m true
differ "exit 1" "pid '-1'" -- -t -1 -m true
differ "exit 1" "pid 99999999 (no such process)" -- -t 99999999 -m true
differ "exit 1" "pid 999999999999999999999 (ERANGE)" -- -t 999999999999999999999 -m true
differ "exit 1" "pid '' (empty)" -- -t "" -m true
differ "exit 1" "pid 0 (no target)" -- -t 0 -m true
differ "exit 1" "pid '1x'" -- -t 1x -m true
differ "exit 0" "pid ' 1' (strtoul skips the space)" -- -t " 1" -m true
differ "exit 0" "pid '+1'" -- -t +1 -m true
differ "exit 1" "--target=abc" -- --target=abc --mount true
differ "exit 1" "a bad pid after a namespace file" -- --mount=$HOSTMNT -t abc true

# ---- namespace files that cannot be used ----------------------------------
differ "exit 1" "missing namespace file" -- --mount=/nonexistent/ns/mnt true
differ "exit 1" "a namespace file of the wrong type (net as mnt)" -- --mount=/proc/1/ns/net true
differ "exit 1" "a namespace file of the wrong type (mnt as uts)" -- --uts=$HOSTMNT true
differ "exit 1" "a regular file as namespace" -- --mount=/etc/passwd true
differ "exit 1" "a missing file after a good one" -- --mount=$HOSTMNT --net=/nonexistent true

# ---- the program: exit codes, signals, stdin, the shell -------------------
differ "exit 0" "exit 0" -- --mount=$HOSTMNT true
differ "exit 1" "exit 1" -- --mount=$HOSTMNT false
differ "exit 3" "exit 3 passes through" -- --mount=$HOSTMNT sh -c 'exit 3'
differ "exit 126" "a non-executable file: 126" -- --mount=$HOSTMNT "$D/cwd/not-executable"
differ "exit 126" "a directory as program: 126" -- --mount=$HOSTMNT /etc
differ "exit 127" "a missing program: 127" -- --mount=$HOSTMNT no-such-program-here
differ "exit 127" "a missing program by path: 127" -- --mount=$HOSTMNT /nonexistent/prog
differ "signal 9" "killed by SIGKILL: nsenter dies of the same signal" -- --mount=$HOSTMNT sh -c 'kill -9 $$'
differ "signal 15" "killed by SIGTERM" -- -t 1 -m sh -c 'kill -TERM $$'
differ "exit 0" "stdin passed through" --stdin data --out data -- --mount=$HOSTMNT cat
differ "exit 0" "stdin passed through to a program in a pod" --stdin "two words" --out "two words" -- -m"$PODMNT" -- cat
differ "exit 0" "stdout and stderr kept apart" -- -t 1 -m sh -c 'echo out; echo err >&2'
differ "exit 0" "no program: \$SHELL (/bin/true)" --env SHELL=/bin/true -- -t 1 -m
differ "exit 1" "no program: \$SHELL (/bin/false)" --env SHELL=/bin/false -- --mount=$HOSTMNT
differ "exit 127" "no program: a missing \$SHELL" --env SHELL=/nonexistent/sh -- -t 1 -m
differ "exit 126" "no program: a non-executable \$SHELL" --env SHELL="$D/cwd/not-executable" -- -t 1 -m
differ "exit 0" "no program, no options" --env SHELL=/bin/true --
differ "exit 0" "no program: stdin goes to the shell" --env SHELL=/bin/sh --stdin 'echo from-stdin' \
        --out from-stdin -- -t 1 -m
differ "exit 0" "mount with no arguments lists the table (the real mount runs)" -- -t 1 -m mount

# ---- mount and umount, routed through kubemount ------------------------------
# Their errors are kubemount's one-line messages (no "dmesg(1) may have more
# information" line, no "Try 'mount --help'"): the exit status must be
# mount(8)'s, the kubelet's "not mounted" probe is in nsenter-legacy.sh.
R=$NODE/routed
mkdir -p "$R/dir"
: >"$R/file"
differ "exit 32" "routed umount of a missing path" --status-only -- -t 1 -m umount "$R/missing"
differ "exit 32" "routed umount of a dir that is not mounted" --status-only -- -t 1 -m umount "$R/dir"
differ "exit 32" "routed mount on a missing target" --status-only -- -t 1 -m mount -t tmpfs x "$R/missing"
differ "exit 32" "routed mount on a file" --status-only -- -t 1 -m mount -t tmpfs x "$R/file"
differ "exit 32" "routed mount with an option tmpfs refuses" --status-only -- -t 1 -m mount -t tmpfs -o bogus=1 x "$R/dir"
differ "exit 32" "routed mount of an unknown type" --status-only -- -t 1 -m mount -t nosuchfs x "$R/dir"
differ "exit 32" "routed bind of a missing source" --status-only -- -t 1 -m mount -o bind "$R/missing" "$R/dir"
differ "exit 1" "routed mount with an unknown option" --status-only -- -t 1 -m mount --bogus x "$R/dir"
differ "exit 1" "routed mount with three arguments" --status-only -- -t 1 -m mount -t tmpfs a "$R/dir" c
differ "exit 1" "routed umount without arguments" --status-only -- -t 1 -m umount
differ "exit 0" "mount -V: the real mount answers" -- -t 1 -m mount -V
differ "exit 0" "umount --help: the real umount answers" -- -t 1 -m umount --help
check_fails "nothing stayed mounted on $R/dir" mountpoint -q "$R/dir"

# ---- help and version ------------------------------------------------------
# -h/--help and -V/--version print kubemount's own text by design (it says
# what the shim routes, and whose version it is): only the status is compared.
differ "exit 0" "-h" --status-only -- -h
differ "exit 0" "--help" --status-only -- --help
differ "exit 0" "--he (abbreviated)" --status-only -- --he
differ "exit 0" "-h after other options" --status-only -- -t 1 -m -h
differ "exit 0" "-V" --status-only -- -V
differ "exit 0" "--version" --status-only -- --version
differ "exit 1" "an error before -h wins" -- -x -h

diag "$VECTORS argument vectors compared"
if ((VECTORS >= 40)); then ok "at least 40 vectors ($VECTORS)"; else not_ok "at least 40 vectors ($VECTORS)"; fi

node_down "nsenter differential"
done_testing
