# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Node sandbox for kubemount's integration tests (sourced by each script in
# tests/integration/).  A script starts with
#
#     source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh"
#     node_sandbox "$@"
#
# which re-executes it as PID 1 of a new pid namespace and in a new mount
# namespace whose / is made rslave first, so nothing it mounts can reach the
# machine.  Inside, that namespace plays the node's *host*: /proc/1/ns/mnt
# (kubemount's default host namespace) is the script's own namespace.
# `node_sandbox --net "$@"` also gives it a network namespace of its own with
# only `lo` (up; all of 127/8 answers on it): network servers a test starts
# (tests/lib/servers.sh) listen there, where host-network containers reach
# them, never on the machine's network.  KM_SANDBOX_NET=1 inside then.
#
#     node_up [--private] [--no-kubelet]
#         a tmpfs $NODE with the kubelet dir $KUBELET_DIR on it (exported as
#         KUBEMOUNT_KUBELET_DIR, which kubemount and its nsenter honour); made rshared
#         like kubelet/kubemount setup would do (unless --private), and a
#         containerized kubelet (unless --no-kubelet);
#     ctr_up NAME HOSTPATH:CTRPATH:PROPAGATION...
#         a container: own mount namespace, own root (pivot_root), volumes
#         bound like a runtime does; kubelet_up / pod_up NAME are two kinds;
#     in_host / in_kubelet / in_pod NAME / in_ctr NAME   CMD...
#     mounts_in NS PREFIX   mount points at/under PREFIX as NS sees them,
#         NS = host | kubelet | pod:NAME | container NAME;
#         is_mounted NS PATH, mount_count [NS]
#     spawn [--in CONTAINER] CMD...   CMD in the background, PID in SPAWNED
#     node_track PID     a background process node_down must end
#     node_untrack PID   ... that the caller has ended itself
#     node_on_down CMD...  run by node_down after those processes and the
#         containers are gone (last registered first): undoes a change to
#         the host that node_up did not count
#     ctr_on_up CMD...   CMD NAME runs after each later ctr_up NAME (until node_down)
#     node_down          ends and unmounts all of it, then checks for leaks:
#         mounts in the host namespace, loop devices, processes in the pid
#         namespace must be back at what node_up counted.
#
# TAP: ok / not_ok / is / like / unlike / check / check_fails / skip / diag,
# plan N (or done_testing at the end), skip_all REASON (only for "not
# root"), bail_out REASON; run CMD captures RC, OUT, ERR; wait_for SECS CMD
# polls.  need_tools TOOL... bails out when a tool is missing: a test that
# quietly checks less is worse than a red one.
#
#     KM_CGROUP_LAYOUT=v2   the sandbox sees cgroup2 alone at /sys/fs/cgroup
#         (most real nodes); unset: the machine's layout.  cgroup_v2 (CG2),
#         test_cgroup NAME (a cgroup of the test's own, unique to the run,
#         removed at exit), cgroup_empty DIR.  Setting KM_TODO marks the following
# results "# TODO $KM_TODO": a known bug, the failure is expected.  Meson
# counts a TODO that passes as an error: drop the TODO when the bug is fixed.

set -u -o pipefail

KM_TAP_N=0
KM_TAP_FAILED=0
KM_TAP_PLANNED=0
KM_TODO=""

# ---- TAP ----------------------------------------------------------------

