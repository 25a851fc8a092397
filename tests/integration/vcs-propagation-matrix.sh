#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The e2e mount propagation matrix (Kubernetes test/e2e/node/mount_propagation.go)
# played by VCS containers: four detached containers bind one host dir under the
# kubelet dir at /mnt/test, rshared ("master", Bidirectional), rslave ("slave",
# HostToContainer), private ("private", None) and rprivate ("default": the
# kubelet's default is None too); each mounts a tmpfs under its own name, the
# host mounts one too, and a pod (rslave of the host) looks on.  Who sees what
# must be exactly the e2e test's expectation, in the default (unprivileged)
# mode, where the mount broker makes each container's mounts, and with
# KM_RUN_PRIVILEGED=1 (meson's -privileged run), where the containers make
# their own: a mount reaches exactly the namespaces its bind's propagation
# reaches, and the container always sees what it mounted.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"

MODE=default
[[ ${KM_RUN_PRIVILEGED:-0} == 1 ]] && MODE=privileged
node_up --no-kubelet
pod_up p
vcs_setup
vcs_agent_start

D=$KUBELET_DIR/e2e-mount-propagation
mkdir -p "$D"/{master,slave,private,default,host}
declare -A PROP=([master]=rshared [slave]=rslave [private]=private [default]=rprivate)
NAMES=(master slave private default)

# All four run before any mounts, as the e2e test's pods do: a container started later would copy the others' mounts.
for c in "${NAMES[@]}"; do
        # --allow-mount and --mount-target: what and where the broker mounts for it in the default mode.
        run vcs_run --detach --name "pm-$c" --allow-mount tmpfs --mount-target "$D/$c" \
                --mount "$D:/mnt/test:${PROP[$c]}" -- sleep 1000
        is "$RC" 0 "[$MODE] container $c (${PROP[$c]}) starts"
done
for c in "${NAMES[@]}"; do
        run km exec "pm-$c" -- sh -c "$VCS_GUARD"'mount -t tmpfs -o size=1m "$1" "/mnt/test/$1" && echo "$1" >"/mnt/test/$1/f"' \
                sh "$c"
        is "$RC" 0 "[$MODE] container $c mounts a tmpfs at /mnt/test/$c"
        [[ $RC == 0 ]] || diag "$ERR" "$(km logs "pm-$c" 2>&1 | tail -n 5)"
done
mount -t tmpfs -o size=1m host "$D/host"

# seen_in_ctr NAME: the names of the mounts right below /mnt/test in container NAME, sorted, one line.
seen_in_ctr() {
        km exec "pm-$1" -- cat /proc/self/mountinfo | awk '$5 ~ "^/mnt/test/[^/]+$" { sub("^/mnt/test/", "", $5); print $5 }' |
                sort -u | xargs
}
# seen NS: the same below $D in NS (host, pod:p).
seen() { mounts_in "$1" "$D" | awk -F/ -v d="$D" '$0 != d { print $NF }' | sort -u | xargs; }

is "$(seen_in_ctr master)" "host master" "[$MODE] master sees master and host"
is "$(seen_in_ctr slave)" "host master slave" "[$MODE] slave sees master, slave and host"
is "$(seen_in_ctr private)" "private" "[$MODE] private sees only private"
is "$(seen_in_ctr default)" "default" "[$MODE] default sees only default"
is "$(seen host)" "host master" "[$MODE] the host sees master and host, not slave, private or default"
is "$(seen pod:p)" "host master" "[$MODE] a pod (rslave of the host) sees what the host sees"

# The same filesystem, not only a name in a table.
is "$(cat "$D/master/f" 2>&1)" "master" "[$MODE] the host reads the file master wrote in its mount"
is "$(km exec pm-slave -- cat /mnt/test/master/f 2>&1)" "master" "[$MODE] ... and so does slave"
is "$(km exec pm-slave -- cat /mnt/test/slave/f 2>&1)" "slave" "[$MODE] slave reads its own mount"
is "$(km exec pm-private -- cat /mnt/test/private/f 2>&1)" "private" "[$MODE] private reads its own mount"
run km exec pm-private -- sh -c 'test -e /mnt/test/master/f || echo none'
is "$OUT" "none" "[$MODE] private does not see master's file"

# Unmounting follows the same paths: master's umount reaches the host and slave.
run km exec pm-master -- umount /mnt/test/master
is "$RC" 0 "[$MODE] master unmounts its tmpfs"
is "$(seen host)" "host" "[$MODE] ... gone from the host"
is "$(seen_in_ctr slave)" "host slave" "[$MODE] ... and from slave"
run km exec pm-slave -- umount /mnt/test/slave
is "$RC" 0 "[$MODE] slave unmounts its tmpfs"
is "$(seen_in_ctr slave)" "host" "[$MODE] ... it is gone there"

umount "$D/host"
for c in "${NAMES[@]}"; do
        check "[$MODE] rm -f pm-$c" km rm -f "pm-$c"
done
is "$(seen host)" "" "[$MODE] nothing is left mounted below the shared dir"
vcs_cleanup
node_down "vcs propagation matrix ($MODE)"
done_testing
