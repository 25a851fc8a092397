# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2034 # the variables are for the sourcing script
#
# Real network storage servers for the tests and the demo of routed mounts,
# from Debian packages (scripts/deps installs them).  Sourced after
# tests/lib/node.sh, in a sandbox with a network of its own, after node_up:
#
#     source tests/lib/node.sh; source tests/lib/servers.sh
#     node_sandbox --net "$@"
#     node_up
#
# Each server runs in a mount and pid namespace of its own (its files under
# $NODE, its /run its own), in the sandbox's network namespace, where the
# host, the kubelet, pods and host-network VCS containers all reach it on
# loopback.  Its process is tracked (node_track): node_down ends it if the
# test did not.
#
#     gluster_up       glusterd -N (GlusterFS 10.3) with volume gv0 (one brick)
#                      created and started; waits until the brick is online.
#         GLUSTER_VOLUME  127.0.0.2:/gv0     mount -t glusterfs "$GLUSTER_VOLUME" DIR
#         GLUSTER_HOST    127.0.0.2 (the CLI refuses 127.0.0.1 as a brick host;
#                         127.0.0.1:/gv0 mounts as well)
#         GLUSTER_VOLNAME gv0
#         GLUSTER_BRICK   the brick's directory: the server's side of the files
#         GLUSTER_DIR     state, logs (GLUSTER_DIR/log), brick
#         GLUSTER_READY_MS  how long gluster_up took
#     gluster_cli ARGS...   the gluster CLI (--mode=script) against it
#     gluster_down     ends glusterd and its brick, removes GLUSTER_DIR
#
#     sshd_up          sshd on 127.0.0.1, key-only (a key pair made here), root,
#                      sftp; serves SSHD_EXPORT, which holds SSHD_FILE.
#         SSHD_SOURCE     root@127.0.0.1:$SSHD_EXPORT
#         SSHFS_OPTIONS   port=...,IdentityFile=$SSHD_KEY,IdentitiesOnly=yes,
#                         StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,allow_other
#                         (allow_other: pods and other users read the mount)
#                 sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" DIR
#                 mount -t fuse.sshfs -o "$SSHFS_OPTIONS" "$SSHD_SOURCE" DIR
#         SSHD_HOST 127.0.0.1  SSHD_PORT 2222  SSHD_USER root
#         SSHD_KEY        the client's private key, in SSHD_KEY_DIR (bind that
#                         read-only into a VCS container that runs sshfs)
#         SSHD_EXPORT, SSHD_FILE (SSHD_EXPORT/hello), SSHD_FILE_CONTENT
#         SSHD_DIR        config, host key, log (SSHD_DIR/sshd.log)
#         SSHD_READY_MS
#     sshd_down
#
#     hide_host_clients  makes the host's FUSE, GlusterFS and NFS client
#                      programs (SRV_HIDDEN_NAMES in /sbin /usr/sbin /bin
#                      /usr/bin) unusable: an empty, read-only, non-executable
#                      file is bound over each, in the host (the sandbox's
#                      namespace, never the machine's) and in the node's
#                      containers (those running and those ctr_up starts
#                      later; the kubelet's /rootfs too).  A routing policy
#                      "auto" then finds no host client.  Servers keep theirs
#                      (gluster_up after it undoes it in its own namespace).
#                      Undone by node_down.  KM_HIDDEN_TOOLS: the paths hidden.
#
# The *_up functions return 1 after a diag of what failed (logs included);
# a test says `gluster_up || bail_out "..."`.

# Client programs hide_host_clients makes unusable (symlinks resolved: the
# file each names is hidden, so also glusterfsd, which glusterfs names).
SRV_HIDDEN_NAMES=(mount.glusterfs glusterfs sshfs mount.fuse mount.fuse3 mount.fuse.sshfs mount.sshfs
        fusermount fusermount3 fusermount-glusterfs bindfs mount.nfs mount.nfs4)