_tap() { # STATUS DESC
        KM_TAP_N=$((KM_TAP_N + 1))
        local line="$1 $KM_TAP_N - ${2//$'\n'/ }"
        if [[ -n $KM_TODO ]]; then
                line+=" # TODO $KM_TODO"
        elif [[ $1 == "not ok" ]]; then
                KM_TAP_FAILED=$((KM_TAP_FAILED + 1))
        fi
        printf '%s\n' "$line"
}
ok() { _tap ok "$*"; }
not_ok() { _tap "not ok" "$*"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
plan() {
        KM_TAP_PLANNED=1
        echo "1..$1"
}
skip() { # DESC REASON
        KM_TAP_N=$((KM_TAP_N + 1))
        echo "ok $KM_TAP_N - $1 # SKIP $2"
}
# Meson's TAP protocol reads failures and skips ("1..0 # SKIP") from the
# output and calls any non-zero exit an error, so meson.build sets
# KM_TAP_HARNESS=meson: then we exit 0.  Run by hand, a script exits 1 when a
# test failed and 77 when it skipped.
done_testing() {
        ((KM_TAP_PLANNED)) || echo "1..$KM_TAP_N"
        [[ ${KM_TAP_HARNESS:-} == meson ]] && exit 0
        exit $((KM_TAP_FAILED > 0))
}
skip_all() {
        echo "1..0 # SKIP $*"
        [[ ${KM_TAP_HARNESS:-} == meson ]] && exit 0
        exit 77
}
# bail_out REASON: the test cannot run here; that is a failure, never a skip.
bail_out() {
        echo "Bail out! $*"
        exit 1
}
# need_tools TOOL...: each TOOL (a command, or an absolute path) must be there.
need_tools() {
        local t missing=()
        for t; do
                if [[ $t == /* ]]; then
                        [[ -x $t ]] || missing+=("$t")
                else
                        command -v "$t" >/dev/null || missing+=("$t")
                fi
        done
        ((${#missing[@]} == 0)) || bail_out "missing tool${missing[1]:+s} ${missing[*]} (install: scripts/deps)"
}

# is GOT WANT DESC
is() {
        if [[ $1 == "$2" ]]; then
                ok "$3"
        else
                not_ok "$3"
                diag "got:  '$1'" "want: '$2'"
        fi
}
# like STRING ERE DESC / unlike STRING ERE DESC
like() {
        if [[ $1 =~ $2 ]]; then ok "$3"; else
                not_ok "$3"
                diag "'$1'" "does not match /$2/"
        fi
}
unlike() {
        if [[ $1 =~ $2 ]]; then
                not_ok "$3"
                diag "'$1'" "matches /$2/"
        else ok "$3"; fi
}

# run CMD...: runs CMD with output captured into RC, OUT and ERR.
# took WHAT: how long since the previous step (or since this file was sourced), as a diagnostic.
KM_STEP_START=$SECONDS
took() {
        diag "$1: $((SECONDS - KM_STEP_START))s"
        KM_STEP_START=$SECONDS
}
# fail_with DESC LOG: a failed step with the end of its log; nothing after it can run.
fail_with() {
        not_ok "$1"
        diag "$(tail -n 40 "$2")"
        tail -n 40 "$2" >&2 # meson shows a failed test's stderr
        done_testing
}
# tap_embed PREFIX CMD...: CMD's TAP stream as tests of ours (renumbered, PREFIX before each
# description, its plan dropped, its diagnostics kept); fails when CMD had a failure (a TODO
# one excepted), bailed out or ran no test.
tap_embed() {
        local prefix=$1 line n=0 bad=0 re='^(not )?ok( [0-9]+)?( -)? ?(.*)$'
        shift
        while IFS= read -r line; do
                if [[ $line =~ $re ]]; then
                        n=$((n + 1))
                        if [[ -n ${BASH_REMATCH[1]} ]]; then
                                not_ok "$prefix${BASH_REMATCH[4]}"
                                [[ ${BASH_REMATCH[4]} == *"# TODO"* ]] || bad=1 # an expected failure
                        else ok "$prefix${BASH_REMATCH[4]}"; fi
                elif [[ $line == "Bail out!"* ]]; then
                        not_ok "$prefix${line#Bail out! }"
                        bad=1
                elif [[ $line == "#"* ]]; then
                        printf '%s\n' "$line"
                fi
        done < <("$@")
        ((!bad && n > 0))
}

run() {
        "$@" >"$KM_SCRATCH/run.out" 2>"$KM_SCRATCH/run.err"
        RC=$?
        OUT=$(<"$KM_SCRATCH/run.out")
        ERR=$(<"$KM_SCRATCH/run.err")
}
# check DESC CMD... / check_fails DESC CMD...: CMD's exit status decides.
check() {
        local desc=$1
        shift
        run "$@"
        if ((RC == 0)); then ok "$desc"; else
                not_ok "$desc"
                diag "exit $RC: $*" "$OUT" "$ERR"
        fi
}
check_fails() {
        local desc=$1
        shift
        run "$@"
        if ((RC != 0)); then ok "$desc"; else
                not_ok "$desc"
                diag "unexpected success: $*" "$OUT" "$ERR"
        fi
}

# wait_for SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
        local deadline=$((SECONDS + $1))
        shift
        until "$@"; do
                ((SECONDS < deadline)) || return 1
                sleep 0.02
        done
}

# ---- the sandbox --------------------------------------------------------

_km_find_binary() {
        local here d
        here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
        if [[ -n ${KUBEMOUNT:-} ]]; then
                echo "$KUBEMOUNT"
                return
        fi
        for d in build-it build; do
                [[ -x $here/$d/src/cli/kubemount ]] && echo "$here/$d/src/cli/kubemount" && return
        done
}

node_sandbox() {
        local net=()
        if [[ ${1:-} == --net ]]; then
                net=(--net)
                shift
        fi
        if [[ ${KM_IN_SANDBOX:-} != 1 ]]; then
                local top rc
                ((EUID == 0)) || skip_all "integration tests need root (mount namespaces, mounts)"
                need_tools unshare nsenter pivot_root findmnt mount umount mountpoint losetup awk ps pgrep
                ((${#net[@]} == 0)) || need_tools ip
                KUBEMOUNT=$(_km_find_binary)
                [[ -n $KUBEMOUNT && -x $KUBEMOUNT ]] ||
                        bail_out "no kubemount binary: set KUBEMOUNT (meson test sets it)"
                unshare --mount --pid "${net[@]}" --fork true 2>/dev/null ||
                        bail_out "cannot create mount, pid${net:+ and network} namespaces here"
                # The only traces left in the machine's namespace: an empty
                # directory, removed when the sandbox is gone, and cgroups
                # (cgroupfs is the machine's), named after it and removed too.
                top=$(mktemp -d /tmp/kubemount-it.XXXXXX) || exit 1
                # --kill-child: if we are killed (meson timeout), the sandbox's
                # PID 1 dies, taking every process and mount with it.  In the
                # background (stdin kept), so that a TERM is handled at once:
                # meson sends our process group a KILL 0.5 s after its TERM.
                KM_IN_SANDBOX=1 KM_SANDBOX_NET=$((${#net[@]} > 0)) KM_TOP=$top KUBEMOUNT=$(realpath "$KUBEMOUNT") \
                        unshare --mount --pid "${net[@]}" --fork --mount-proc --propagation slave --kill-child \
                        -- bash "$0" "$@" <&0 &
                KM_SANDBOX_PID=$!
                # shellcheck disable=SC2064 # $top now: it is a local
                trap "_km_sandbox_killed $(printf %q "$top")" TERM INT
                wait "$KM_SANDBOX_PID"
                rc=$?
                _km_sandbox_gone "$top"
                exit $rc
        fi
        # Inside: we must be the sandbox's PID 1, else /proc/1/ns/mnt would be
        # the machine's namespace.
        if [[ $$ != 1 || $(readlink /proc/1/ns/mnt) != "$(readlink /proc/self/ns/mnt)" ]]; then
                echo "Bail out! not PID 1 of the sandbox"
                exit 1
        fi
        mount -t tmpfs -o mode=700,size=64m km-top "$KM_TOP" && mount --make-private "$KM_TOP" || {
                echo "Bail out! cannot mount the sandbox's tmpfs"
                exit 1
        }
        if ((${#net[@]})) && [[ ${KM_SANDBOX_NET:-} != 1 ]]; then
                echo "Bail out! node_sandbox --net: the sandbox was started without it"
                exit 1
        fi
        if [[ ${KM_SANDBOX_NET:-} == 1 ]]; then
                ip link set lo up || {
                        echo "Bail out! node_sandbox --net: cannot bring lo up"
                        exit 1
                }
        fi
        _km_cgroup_layout
        # Names this run's cgroups (km-test-NAME-ID, kubemount-test-ID).
        KM_RUN_ID=$(basename "$KM_TOP")
        KM_SCRATCH=$KM_TOP/scratch
        mkdir -p "$KM_SCRATCH"
        KM_BIN_DIR=$(dirname "$KUBEMOUNT")
        KM_NODES=0
        trap _km_sandbox_exit EXIT
        export KUBEMOUNT
        unset KUBEMOUNT_HOST_MOUNT_NS KUBEMOUNT_COMPAT KUBEMOUNT_KUBELET_DIR
        # KM_KERNEL_COMPAT (a test run's, meson's -kernel61 variants): the fallbacks of an older
        # kernel forced for every kubemount of the test, the agent's included.
        [[ -z ${KM_KERNEL_COMPAT:-} ]] || export KUBEMOUNT_COMPAT=$KM_KERNEL_COMPAT
        # Cgroups kubemount makes for FUSE daemons go under a name of this run's,
        # removed at exit (cgroupfs is the machine's: a mount namespace does not hide it).
        export KUBEMOUNT_CGROUP_PARENT="kubemount-test-$KM_RUN_ID"
}

# KM_CGROUP_LAYOUT=v2 gives the sandbox the layout of most real nodes, cgroup2
# alone at /sys/fs/cgroup (the machine's v2 hierarchy, mounted again in our
# mount namespace; the v1 hierarchies are out of sight, their controllers
# still apply).  Unset or "host": the machine's own layout.  Meson runs the
# cgroup-touching tests both ways (NAME and NAME-cgroup2).
_km_cgroup_layout() {
        case ${KM_CGROUP_LAYOUT:-host} in
        host) ;;
        v2)
                [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]] && return
                # The options of the machine's own cgroup2 mount: a mount with others would change them for all.
                local opts
                opts=$(awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "cgroup2") { print $(i + 3); exit } }' /proc/self/mountinfo)
                mount -t cgroup2 -o "${opts:-rw}" km-cgroup2 /sys/fs/cgroup || {
                        echo "Bail out! KM_CGROUP_LAYOUT=v2: cannot mount cgroup2 at /sys/fs/cgroup"
                        exit 1
                }
                diag "cgroup layout: cgroup2 alone at /sys/fs/cgroup (KM_CGROUP_LAYOUT=v2)"
                ;;
        *)
                echo "Bail out! KM_CGROUP_LAYOUT=$KM_CGROUP_LAYOUT: want host or v2"
                exit 1
                ;;
        esac
}

# need_nsenter_pair: SHIM (nsenter-compat) and REAL (util-linux nsenter), or bail out.
need_nsenter_pair() {
        SHIM=${NSENTER_COMPAT:-}
        REAL=${REAL_NSENTER:-/usr/bin/nsenter}
        [[ -n $SHIM && -x $SHIM ]] || bail_out "no nsenter-compat binary: set NSENTER_COMPAT (meson test sets it)"
        need_tools "$REAL"
}

# Outside, once the sandbox is gone: what it left in the machine.  Its
# processes died with its PID 1; their cgroups empty once reaped.
_km_sandbox_gone() { # TOP
        local id
        id=$(basename "$1")
        rmdir "$1" 2>/dev/null || rm -rf --one-file-system "$1"
        _km_cgroups_rmdir "kubemount-test-$id" "km-test-*-$id"
}
# Outside, on a TERM (meson's timeout): the sandbox ends, and a cleaner in a
# session of its own (the KILL that follows for our process group does not
# reach it) removes what it left once its processes are gone.
_km_sandbox_killed() { # TOP
        kill -KILL "$KM_SANDBOX_PID" 2>/dev/null
        setsid bash -c "$(declare -f _km_sandbox_gone _km_cgroups_rmdir)
                while kill -0 $KM_SANDBOX_PID 2>/dev/null; do sleep 0.05; done
                _km_sandbox_gone $(printf %q "$1")" </dev/null >/dev/null 2>&1 &
        exit 143
}

_km_sandbox_exit() {
        # The pid namespace dies with us anyway; be tidy for the log.
        [[ -n ${NODE:-} ]] && _km_node_teardown 2>/dev/null
        # As the sandbox's PID 1: what a failed test left running goes now, so its cgroups can go.
        (($$ == 1)) && kill -KILL -1 2>/dev/null
        km_cgroups_remove
        _km_cgroups_rmdir "km-test-*-$KM_RUN_ID"
        umount -l "$KM_TOP" 2>/dev/null
}

# _km_cgroups_rmdir NAME...: the cgroups NAME (glob patterns) at the top of
# every hierarchy, with their children, once empty.
_km_cgroups_rmdir() {
        local d n left tries=0
        while :; do
                left=0
                for n; do
                        [[ -n $n ]] || continue # "" would be every hierarchy's root
                        # shellcheck disable=SC2231 # n is a glob pattern
                        for d in /sys/fs/cgroup/$n /sys/fs/cgroup/*/$n; do
                                [[ -d $d ]] || continue
                                find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
                                rmdir "$d" 2>/dev/null || left=1
                        done
                done
                # A group empties only once its last process is reaped: wait a little for that.
                ((left && tries++ < 50)) || break
                sleep 0.05
        done
        ((!left))
}

# The cgroups kubemount made under $KUBEMOUNT_CGROUP_PARENT, in every hierarchy
# (empty once their daemons are gone).
# Nothing when it is empty (a test of the delegated parent, tests/integration/agent-delegate.sh).
km_cgroups_remove() { [[ -z ${KUBEMOUNT_CGROUP_PARENT:-} ]] || _km_cgroups_rmdir "$KUBEMOUNT_CGROUP_PARENT"; }

# ---- cgroups of the test's own ------------------------------------------

# cgroup_v2: CG2, the cgroup2 hierarchy: /sys/fs/cgroup (v2 layout) or
# /sys/fs/cgroup/unified (hybrid); bails out without a writable one.
cgroup_v2() {
        for CG2 in /sys/fs/cgroup /sys/fs/cgroup/unified; do
                [[ $(stat -fc %T "$CG2" 2>/dev/null) == cgroup2fs && -w $CG2/cgroup.procs ]] && return
        done
        bail_out "no writable cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified"
}

# test_cgroup NAME: km-test-NAME-ID (ID: this run's, so that runs never share
# one; removed at exit) in the v2 hierarchy and, where v1 pids is mounted (a
# hybrid layout), there too, like a container runtime makes them.  Sets
# TEST_CG (the v2 group) and TEST_CG_V1 (the v1 pids group, or "").
test_cgroup() {
        local v1=/sys/fs/cgroup/pids
        cgroup_v2
        TEST_CG=$CG2/km-test-$1-$KM_RUN_ID TEST_CG_V1=""
        mkdir "$TEST_CG" || bail_out "cannot make the cgroup $TEST_CG"
        [[ -f $TEST_CG/cgroup.kill ]] || bail_out "$TEST_CG has no cgroup.kill (Linux >= 5.14 needed)"
        if [[ $(stat -fc %T "$v1" 2>/dev/null) == cgroupfs ]]; then
                TEST_CG_V1=$v1/km-test-$1-$KM_RUN_ID
                mkdir "$TEST_CG_V1" || bail_out "cannot make the cgroup $TEST_CG_V1"
        fi
}

# cgroup_empty DIR...: no process in any of the groups (their cgroup.procs
# read empty: cgroupfs files always have size 0, test -s says nothing).
cgroup_empty() {
        local d
        for d; do
                [[ -z $d || -z $(<"$d/cgroup.procs") ]] || return 1
        done
}

# cgroup_kill DIR [V1DIR]: kills every process of a v2 group (cgroup.kill)
# and of a v1 one (no cgroup.kill there: each process, until none is left);
# waits up to 5 s until both are empty.
cgroup_kill() {
        local v2=$1 v1=${2:-} deadline=$((SECONDS + 5)) pid
        echo 1 >"$v2/cgroup.kill" || return 1
        until cgroup_empty "$v2" "$v1"; do
                if [[ -n $v1 ]]; then
                        while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$v1/cgroup.procs"
                fi
                ((SECONDS < deadline)) || return 1
                sleep 0.02
        done
}

# ---- leak counter -------------------------------------------------------

# Counted in this shell (no fork) so that counting does not change the count.
_km_count() { # -> KM_COUNT_MOUNTS, KM_COUNT_LOOPS, KM_COUNT_PROCS
        local procs=(/proc/[0-9]*)
        mapfile -t KM_MOUNTS_LIST </proc/1/mountinfo
        KM_COUNT_MOUNTS=${#KM_MOUNTS_LIST[@]}
        KM_COUNT_PROCS=${#procs[@]}
        KM_COUNT_LOOPS=$(losetup -a | wc -l)
}

# ---- node ---------------------------------------------------------------

declare -A KM_CTR_PID=()
KM_TRACKED=()
KM_ON_DOWN=()
KM_ON_CTR_UP=()

node_up() {
        local private=0 kubelet=1 a
        for a; do
                case $a in
                --private) private=1 ;;
                --no-kubelet) kubelet=0 ;;
                *)
                        echo "Bail out! node_up: unknown option $a"
                        exit 1
                        ;;
                esac
        done
        _km_count
        KM_BASE_MOUNTS=$KM_COUNT_MOUNTS KM_BASE_PROCS=$KM_COUNT_PROCS KM_BASE_LOOPS=$KM_COUNT_LOOPS
        KM_BASE_LIST=("${KM_MOUNTS_LIST[@]}")
        KM_NODES=$((KM_NODES + 1))
        NODE=$KM_TOP/node$KM_NODES
        KUBELET_DIR=$NODE/var/lib/kubelet
        # Named, as a node whose kubelet has another --root-dir must name it:
        # else kubemount refuses targets outside /var/lib/kubelet.
        export KUBEMOUNT_KUBELET_DIR=$KUBELET_DIR
        # A mount may be routed to a VCS container: its agent and images stay in the node too,
        # never in the machine's /run/kubemount and /var/lib/kubemount.
        export KUBEMOUNT_STATE_DIR=$NODE/run/kubemount KUBEMOUNT_STORE_DIR=$NODE/store
        mkdir -p "$NODE"
        # Private, like a distro whose / is private: nothing propagates
        # until someone makes the kubelet dir shared.
        mount -t tmpfs -o mode=755,size=1g km-node "$NODE" && mount --make-private "$NODE" &&
                mkdir -p "$KUBELET_DIR/pods" "$NODE/run" || {
                echo "Bail out! node_up: cannot mount $NODE"
                exit 1
        }
        if ((!private)); then
                # What the kubelet (or kubemount setup) does at start.
                mount --bind "$KUBELET_DIR" "$KUBELET_DIR" && mount --make-rshared "$KUBELET_DIR" || {
                        echo "Bail out! node_up: cannot make $KUBELET_DIR rshared"
                        exit 1
                }
        fi
        if ((kubelet)); then
                kubelet_up || {
                        echo "Bail out! node_up: kubelet container did not start"
                        exit 1
                }
        fi
}

# Runs in the container's fresh mount namespace (a copy of the host's, so
# peers of the host's shared mounts): builds the root, pivots into it, drops
# the host's tree, then becomes the holder process.
_km_ctr_init() {
        set -e
        local root=$1 bindir=$2 v host path prop d
        shift 2
        mount -t tmpfs -o mode=755 ctr-root "$root"
        for d in /usr /etc /bin /sbin /lib /lib32 /lib64 /libx32; do
                if [[ -L $d ]]; then
                        ln -s "$(readlink "$d")" "$root$d"
                elif [[ -d $d ]]; then
                        mkdir -p "$root$d"
                        mount --bind -o ro "$d" "$root$d"
                fi
        done
        mkdir -p "$root/proc" "$root/dev" "$root/sys" "$root/tmp"
        # Our own procfs of the sandbox's pid namespace: /proc/1 inside is
        # the sandbox's PID 1, whose namespace is the host's.
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount --make-rslave "$root/dev"
        mount --rbind /sys "$root/sys"
        mount --make-rslave "$root/sys"
        mount -t tmpfs -o mode=1777 ctr-tmp "$root/tmp"
        # After /tmp: a checkout under /tmp would be hidden by it.
        mkdir -p "$root$bindir"
        mount --bind -o ro "$bindir" "$root$bindir"
        # Volumes last, so that no system mount (/tmp!) hides them.
        for v; do
                IFS=: read -r host path prop <<<"$v"
                mkdir -p "$root$path"
                mount --rbind "$host" "$root$path"
                mount --make-"$prop" "$root$path"
        done
        cd "$root"
        mkdir .oldroot
        pivot_root . .oldroot
        cd /
        # rslave first so that unmounting the old tree propagates nowhere.
        mount --make-rslave /.oldroot
        umount -l /.oldroot
        rmdir /.oldroot
        echo READY
        exec sleep infinity
}

_km_ctr_ready() { # PID LOG: ready, or give up early when the holder died
        grep -qs '^READY$' "$2" || ! kill -0 "$1" 2>/dev/null
}

# ctr_up NAME HOSTPATH:CTRPATH:PROPAGATION... (PROPAGATION as in
# mount --make-X: rshared, rslave, rprivate, ...).
ctr_up() {
        local name=$1 pid
        shift
        local root=$NODE/ctr/$name log=$NODE/ctr/$name.log
        mkdir -p "$root"
        # Emptied first: a READY left by a container of that name before must not count.
        : >"$log"
        unshare --mount --propagation unchanged -- \
                bash -c "$(declare -f _km_ctr_init); _km_ctr_init \"\$@\"" ctr-init "$root" "$KM_BIN_DIR" "$@" \
                >"$log" 2>&1 </dev/null &
        pid=$!
        KM_CTR_PID[$name]=$pid
        if ! wait_for 10 _km_ctr_ready "$pid" "$log" || ! kill -0 "$pid" 2>/dev/null; then
                diag "container $name did not start:" "$(cat "$log" 2>&1)"
                return 1
        fi
        local hook
        for hook in "${KM_ON_CTR_UP[@]}"; do
                eval "$hook" '"$name"' || return 1
        done
}

# The containerized kubelet: -v $KUBELET_DIR:$KUBELET_DIR:rshared -v /:/rootfs
# (rslave), as kubelet containers were run.
kubelet_up() { ctr_up kubelet "/:/rootfs:rslave" "$KUBELET_DIR:$KUBELET_DIR:rshared"; }
# A pod whose volumes come from the kubelet dir with HostToContainer (rslave).
pod_up() { ctr_up "pod-$1" "$KUBELET_DIR:$KUBELET_DIR:rslave"; }

in_host() { "$@"; }
in_ctr() {
        local name=$1
        shift
        nsenter -t "${KM_CTR_PID[$name]}" -m -r -w -- "$@"
}
in_kubelet() { in_ctr kubelet "$@"; }
in_pod() {
        local name=$1
        shift
        in_ctr "pod-$name" "$@"
}

_km_ns_pid() {
        case $1 in
        host) echo 1 ;;
        pod:*) echo "${KM_CTR_PID[pod-${1#pod:}]}" ;;
        *) echo "${KM_CTR_PID[$1]}" ;;
        esac
}

