#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The systemd files as `meson install` lays them out (TAP): every unit and
# timer passes `systemd-analyze verify` with no output at all (a warning, such
# as an unknown key, fails it: verify itself exits 0 on those), and the
# tmpfiles entry makes the state dir, the store and /etc/kubemount with the
# modes kubemount makes them with.  No systemd as PID 1 is needed: both tools
# run offline on a root of their own (--root), which holds the install and a
# copy of the system's units (verify loads sysinit.target and the like).
# Usage: units-verify.sh BUILD_DIR
set -u -o pipefail
build=$1
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
for t in systemd-analyze systemd-tmpfiles meson; do
        command -v "$t" >/dev/null || { echo "Bail out! missing tool $t (install: scripts/deps)"; exit 1; }
done
sys_units=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
[[ -e $sys_units/sysinit.target ]] || { echo "Bail out! no $sys_units/sysinit.target (install: scripts/deps)"; exit 1; }

root=$(mktemp -d /tmp/kubemount-units.XXXXXX) || exit 1
trap 'rm -rf "$root"' EXIT
out=$(DESTDIR=$root meson install -C "$build" --no-rebuild --quiet 2>&1) || { echo "Bail out! meson install: $out"; exit 1; }
if ! mkdir -p "$root/usr/lib/systemd/system" || ! cp -a "$sys_units/." "$root/usr/lib/systemd/system/"; then
        echo "Bail out! cannot copy $sys_units into $root"
        exit 1
fi

mapfile -t units < <(find "$root" -path "$root/usr/lib/systemd/system" -prune -o \
        -type f \( -name 'kubemount*.service' -o -name 'kubemount*.timer' \) -print | sort)
names=$(for u in "${units[@]}"; do basename "$u"; done | tr '\n' ' ')
if [[ $names == "kubemount-agent.service kubemount-gc.service kubemount-gc.timer kubemount-setup.service " ]]; then
        ok "installed: $names"
else
        not_ok "installed: the agent, gc, setup services and the gc timer (got: $names)"
fi
for u in "${units[@]}"; do
        out=$(systemd-analyze verify --man=no --generators=no --root="$root" "$u" 2>&1)
        rc=$?
        if [[ $rc == 0 && -z $out ]]; then
                ok "systemd-analyze verify $(basename "$u"): clean"
        else
                not_ok "systemd-analyze verify $(basename "$u"): clean (exit $rc)"
                diag "$out"
        fi
done
for u in "${units[@]}"; do
        # What verify does not check: the command is the installed binary.
        while read -r cmd; do
                if [[ -x $root$cmd ]]; then ok "$(basename "$u"): $cmd is installed"; else
                        not_ok "$(basename "$u"): $cmd is installed"
                fi
        done < <(sed -n 's/^Exec[A-Za-z]*=[-@+!:]*\([^ ]*\).*/\1/p' "$u")
done

mapfile -t confs < <(find "$root" -path '*/tmpfiles.d/kubemount*.conf' -type f)
if ((${#confs[@]} == 1)); then ok "installed: tmpfiles.d/kubemount.conf"; else
        not_ok "installed: one tmpfiles.d/kubemount.conf (got ${#confs[@]})"
fi
if ((EUID != 0)); then
        # The entries chown to root.
        echo "ok $((n + 1)) - systemd-tmpfiles --create # SKIP not root"
        echo "1..$((n + 1))"
        exit $((failed > 0))
fi
out=$(systemd-tmpfiles --create --root="$root" "${confs[@]}" 2>&1)
rc=$?
if [[ $rc == 0 && -z $out ]]; then ok "systemd-tmpfiles --create: clean"; else
        not_ok "systemd-tmpfiles --create: clean (exit $rc)"
        diag "$out"
fi
# The modes of the code: the state dir (src/lib/vcs/state-dir.c) and the store
# (src/lib/image/store.c) 0700, refused when group- or other-writable.
for want in /run/kubemount:700 /var/lib/kubemount:700 /etc/kubemount:755 /etc/kubemount/vcs.d:755; do
        d=${want%:*}
        got=$(stat -c '%F %a %u:%g' "$root$d" 2>&1)
        if [[ $got == "directory ${want##*:} 0:0" ]]; then ok "$d: directory, mode ${want##*:}, root"; else
                not_ok "$d: directory, mode ${want##*:}, root (got: $got)"
        fi
done
echo "1..$n"
exit $((failed > 0))