_srv_ms() {
        local t=${EPOCHREALTIME/[.,]/}
        echo $((10#$t / 1000))
}

# _srv_check FUNCTION TOOL...: a node, a network of the sandbox's own, the tools.
_srv_check() {
        local fn=$1
        shift
        [[ -n ${NODE:-} ]] || bail_out "$fn: call node_up first"
        [[ ${KM_SANDBOX_NET:-} == 1 ]] ||
                bail_out "$fn: servers listen only in a network namespace of the sandbox's own: node_sandbox --net \"\$@\""
        need_tools timeout "$@"
}

# _srv_tcp HOST PORT: something accepts connections there.
_srv_tcp() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# _srv_start NAME LOG FUNCTION ARGS...: FUNCTION ARGS... as PID 1 of a new pid
# and mount namespace (all of it private), output in LOG.  Sets _SRV_PID (the
# unshare, tracked; it takes PID 1 with it when killed) and _SRV_INIT (PID 1
# as the sandbox sees it, for nsenter).
_srv_start() {
        local name=$1 log=$2 fn=$3 script
        shift 3
        # Expanded here: in the background job, a command substitution would be a
        # child of $! that _srv_init_pid could take for PID 1.
        script="$(declare -f _srv_drop_node_mounts "$fn"); _srv_drop_node_mounts $(printf %q "$NODE") && $fn \"\$@\""
        unshare --mount --pid --fork --mount-proc --kill-child -- \
                bash -c "$script" "$name-init" "$@" >"$log" 2>&1 </dev/null &
        _SRV_PID=$!
        node_track "$_SRV_PID"
        _SRV_INIT=""
        wait_for 5 _srv_init_pid "$_SRV_PID" && [[ -n $_SRV_INIT ]]
}
_srv_init_pid() { # UNSHARE-PID: its child in a pid namespace of its own, or give up when it died
        local c
        _SRV_INIT=""
        for c in $(pgrep -P "$1"); do
                [[ $(readlink "/proc/$c/ns/pid" 2>/dev/null) != "$(readlink /proc/self/ns/pid)" ]] || continue
                _SRV_INIT=$c
        done
        [[ -n $_SRV_INIT ]] || ! kill -0 "$1" 2>/dev/null
}

# In the server's namespace: its copies of what is mounted below the node
# (the kubelet dir, volumes, containers' roots) go, so that it holds none
# of them while the test mounts and unmounts there.
_srv_drop_node_mounts() { # NODE
        local m
        awk -v n="$1/" 'index($5, n) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
                while read -r m; do
                        umount -l "$m" 2>/dev/null
                done
        return 0
}

# _srv_stop UNSHARE-PID INIT-PID: ends the namespace (every process in it),
# waits until it is gone, untracks it.
_srv_stop() {
        local ns
        ns=$(readlink "/proc/$2/ns/pid" 2>/dev/null)
        # PID 1 first: the unshare then exits by itself and reaps it.
        [[ -n $2 ]] && kill -KILL "$2" 2>/dev/null
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        node_untrack "$1"
        [[ -z $ns ]] || wait_for 10 _srv_ns_gone "$ns" || {
                diag "processes of $ns are left"
                return 1
        }
}
_srv_ns_gone() {
        local p
        for p in /proc/[0-9]*; do
                [[ $(readlink "$p/ns/pid" 2>/dev/null) == "$1" ]] && return 1
        done
        return 0
}

# _srv_fail WHAT FILE...: a diag with the tails of the logs.
_srv_fail() {
        local f
        diag "$1"
        shift
        for f; do
                [[ -s $f ]] && diag "--- $f:" "$(tail -n 25 "$f")"
        done
        return 0
}

# ---- GlusterFS -----------------------------------------------------------

# PID 1 of glusterd's namespace.  Its state and logs live in DIR (the node's
# tmpfs, so that a test can read them), /run is a tmpfs of its own.
_srv_gluster_init() { # DIR
        local d=$1 lib e p
        set -e
        mount --bind "$d/state" /var/lib/glusterd
        mount --bind "$d/log" /var/log/glusterfs
        mount -t tmpfs -o mode=755 gluster-run /run
        # No geo-replication: without its helper (ENOENT) glusterd skips it,
        # which at start runs the Python gsyncd 15 times (0.5 s idle, up to
        # 25 s on a busy machine).  The rest of the directory stays.
        for lib in /usr/lib/*/glusterfs /usr/libexec/glusterfs; do
                [[ -f $lib/gsyncd ]] || continue
                mkdir -p "$d/lib"
                mount --bind "$lib" "$d/lib"
                mount -t tmpfs -o mode=755 gluster-lib "$lib"
                for e in "$d"/lib/*; do
                        [[ ${e##*/} == gsyncd ]] || ln -s "$e" "$lib/"
                done
        done
        # What hide_host_clients hid from the host (glusterfsd!) is the server's.
        for p in ${KM_HIDDEN_TOOLS:-}; do
                umount "$p"
        done
        set +e
        glusterd -N >"$d/glusterd.out" 2>&1 &
        wait $!
        echo "glusterd exited with status $?"
}

gluster_cli() {
        timeout -k 2 60 nsenter -t "$GLUSTER_INIT" -m -p -- gluster --mode=script "$@"
}

# The brick process is online and listening.
_srv_gluster_online() {
        local xml port
        xml=$(gluster_cli volume status "$GLUSTER_VOLNAME" --xml 2>/dev/null) || return 1
        [[ $xml == *"<status>1</status>"* ]] || return 1
        port=$(sed -n 's:.*<port>\([0-9]*\)</port>.*:\1:p' <<<"$xml" | head -n 1)
        [[ -n $port ]] && _srv_tcp "$GLUSTER_HOST" "$port"
}

