#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 6: password=/secret=/key= options given on -o, through
# --sensitive-options-fd or --sensitive-options-file never appear in
# kubemount's stdout, stderr (also with -v, also on failure) or list --json;
# given through an fd or a file they are not in kubemount's /proc/PID/cmdline;
# given with -o (as mount-utils does) their values are overwritten there once
# parsed (issue 9, item 18), by kubemount mount and by the nsenter shim when
# it routes a mount (also in the parent that waits when it forks).
# They do reach the mount: a fake mount helper (/sbin/mount.kmfake, laid over
# the sandbox's /usr/sbin only) records what it was given.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

SECRETS="password=hunter2,secret=s3cr3tv4lue,key=k3yv4lue"
LEAK='hunter2|s3cr3tv4lue|k3yv4lue'

node_up --no-kubelet
T=$KUBELET_DIR/pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount
mkdir -p "$T"

# no_leak DESC TEXT
no_leak() { unlike "$2" "$LEAK" "$1: no secret in it"; }

# --- failing mounts: tmpfs refuses these options, the error must not echo them
run "$KUBEMOUNT" -v mount -v -t tmpfs -o "size=1m,$SECRETS" tmpfs "$T"
is "$RC" 32 "tmpfs refuses -o $SECRETS (exit 32)"
no_leak "stdout and stderr of the failed -o mount" "$OUT$ERR"
printf '%s\n' "$SECRETS" >"$KM_SCRATCH/secret-file"
chmod 600 "$KM_SCRATCH/secret-file"
run "$KUBEMOUNT" -v mount -v -t tmpfs -o size=1m --sensitive-options-file="$KM_SCRATCH/secret-file" tmpfs "$T"
is "$RC" 32 "tmpfs refuses the options of --sensitive-options-file (exit 32)"
no_leak "stdout and stderr of the failed file mount" "$OUT$ERR"
run "$KUBEMOUNT" -v mount -v -t tmpfs -o size=1m --sensitive-options-fd=3 tmpfs "$T" 3<"$KM_SCRATCH/secret-file"
is "$RC" 32 "tmpfs refuses the options of --sensitive-options-fd (exit 32)"
no_leak "stdout and stderr of the failed fd mount" "$OUT$ERR"
run "$KUBEMOUNT" mount -t tmpfs -o $'password=hunter2\n' tmpfs "$T"
is "$RC" 1 "a secret with a newline is rejected (exit 1)"
no_leak "the rejection message" "$OUT$ERR"
ln -s "$KM_SCRATCH/secret-file" "$KM_SCRATCH/secret-link"
run "$KUBEMOUNT" mount -t tmpfs --sensitive-options-file="$KM_SCRATCH/secret-link" tmpfs "$T"
is "$RC" 1 "--sensitive-options-file refuses a symlink (exit 1)"
no_leak "the symlink refusal" "$OUT$ERR"
check_fails "nothing mounted so far" is_mounted host "$T"

# --- a mount helper that takes the secrets: mount.kmfake records its
# arguments, waits for a go file, then mounts a tmpfs.
H=$NODE/helpers
mkdir -p "$H"
cat >"$H/mount.kmfake" <<HELPER
#!/bin/sh
printf '%s\n' "\$@" >"$NODE/helper.args"
while [ ! -e "$NODE/helper.go" ]; do sleep 0.02; done
rm -f "$NODE/helper.go"
exec mount -t tmpfs -o size=1m kmfake "\$2"
HELPER
chmod 755 "$H/mount.kmfake"
mount -t overlay -o "lowerdir=$H:/usr/sbin" km-helpers /usr/sbin || bail_out "cannot lay a helper over /usr/sbin"

