#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The node tier (TAP, as root): kubemount's .debs installed on a Debian VM with
# systemd as PID 1, booted twice under qemu (TCG: nested KVM does not work on
# these machines), and the scenarios of tests/node/scenarios run in it.
#   the .debs (tests/package/build-debs.sh, cached in BUILD/debs) -> the VCS
#   images (BUILD/images, built if missing) -> the VM root (make-root.sh,
#   cached in BUILD/node-cache) -> this run's disk (make-disk.sh) -> qemu:
#   boot 1 runs scenarios/boot1/*, reboots; boot 2 runs scenarios/boot2/*,
#   powers off -> the guest's results disk read back -> each scenario's TAP
#   as ours, renumbered, its name before each description.
# BUILD/node-last keeps the last run's serial.log and results/ (TAP, logs and
# plain journals of both boots).  Everything runs in a mount and pid namespace
# of its own: killed, qemu and every mount of the test go with it.
#
#   tests/node/node-test.sh SOURCE_ROOT BUILD_ROOT
#
# Environment: KUBEMOUNT_NODE_TIMEOUT (seconds for both boots, default 1800),
# KUBEMOUNT_NODE_KEEP_DISK=1 (keep BUILD/node-last/disk.img), and the mirrors
# of make-root.sh (KUBEMOUNT_DEBIAN_MIRROR, KUBEMOUNT_DEBIAN_SECURITY_MIRROR).
# shellcheck source=tests/lib/node.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh"

src=$(realpath "${1:?usage: node-test.sh SOURCE_ROOT BUILD_ROOT}")
build=$(realpath "${2:?usage: node-test.sh SOURCE_ROOT BUILD_ROOT}")
here=$src/tests/node

if [[ ${KM_NODE_IN_NS:-} != 1 ]]; then
        ((EUID == 0)) || bail_out "the node test needs root (mmdebstrap, a chroot, mkfs.ext4 -d)"
        need_tools git meson ninja dpkg-buildpackage dh dpkg-deb dpkg-parsechangelog mmdebstrap \
                unshare chroot mount umount findmnt tar xz sha256sum mkfs.ext4 truncate flock \
                qemu-system-x86_64 patchelf python3
        python3 -c 'import yaml' 2>/dev/null || bail_out "python3's yaml module is missing (scripts/deps installs python3-yaml)"
        # One run at a time per build dir (BUILD/node-last, BUILD/debs): a second waits.
        exec 9>"$build/node-test.lock"
        if ! flock -n 9; then
                diag "another node test runs in $build: waiting for it"
                flock -w 2400 9 || bail_out "another node test in $build held its lock for 40 minutes"
        fi
        # --kill-child: killed (meson's timeout), the namespace's PID 1 dies
        # and takes qemu and every mount of the test with it.
        KM_NODE_IN_NS=1 exec unshare --mount --pid --fork --mount-proc --propagation slave --kill-child \
                -- bash "$0" "$@"
fi

last=$build/node-last
rm -rf --one-file-system "$last"
mkdir -p "$last/results"
KM_SCRATCH=$last/scratch
mkdir -p "$KM_SCRATCH"
vm_timeout=${KUBEMOUNT_NODE_TIMEOUT:-1800}
qemu_pid=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
        [[ -n $qemu_pid ]] && kill -KILL "$qemu_pid" 2>/dev/null
        [[ ${KUBEMOUNT_NODE_KEEP_DISK:-} == 1 ]] || rm -f "$last/disk.img"
        rm -f "$last/results.img" "$last/vmlinuz" "$last/initrd.img"
        rm -rf "$KM_SCRATCH"
}
trap cleanup EXIT
failed=0

# ---- the .debs, the images, the root, the disk ----------------------------------------------
tap_embed "debs: " bash "$src/tests/package/build-debs.sh" "$src" "$build" "$build/debs" || done_testing
debs=()
for p in kubemount libkubemount0 libkubemount-dev; do
        f=$(compgen -G "$build/debs/${p}_*.deb" | head -n 1) || bail_out "build-debs.sh left no $p .deb in $build/debs"
        debs+=("$f")
done
took "debs"