gluster_up() {
        local t0 out logs
        _srv_check gluster_up glusterd gluster glusterfsd nsenter pgrep
        t0=$(_srv_ms)
        GLUSTER_DIR=$NODE/gluster
        GLUSTER_HOST=127.0.0.2
        GLUSTER_VOLNAME=gv0
        GLUSTER_VOLUME=$GLUSTER_HOST:/$GLUSTER_VOLNAME
        GLUSTER_BRICK=$GLUSTER_DIR/brick
        mkdir -p "$GLUSTER_DIR/state" "$GLUSTER_DIR/log" "$GLUSTER_BRICK" || return 1
        logs=("$GLUSTER_DIR/init.log" "$GLUSTER_DIR/glusterd.out" "$GLUSTER_DIR/log/glusterd.log")
        if ! _srv_start gluster "$GLUSTER_DIR/init.log" _srv_gluster_init "$GLUSTER_DIR"; then
                _srv_fail "gluster_up: the namespace for glusterd did not start" "${logs[@]}"
                return 1
        fi
        GLUSTER_PID=$_SRV_PID GLUSTER_INIT=$_SRV_INIT
        # It listens before it answers: the CLI waits (within its timeout) until then.
        if ! wait_for 30 _srv_gluster_listening || ! out=$(gluster_cli volume info 2>&1); then
                _srv_fail "gluster_up: glusterd does not answer on 127.0.0.1:24007 after 30 s: $out" "${logs[@]}"
                gluster_down
                return 1
        fi
        # A brick on the root filesystem (the node's tmpfs is not, but a
        # caller's may be) needs force.
        if ! out=$(gluster_cli volume create "$GLUSTER_VOLNAME" "$GLUSTER_HOST:$GLUSTER_BRICK" force 2>&1) ||
                ! out=$(gluster_cli volume start "$GLUSTER_VOLNAME" 2>&1); then
                _srv_fail "gluster_up: cannot create and start $GLUSTER_VOLNAME: $out" "${logs[@]}"
                gluster_down
                return 1
        fi
        if ! wait_for 30 _srv_gluster_online; then
                _srv_fail "gluster_up: the brick of $GLUSTER_VOLNAME is not online after 30 s" "${logs[@]}" \
                        "$GLUSTER_DIR/log/bricks/"*.log
                gluster_down
                return 1
        fi
        GLUSTER_READY_MS=$(($(_srv_ms) - t0))
}
_srv_gluster_listening() {
        kill -0 "$GLUSTER_INIT" 2>/dev/null || return 0 # gone: the CLI call says so
        _srv_tcp 127.0.0.1 24007
}

gluster_down() {
        [[ -n ${GLUSTER_PID:-} ]] || return 0
        _srv_stop "$GLUSTER_PID" "${GLUSTER_INIT:-}"
        local rc=$?
        rm -rf --one-file-system "$GLUSTER_DIR"
        GLUSTER_PID="" GLUSTER_INIT=""
        return $rc
}

# ---- sshd ----------------------------------------------------------------

_srv_sshd_init() { # DIR
        set -e
        # sshd wants its privilege separation directory, /run/sshd.
        mount -t tmpfs -o mode=755 sshd-run /run
        mkdir -m 755 /run/sshd
        set +e
        /usr/sbin/sshd -t -f "$1/sshd_config" 2>>"$1/sshd.log" || {
                echo "sshd -t refuses $1/sshd_config"
                exit 1
        }
        /usr/sbin/sshd -D -e -f "$1/sshd_config" 2>>"$1/sshd.log" &
        wait $!
        echo "sshd exited with status $?"
}

_srv_sshd_banner() {
        kill -0 "$SSHD_INIT" 2>/dev/null || return 0 # gone: the check after says so
        # shellcheck disable=SC2030 # line is the subshell's
        (
                exec 3<>"/dev/tcp/$SSHD_HOST/$SSHD_PORT" && read -r -t 2 line <&3 && [[ $line == SSH-2.0-* ]]
        ) 2>/dev/null
}