# helper_mount DESC WAY: kubemount mount -t kmfake with the secrets given
# WAY (-o, fd, file); checks cmdline while the helper waits, output, list.
helper_mount() {
        local desc=$1 way=$2 pid fifo cmdline w child
        rm -f "$NODE/helper.args" "$NODE/helper.go"
        case $way in
        -o) spawn "$KUBEMOUNT" -v mount -v -t kmfake -o "size=1m,$SECRETS" src "$T" \
                >"$KM_SCRATCH/out" 2>"$KM_SCRATCH/err" ;;
        nsenter) KUBEMOUNT_KUBELET_DIR=$KUBELET_DIR spawn "$NSENTER_COMPAT" --mount=/proc/1/ns/mnt -- \
                mount -t kmfake -o "size=1m,$SECRETS" src "$T" >"$KM_SCRATCH/out" 2>"$KM_SCRATCH/err" ;;
        nsenter-fork) KUBEMOUNT_KUBELET_DIR=$KUBELET_DIR spawn "$NSENTER_COMPAT" --mount=/proc/1/ns/mnt \
                --pid=/proc/1/ns/pid -- mount -t kmfake -o "size=1m,$SECRETS" src "$T" \
                >"$KM_SCRATCH/out" 2>"$KM_SCRATCH/err" ;;
        file) spawn "$KUBEMOUNT" -v mount -v -t kmfake -o size=1m \
                --sensitive-options-file="$KM_SCRATCH/secret-file" src "$T" >"$KM_SCRATCH/out" 2>"$KM_SCRATCH/err" ;;
        fd)
                # kubemount reads fd 3 to EOF: hold the writing end and look
                # at its command line while it waits for the secret.
                fifo=$NODE/secret.fifo
                rm -f "$fifo"
                mkfifo "$fifo"
                exec {w}<>"$fifo"
                spawn "$KUBEMOUNT" -v mount -v -t kmfake -o size=1m --sensitive-options-fd=3 src "$T" \
                        3<"$fifo" {w}>&- >"$KM_SCRATCH/out" 2>"$KM_SCRATCH/err"
                wait_for 5 grep -qs kubemount "/proc/$SPAWNED/comm"
                cmdline=$(tr '\0' ' ' <"/proc/$SPAWNED/cmdline")
                like "$cmdline" "sensitive-options-fd=3" "$desc: kubemount is waiting for the secret on fd 3"
                no_leak "$desc: its /proc/PID/cmdline" "$cmdline"
                printf '%s' "$SECRETS" >&"$w"
                exec {w}>&-
                ;;
        esac
        pid=$SPAWNED
        if wait_for 10 test -e "$NODE/helper.args"; then
                ok "$desc: kubemount runs the mount.kmfake helper"
        else
                not_ok "$desc: kubemount runs the mount.kmfake helper"
                diag "$(cat "$KM_SCRATCH/err")"
        fi
        cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
        case $way in
        nsenter*) like "$cmdline" "nsenter.* mount -t kmfake" "$desc: the shim is running while the helper waits" ;;
        *) like "$cmdline" "kubemount" "$desc: kubemount is running while the helper waits" ;;
        esac
        no_leak "$desc: its /proc/PID/cmdline" "$cmdline"
        if [[ $way == -o || $way == nsenter* ]]; then
                like "$cmdline" "-o size=1m,password=\*{7},secret=\*{11},key=\*{8} src" \
                        "$desc: ... where the values are overwritten, the keys kept"
        fi
        if [[ $way == nsenter-fork ]]; then
                child=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
                child=${child%% *}
                cmdline=$(tr '\0' ' ' <"/proc/${child:-0}/cmdline" 2>&1)
                like "$cmdline" "mount -t kmfake" "$desc: its forked child routes the mount"
                no_leak "$desc: the child's /proc/PID/cmdline" "$cmdline"
        fi
        # mount(8)'s helper protocol puts options on the helper's command
        # line: unavoidable there, and the proof that the secrets arrived.
        like "$(cat "$NODE/helper.args")" "password=hunter2,secret=s3cr3tv4lue,key=k3yv4lue" \
                "$desc: the helper received the secrets intact"
        touch "$NODE/helper.go"
        wait "$pid"
        is "$?" 0 "$desc: the mount succeeds"
        check "$desc: the target is mounted" is_mounted host "$T"
        no_leak "$desc: stdout and stderr (with -v)" "$(cat "$KM_SCRATCH/out" "$KM_SCRATCH/err")"
        run "$KUBEMOUNT" list --json
        like "$OUT" "\"target\": \"$T\"" "$desc: list --json shows the mount"
        no_leak "$desc: list --json" "$OUT$ERR"
        run "$KUBEMOUNT" list
        no_leak "$desc: list" "$OUT$ERR"
        check "$desc: kubemount umount" "$KUBEMOUNT" umount "$T"
}

helper_mount "secrets on -o" -o
helper_mount "secrets on --sensitive-options-file" file
helper_mount "secrets on --sensitive-options-fd" fd
[[ -x ${NSENTER_COMPAT:-} ]] || { echo "Bail out! no nsenter-compat binary: set NSENTER_COMPAT (meson test sets it)"; exit 1; }
helper_mount "secrets on -o through the nsenter shim" nsenter
helper_mount "secrets on -o through the nsenter shim that forks (--pid)" nsenter-fork

umount /usr/sbin
node_down "sensitive options"
done_testing
