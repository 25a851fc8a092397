#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The e2e mount propagation matrix (Kubernetes test/e2e/node/mount_propagation.go,
# KUBELET.md): four containers share a host dir under the kubelet dir with
# Bidirectional (rshared), HostToContainer (rslave), None (private) and the
# default propagation; each mounts a tmpfs under its own name, the host mounts
# one too, and we check exactly who sees what.  kubemount makes the
# propagation changes and the mounts (--host-mount-ns=/proc/self/ns/mnt inside
# a container: its own namespace, no setns).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
node_sandbox "$@"

node_up
D=$KUBELET_DIR/e2e-mount-propagation
mkdir -p "$D"/{master,slave,private,default,host}

check "setup --shared on a dir of the rshared kubelet dir succeeds" "$KUBEMOUNT" setup --shared "$D"
is "$OUT" "$D: already shared" "the host dir is already on a shared mount: nothing to do"

# Every container starts with a peer of the host dir (what a runtime gives a
# Bidirectional volume) except "default", which gets the runtime's default
# rprivate bind; kubemount then changes slave and private in place.
for c in master slave private; do
        ctr_up "$c" "$D:/mnt/test:rshared" || not_ok "container $c starts"
done
ctr_up default "$D:/mnt/test:rprivate" || not_ok "container default starts"

self=(--host-mount-ns=/proc/self/ns/mnt)
check "kubemount mount --make-rslave in the slave container" \
        in_ctr slave "$KUBEMOUNT" "${self[@]}" mount --make-rslave /mnt/test
check "kubemount mount --make-rprivate in the private container" \
        in_ctr private "$KUBEMOUNT" "${self[@]}" mount --make-rprivate /mnt/test

propagation() { in_ctr "$1" findmnt -no PROPAGATION --mountpoint /mnt/test; }
is "$(propagation master)" "shared" "master's volume is shared"
is "$(propagation slave)" "private,slave" "slave's volume is a slave"
is "$(propagation private)" "private" "private's volume is private"
is "$(propagation default)" "private" "default's volume is private"

for c in master slave private default; do
        check "container $c mounts its tmpfs with kubemount" \
                in_ctr "$c" "$KUBEMOUNT" "${self[@]}" mount -t tmpfs -o size=1m "$c" "/mnt/test/$c"
done
check "the host mounts its tmpfs with kubemount" "$KUBEMOUNT" mount -t tmpfs -o size=1m host "$D/host"

# seen NS DIR: names of the mounts right below DIR, sorted, one line.
seen() { mounts_in "$1" "$2" | awk -F/ -v d="$2" '$0 != d { print $NF }' | sort | xargs; }

is "$(seen master /mnt/test)" "host master" "master sees master and host"
is "$(seen slave /mnt/test)" "host master slave" "slave sees master, slave and host"
is "$(seen private /mnt/test)" "private" "private sees only private"
is "$(seen default /mnt/test)" "default" "default sees only default"
is "$(seen host "$D")" "host master" "the host sees master and host, not slave"
is "$(seen kubelet "$D")" "host master" "the kubelet's namespace sees host and master"

# What is seen is the same filesystem, not just a name in a table.
echo from-master >"$KM_SCRATCH/token"
in_ctr master sh -c 'cat > /mnt/test/master/token' <"$KM_SCRATCH/token"
is "$(cat "$D/master/token" 2>&1)" "from-master" "a file written by master in its mount is read by the host"
is "$(in_kubelet cat "$D/master/token" 2>&1)" "from-master" "... and by the kubelet"
is "$(in_ctr slave cat /mnt/test/master/token 2>&1)" "from-master" "... and by slave"

# Unmounting propagates the same way.
check "the host unmounts its tmpfs with kubemount" "$KUBEMOUNT" umount "$D/host"
check "master unmounts its tmpfs with kubemount" in_ctr master "$KUBEMOUNT" "${self[@]}" umount /mnt/test/master
is "$(seen slave /mnt/test)" "slave" "slave keeps only its own mount"
is "$(seen host "$D")" "" "the host has none left"
is "$(seen kubelet "$D")" "" "the kubelet has none left"

node_down "propagation matrix"
done_testing