# mounts_in NS PREFIX: mount points at or below PREFIX in NS's mount table
# (paths as NS sees them), one per line, in mount order.
mounts_in() {
        awk -v p="${2%/}" '{
                t = $5; gsub(/\\040/, " ", t)
                if (t == p || index(t, p "/") == 1) print t
        }' "/proc/$(_km_ns_pid "$1")/mountinfo"
}
# is_mounted NS PATH: PATH is a mount point in NS.
is_mounted() {
        awk -v p="$2" '{ t = $5; gsub(/\\040/, " ", t); if (t == p) f = 1 } END { exit !f }' \
                "/proc/$(_km_ns_pid "$1")/mountinfo"
}
mount_count() { wc -l <"/proc/$(_km_ns_pid "${1:-host}")/mountinfo"; }

node_track() { KM_TRACKED+=("$@"); }
node_untrack() {
        local pid keep=() p
        for p in "${KM_TRACKED[@]}"; do
                for pid; do [[ $p == "$pid" ]] && continue 2; done
                keep+=("$p")
        done
        KM_TRACKED=("${keep[@]}")
}
# node_on_down CMD... / ctr_on_up CMD...: CMD (a simple command, its words
# kept as given) for node_down, or for each later ctr_up with the
# container's name appended.
node_on_down() { KM_ON_DOWN+=("$(printf '%q ' "$@")"); }
ctr_on_up() { KM_ON_CTR_UP+=("$(printf '%q ' "$@")"); }