sshd_up() {
        local t0 d
        _srv_check sshd_up /usr/sbin/sshd ssh-keygen pgrep
        t0=$(_srv_ms)
        SSHD_DIR=$NODE/sshd
        SSHD_HOST=127.0.0.1
        SSHD_PORT=2222
        SSHD_USER=root
        SSHD_KEY_DIR=$SSHD_DIR/client
        SSHD_KEY=$SSHD_KEY_DIR/id_ed25519
        SSHD_EXPORT=$SSHD_DIR/export
        SSHD_FILE=$SSHD_EXPORT/hello
        SSHD_FILE_CONTENT="served by sshd on $SSHD_HOST:$SSHD_PORT"
        SSHD_SOURCE=$SSHD_USER@$SSHD_HOST:$SSHD_EXPORT
        SSHFS_OPTIONS="port=$SSHD_PORT,IdentityFile=$SSHD_KEY,IdentitiesOnly=yes,StrictHostKeyChecking=no"
        SSHFS_OPTIONS+=",UserKnownHostsFile=/dev/null,allow_other"
        d=$SSHD_DIR
        mkdir -p "$SSHD_KEY_DIR" "$SSHD_EXPORT" || return 1
        if ! ssh-keygen -q -t ed25519 -N '' -C kubemount-test-host -f "$d/host_key" ||
                ! ssh-keygen -q -t ed25519 -N '' -C kubemount-test-client -f "$SSHD_KEY" ||
                ! cp "$SSHD_KEY.pub" "$d/authorized_keys" || ! echo "$SSHD_FILE_CONTENT" >"$SSHD_FILE"; then
                diag "sshd_up: cannot make the keys and the served file"
                return 1
        fi
        # Keys under $NODE (a tmpfs under /tmp): StrictModes would refuse them.
        cat >"$d/sshd_config" <<EOF || return 1
ListenAddress $SSHD_HOST
Port $SSHD_PORT
HostKey $d/host_key
PidFile none
AuthorizedKeysFile $d/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
Subsystem sftp internal-sftp
EOF
        if ! _srv_start sshd "$d/init.log" _srv_sshd_init "$d"; then
                _srv_fail "sshd_up: the namespace for sshd did not start" "$d/init.log" "$d/sshd.log"
                return 1
        fi
        SSHD_PID=$_SRV_PID SSHD_INIT=$_SRV_INIT
        if ! wait_for 10 _srv_sshd_banner || ! kill -0 "$SSHD_INIT" 2>/dev/null; then
                _srv_fail "sshd_up: no SSH banner on $SSHD_HOST:$SSHD_PORT after 10 s" "$d/init.log" "$d/sshd.log"
                sshd_down
                return 1
        fi
        SSHD_READY_MS=$(($(_srv_ms) - t0))
}

sshd_down() {
        [[ -n ${SSHD_PID:-} ]] || return 0
        _srv_stop "$SSHD_PID" "${SSHD_INIT:-}"
        local rc=$?
        rm -rf --one-file-system "$SSHD_DIR"
        SSHD_PID="" SSHD_INIT=""
        return $rc
}

# ---- no client programs on the host --------------------------------------

hide_host_clients() {
        local f=$KM_SCRATCH/hidden-client n d p seen=" " paths=() name
        [[ -n ${NODE:-} ]] || bail_out "hide_host_clients: call node_up first (node_down undoes it)"
        [[ -z ${KM_HIDDEN_TOOLS:-} ]] || return 0
        : >"$f" && chmod 0644 "$f" || return 1
        for n in "${SRV_HIDDEN_NAMES[@]}"; do
                for d in /sbin /usr/sbin /bin /usr/bin; do
                        [[ -e $d/$n ]] || continue
                        p=$(realpath "$d/$n") || return 1
                        [[ $seen == *" $p "* ]] && continue
                        seen+="$p "
                        paths+=("$p")
                done
        done
        ((${#paths[@]})) || {
                diag "hide_host_clients: none of ${SRV_HIDDEN_NAMES[*]} is installed"
                return 1
        }
        export KM_HIDDEN_TOOLS="${paths[*]}"
        node_on_down _srv_unhide
        for p in "${paths[@]}"; do
                mount --bind -o ro,nosuid,nodev,noexec "$f" "$p" || {
                        diag "hide_host_clients: cannot bind an empty file over $p"
                        return 1
                }
        done
        for name in "${!KM_CTR_PID[@]}"; do
                _srv_hide_in_ctr "$name" || return 1
        done
        ctr_on_up _srv_hide_in_ctr
}

# _srv_hide_in_ctr NAME: the same in a container of the node's (it binds the
# host's /usr without what is mounted on it), with an empty file of its own;
# also below /rootfs, the kubelet's copy of the host's tree.
_srv_hide_in_ctr() {
        # shellcheck disable=SC2016,SC2086 # the container's sh expands; a list of paths
        in_ctr "$1" sh -c 'f=/tmp/.kubemount-test-hidden-client
                : >"$f" && chmod 0644 "$f" || exit 1
                for p; do
                        for q in "$p" "/rootfs$p"; do
                                [ -e "$q" ] || continue
                                mount --bind -o ro,nosuid,nodev,noexec "$f" "$q" || exit 1
                        done
                done' hide $KM_HIDDEN_TOOLS || {
                diag "hide_host_clients: cannot hide the clients in the container $1"
                return 1
        }
}

_srv_unhide() {
        local p
        for p in ${KM_HIDDEN_TOOLS:-}; do
                umount "$p" || umount -l "$p"
        done
        unset KM_HIDDEN_TOOLS
}