images=(fuse-tools glusterfs nfs cifs iscsi)
missing=()
for i in "${images[@]}"; do [[ -f $build/images/$i/index.json ]] || missing+=("$i"); done
if ((${#missing[@]})); then
        if "$src/scripts/build-images" --out "$build/images" --cache "$build/images-cache" "${missing[@]}" \
                >"$KM_SCRATCH/images.log" 2>&1; then
                ok "the VCS images ${images[*]} (built: ${missing[*]})"
        else
                fail_with "scripts/build-images ${missing[*]}" "$KM_SCRATCH/images.log"
        fi
else
        ok "the VCS images ${images[*]} (in $build/images)"
fi
took "images"

if root_tar=$("$here/make-root.sh" "$build/node-cache" "${debs[@]}" 2>"$KM_SCRATCH/root.log"); then
        ok "the VM root: $root_tar"
else
        fail_with "the VM root (tests/node/make-root.sh: mmdebstrap)" "$KM_SCRATCH/root.log"
fi
took "root"

# The benchmarks run in the VM too (scenario y-bench): their driver and test root filesystem.
bench=$build/tests/bench/kubemount-bench
[[ -x $bench ]] || not_ok "the benchmark driver $bench (ninja -C $build)"
if bench_rootfs=$(bash "$src/tests/lib/rootfs.sh" "$build/test-rootfs" 2>"$KM_SCRATCH/rootfs.log"); then
        ok "the benchmarks' test root filesystem $bench_rootfs"
else
        fail_with "the benchmarks' test root filesystem (tests/lib/rootfs.sh)" "$KM_SCRATCH/rootfs.log"
fi
export KUBEMOUNT_NODE_BENCH=$bench KUBEMOUNT_NODE_BENCH_ROOTFS=$bench_rootfs

# The DaemonSet's image (scenario g-daemonset): deploy/Containerfile's tree of HEAD, built
# here by its build stage's script (cached in BUILD/node-cache: compiling under TCG would take
# longer than the rest of the tier), and deploy/daemonset.yaml translated to docker commands.
ds=$KM_SCRATCH/daemonset
mkdir -p "$ds/context"
head=$(git -C "$src" rev-parse HEAD) || bail_out "git rev-parse HEAD failed in $src"
tree_tar=$build/node-cache/tree-$head.tar
if [[ ! -f $tree_tar ]]; then
        mkdir -p "$KM_SCRATCH/tree-src" "$build/node-cache"
        if git -C "$src" archive HEAD | tar -x -C "$KM_SCRATCH/tree-src" &&
                sh "$src/deploy/build-tree.sh" "$KM_SCRATCH/tree-src" "$KM_SCRATCH/tree/stage" >"$KM_SCRATCH/tree.log" 2>&1 &&
                find "$KM_SCRATCH/tree/stage" -mindepth 1 -maxdepth 1 ! -name opt -exec rm -rf {} + &&
                tar -cf "$tree_tar.tmp" -C "$KM_SCRATCH/tree" stage 2>>"$KM_SCRATCH/tree.log"; then
                rm -f "$build"/node-cache/tree-*.tar
                mv "$tree_tar.tmp" "$tree_tar"
                ok "the DaemonSet image's tree of HEAD ${head:0:12} (deploy/build-tree.sh)"
        else
                fail_with "the DaemonSet image's tree (deploy/build-tree.sh)" "$KM_SCRATCH/tree.log"
        fi
else
        ok "the DaemonSet image's tree of HEAD ${head:0:12} (cached in $tree_tar)"
fi
cp "$tree_tar" "$ds/tree.tar" 2>/dev/null
git -C "$src" show HEAD:deploy/Containerfile >"$ds/context/Containerfile"
if git -C "$src" show HEAD:deploy/daemonset.yaml >"$KM_SCRATCH/daemonset.yaml" &&
        git -C "$src" show HEAD:deploy/configmap.yaml >"$KM_SCRATCH/configmap.yaml" &&
        python3 "$here/daemonset-docker.py" "$KM_SCRATCH/daemonset.yaml" "$KM_SCRATCH/configmap.yaml" \
                kubemount:node "$ds" /opt/node-test/daemonset 2>"$KM_SCRATCH/translate.log"; then
        ok "deploy/daemonset.yaml translated to docker commands (tests/node/daemonset-docker.py)"
else
        fail_with "deploy/daemonset.yaml translated to docker commands" "$KM_SCRATCH/translate.log"
fi
export KUBEMOUNT_NODE_DAEMONSET=$ds
if "$here/make-disk.sh" "$root_tar" "$build/debs" "$build/images" "$last" >"$KM_SCRATCH/disk.log" 2>&1; then
        ok "the VM disk: the .debs installed, the scenarios and node-test.service in"
else
        fail_with "the VM disk (tests/node/make-disk.sh)" "$KM_SCRATCH/disk.log"
fi
took "disk"

# ---- the VM ----------------------------------------------------------------------------------
# A guest panic ends qemu (pvpanic) rather than hanging until the timeout.
qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 2048 -nodefaults -no-user-config \
        -kernel "$last/vmlinuz" -initrd "$last/initrd.img" \
        -append "root=/dev/vda rw console=ttyS0 systemd.show_status=0 systemd.journald.forward_to_console=0" \
        -drive file="$last/disk.img",format=raw,if=virtio -drive file="$last/results.img",format=raw,if=virtio \
        -nic none -display none -serial file:"$last/serial.log" -monitor none \
        -device pvpanic -action panic=shutdown \
        </dev/null >"$KM_SCRATCH/qemu.log" 2>&1 &
qemu_pid=$!
vm_start=$SECONDS
seen=0
timed_out=0
# The runner's progress lines as they reach the serial log, with the time since qemu started.
progress() {
        local lines
        mapfile -t lines < <(grep -a 'node-test: ' "$last/serial.log" 2>/dev/null | tr -d '\r')
        while ((seen < ${#lines[@]})); do
                diag "vm +$((SECONDS - vm_start))s: ${lines[seen]##*node-test: }"
                seen=$((seen + 1))
        done
}
while kill -0 "$qemu_pid" 2>/dev/null; do
        progress
        if ((SECONDS - vm_start > vm_timeout)); then
                kill -KILL "$qemu_pid"
                timed_out=1
                break
        fi
        sleep 2
done
wait "$qemu_pid"
qemu_rc=$?
qemu_pid=""
progress
if ((timed_out)); then
        not_ok "the VM booted twice and powered off within ${vm_timeout}s (timed out: qemu killed)"
        failed=1
elif ((qemu_rc != 0)) || ! grep -aq 'node-test: powering off' "$last/serial.log"; then
        not_ok "the VM booted twice and powered off (qemu exit $qemu_rc)"
        diag "$(tail -n 20 "$KM_SCRATCH/qemu.log")"
        failed=1
else
        ok "the VM booted twice and powered off"
fi
took "vm"

# ---- the scenarios' results ------------------------------------------------------------------
tar -xf "$last/results.img" -C "$last/results" 2>"$KM_SCRATCH/results.log" ||
        diag "the results disk holds no tar: $(head -c 300 "$KM_SCRATCH/results.log")"

# scenario BOOT NAME: the scenario's TAP as ours.  No result, no plan, fewer tests
# than planned, a timeout or a crash are failures: never a skip.
scenario() {
        local boot=$1 name=$2 dir=$last/results/$1 tap rc secs planned ran
        tap=$dir/$name.tap
        if [[ ! -f $tap ]]; then
                not_ok "$name: no result (it did not run in boot ${boot#boot}, or its results never reached the host)"
                failed=1
                return
        fi
        read -r rc secs <"$dir/$name.rc" 2>/dev/null || rc=missing
        planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$tap" | tail -n 1)
        if [[ $planned == 0 ]]; then
                skip "$name" "$(sed -n 's/^1\.\.0 *# *SKIP *//p' "$tap")"
                return
        fi
        ran=$(grep -cE '^(not )?ok' "$tap")
        tap_embed "$name: " cat "$tap" || failed=1
        if [[ $rc == 124 || $rc == 137 ]]; then
                not_ok "$name: finished within its timeout (killed after ${secs}s)"
        elif [[ -z $planned ]]; then
                not_ok "$name: printed its plan (it ended early: exit $rc)"
        elif ((planned != ran)); then
                not_ok "$name: ran the $planned tests it planned (ran $ran)"
        elif [[ $rc != 0 && $rc != 1 ]]; then
                not_ok "$name: exited 0 or 1 (exit $rc)"
        else
                diag "$name: ${secs:-?}s"
                return
        fi
        failed=1
}
scenario boot1 setup
while IFS=/ read -r boot name; do
        scenario "$boot" "$name"
done <"$last/scenarios.list"
took "results"

if ((failed || KM_TAP_FAILED)); then
        diag "BUILD/node-last: $last (serial.log, results/)" "the end of the serial log:"
        diag "$(tail -n 60 "$last/serial.log" | tr -d '\r')"
        # Indented: the logs hold TAP lines that must not read as ours.
        {
                echo "== the end of $last/serial.log"
                tail -n 60 "$last/serial.log" | tr -d '\r' | sed 's/^/    /'
                for log in "$last"/results/boot*/*.log; do
                        [[ -s $log ]] || continue
                        echo "== $log"
                        tail -n 30 "$log" | sed 's/^/    /'
                done
        } >&2
fi
done_testing