# spawn [--in CONTAINER] CMD...: starts CMD in the background (in the host,
# or in a container) with SPAWNED set to CMD's own PID (nsenter execs it),
# which node_down kills if it is still there.  A function run with & would
# get a subshell's PID instead.
spawn() {
        if [[ $1 == --in ]]; then
                local name=$2
                shift 2
                nsenter -t "${KM_CTR_PID[$name]}" -m -r -w -- "$@" &
        else
                "$@" &
        fi
        SPAWNED=$!
        node_track "$SPAWNED"
}

_km_node_teardown() {
        local pid
        for pid in "${KM_TRACKED[@]}" "${KM_CTR_PID[@]}"; do
                kill -CONT "$pid" 2>/dev/null # a stopped FUSE daemon first
                kill -KILL "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        KM_TRACKED=()
        KM_CTR_PID=()
        KM_ON_CTR_UP=()
        local i
        for ((i = ${#KM_ON_DOWN[@]} - 1; i >= 0; i--)); do
                eval "${KM_ON_DOWN[i]}"
        done
        KM_ON_DOWN=()
        # Lazily: a dead FUSE mount may be left by a failing test.
        umount -l "$NODE" 2>/dev/null
        rm -rf --one-file-system "$NODE" 2>/dev/null
        NODE=""
}

node_down() {
        local desc="${1:-node}: no leaked mounts, loop devices or processes" deadline
        _km_node_teardown
        # Processes killed above may take a moment to be reaped.
        deadline=$((SECONDS + 5))
        while :; do
                _km_count
                [[ $KM_COUNT_MOUNTS == "$KM_BASE_MOUNTS" && $KM_COUNT_PROCS == "$KM_BASE_PROCS" &&
                        $KM_COUNT_LOOPS == "$KM_BASE_LOOPS" ]] && break
                ((SECONDS < deadline)) || break
                sleep 0.05
        done
        if [[ $KM_COUNT_MOUNTS == "$KM_BASE_MOUNTS" && $KM_COUNT_PROCS == "$KM_BASE_PROCS" &&
                $KM_COUNT_LOOPS == "$KM_BASE_LOOPS" ]]; then
                ok "$desc"
        else
                not_ok "$desc"
                diag "mounts $KM_BASE_MOUNTS -> $KM_COUNT_MOUNTS, loop devices $KM_BASE_LOOPS -> $KM_COUNT_LOOPS," \
                        "processes $KM_BASE_PROCS -> $KM_COUNT_PROCS"
                diag "$(diff <(printf '%s\n' "${KM_BASE_LIST[@]}") <(printf '%s\n' "${KM_MOUNTS_LIST[@]}"))"
                diag "$(ps -eo pid,stat,args 2>/dev/null)"
        fi
}
