#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Loop devices of a test, after node_sandbox: new_loop makes one, and every one is
# unmounted and detached when the test exits, even half-way (they are the machine's).
LOOPS=()
detach_loops() {
        local d
        for d in "${LOOPS[@]}"; do
                umount -l "$d" 2>/dev/null
                losetup -d "$d" 2>/dev/null
        done
        LOOPS=()
}
trap 'detach_loops; _km_sandbox_exit' EXIT
# new_loop FILE SIZE [losetup options]: a blank loop device of a sparse file, in DEV.
new_loop() {
        local file=$1 size=$2
        shift 2
        truncate -s "$size" "$file" && DEV=$(losetup --show -f "$@" "$file") || bail_out "losetup $file"
        LOOPS+=("$DEV")
}
