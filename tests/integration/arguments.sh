#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 4 and 5: argument injection (a source "-oro,--target=/etc", a
# target starting with "-", a type with commas or slashes) and option values
# with a newline, a backslash, NUL or an unbalanced quote are rejected with
# exit 1 before anything happens: no exec, no mount, mount table unchanged.
# A quoted context="...,..." stays one option.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
T=$KUBELET_DIR/pods/uid-1/volumes/v
mkdir -p "$T"
need_tools strace
have_strace=1

# rejected DESC WHY-ERE ARGS...: kubemount ARGS exits 1 with one line saying
# WHY, the host's mount table is unchanged, and (with strace) kubemount
# neither executed anything nor called mount(2).
rejected() {
        local desc=$1 why=$2 before
        shift 2
        before=$(cat /proc/1/mountinfo)
        if ((have_strace)); then
                run strace -f -qq -o "$KM_SCRATCH/strace" -e trace=execve,mount,fsopen,move_mount,open_tree \
                        "$KUBEMOUNT" "$@"
        else
                run "$KUBEMOUNT" "$@"
        fi
        is "$RC" 1 "$desc: exit 1"
        like "$ERR" "$why" "$desc: says why"
        is "$(wc -l <<<"$ERR")" 1 "$desc: in one line"
        if [[ $(cat /proc/1/mountinfo) == "$before" ]]; then ok "$desc: mount table unchanged"; else
                not_ok "$desc: mount table unchanged"
                diag "$(diff <(echo "$before") /proc/1/mountinfo)"
        fi
        if ((have_strace)); then
                local calls
                calls=$(grep -cE '^[0-9]+ +(execve|mount|fsopen|move_mount|open_tree)\(' "$KM_SCRATCH/strace")
                # The one execve is strace starting kubemount.
                is "$calls" 1 "$desc: no exec and no mount system call"
        fi
        check_fails "$desc: /etc is not a mount point" mountpoint -q /etc
}

rejected "source '-oro,--target=/etc' after --" "source '-oro,--target=/etc' starts with '-'" \
        mount -t tmpfs -- "-oro,--target=/etc" "$T"
# As mount-utils passes it (mount -t TYPE SOURCE TARGET): getopt takes the
# source for options, leaving no source: no fstab here, so nothing mounts.
rejected "source '-oro,--target=/etc' as a kubelet passes it" "can't find in /etc/fstab|no source" \
        mount -t tmpfs "-oro,--target=/etc" "$T"
rejected "target '-x' after --" "target '-x' starts with '-'" mount -t tmpfs tmpfs -- -x
rejected "target '--target=/etc' after --" "starts with '-'" mount -t tmpfs tmpfs -- --target=/etc
rejected "umount of target '-x'" "target '-x' starts with '-'" umount -- -x
rejected "type with commas 'tmpfs,ext4'" "type 'tmpfs,ext4' is not a filesystem type name" \
        mount -t tmpfs,ext4 tmpfs "$T"
rejected "type 'tmpfs,--bind'" "is not a filesystem type name" mount -t "tmpfs,--bind" tmpfs "$T"
rejected "type '../../bin/sh' (helper path)" "is not a filesystem type name" mount -t ../../bin/sh tmpfs "$T"
rejected "type starting with '-'" "is not a filesystem type name" mount "--types=-bind" tmpfs "$T"
rejected "an option with a newline" "contains a control character" mount -t tmpfs -o $'size=1m\nro' tmpfs "$T"
rejected "an option with a backslash" "contains a backslash" mount -t tmpfs -o 'size=1m\,ro' tmpfs "$T"
rejected "an option with an unbalanced quote" "unbalanced quote" mount -t tmpfs -o 'context="a,b' tmpfs "$T"
# The message shows control characters as '?': no log injection.
rejected "a source with a newline" "contains a control character" mount -t tmpfs $'tmp\nfs' "$T"
printf 'password=x\0,ro' >"$KM_SCRATCH/nul-options"
rejected "sensitive options with a NUL" "sensitive options" \
        mount -t tmpfs --sensitive-options-file="$KM_SCRATCH/nul-options" tmpfs "$T"
printf 'password=x\\y' >"$KM_SCRATCH/bs-options"
rejected "sensitive options with a backslash" "contains a backslash" \
        mount -t tmpfs --sensitive-options-file="$KM_SCRATCH/bs-options" tmpfs "$T"
check_fails "nothing is mounted on the target" is_mounted host "$T"

# context="system_u:object_r:x:s0:c460,c902" is one option.  Without SELinux,
# libmount drops SELinux options; had the value been cut at its inner comma,
# c902" would reach tmpfs as an option of its own and the mount would fail.
ctx='context="system_u:object_r:x:s0:c460,c902"'
check "a quoted context=\"...,c902\" mounts as one option" "$KUBEMOUNT" mount -t tmpfs -o "size=1m,$ctx,mode=0711" ctx "$T"
opts=$(findmnt -no FS-OPTIONS --mountpoint "$T")
like "$opts" "size=1024k.*mode=711" "... with the options around it intact"
unlike "$opts" "c902" "... and no stray c902"
"$KUBEMOUNT" umount "$T"
run "$KUBEMOUNT" mount -t tmpfs -o "size=1m,context=system_u:object_r:x:s0:c460,c902" ctx "$T"
is "$RC" 32 "control: the same value unquoted is two options, and tmpfs refuses c902 (exit 32)"
check_fails "control: nothing mounted" is_mounted host "$T"

# No shell, ever: a successful mount execs nothing (tmpfs has no helper).
if ((have_strace)); then
        strace -f -qq -o "$KM_SCRATCH/strace" -e trace=execve "$KUBEMOUNT" mount -t tmpfs -o size=1m ok "$T"
        is "$(grep -c execve "$KM_SCRATCH/strace")" 1 "a tmpfs mount execs nothing (no shell, no helper)"
        "$KUBEMOUNT" umount "$T"
else
        not_ok "a tmpfs mount execs nothing: strace is not installed"
fi

node_down "argument injection"
done_testing
