#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# deploy-check.sh SRCDIR BUILDDIR KUBEMOUNT: the manifests of deploy/ (issue 13,
# point 3), offline:
#   - every object validates against the Kubernetes schemas (kubernetes-models,
#     pinned in package-lock.json, installed with `npm ci` into
#     BUILDDIR/deploy-node once per lock file), no field the schema lacks;
#   - a copy with a typo'd field fails (the check can fail);
#   - the ConfigMap, laid out as the kubelet projects it and copied to the
#     host's layout by deploy/sync-vcs-map.sh, is what kubemount accepts:
#     `kubemount --vcs-configmap DIR vcs list --json` has every type and image
#     of both its forms, with no warning; a new version replaces the old.
# Needs node and npm (scripts/deps): a missing one fails, never skips.
set -uo pipefail

SRC=$1 BUILD=$2 KUBEMOUNT=$3
N=0 FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $*"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
bail_out() { echo "Bail out! $*"; exit 1; }
# The TAP lines of validate.mjs, renumbered.
tap_in() {
        local line
        while IFS= read -r line; do
                case $line in
                "ok - "*) ok "${line#ok - }" ;;
                "not ok - "*) not_ok "${line#not ok - }" ;;
                *) echo "$line" ;;
                esac
        done
}

for t in node npm python3; do
        command -v "$t" >/dev/null || bail_out "$t is missing (scripts/deps installs nodejs and npm)"
done
T=$(mktemp -d "${TMPDIR:-/tmp}/deploy-check.XXXXXX") || bail_out "mktemp"
trap 'rm -rf "$T"' EXIT

# npm ci once per lock file: a second run reuses BUILDDIR/deploy-node.
NODE_DIR=$BUILD/deploy-node
if ! cmp -s "$SRC/tests/deploy/package-lock.json" "$NODE_DIR/.installed-lock" ||
        [[ ! -d $NODE_DIR/node_modules/kubernetes-models ]]; then
        mkdir -p "$NODE_DIR" && cp "$SRC/tests/deploy/package.json" "$SRC/tests/deploy/package-lock.json" "$NODE_DIR/" ||
                bail_out "cannot copy package.json to $NODE_DIR"
        if ! out=$(cd "$NODE_DIR" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error 2>&1); then
                echo "$out" | sed 's/^/# /'
                echo "$out" >&2 # meson shows a failed test's stderr
                bail_out "npm ci in $NODE_DIR failed"
        fi
        cp "$SRC/tests/deploy/package-lock.json" "$NODE_DIR/.installed-lock"
fi
cp "$SRC/tests/deploy/validate.mjs" "$NODE_DIR/validate.mjs" || bail_out "cannot copy validate.mjs"
validate() { node "$NODE_DIR/validate.mjs" "$@"; }

manifests=("$SRC"/deploy/*.yaml)
((${#manifests[@]} >= 4)) || bail_out "deploy/ has ${#manifests[@]} manifests, expected namespace, configmap, daemonset, kustomization"
validate --configmap kubemount-vcs "$T/cm" "${manifests[@]}" > "$T/tap" 2>&1
rc=$?
tap_in <"$T/tap"
[[ $rc == 0 ]] && ok "validate.mjs: exit 0" || not_ok "validate.mjs: exit 0 (was $rc)"

# The check can fail: a typo'd field, a missing required one.
# rejected SED NEEDLE DESC: the DaemonSet edited by SED fails validation (exit 1), saying NEEDLE.
rejected() {
        local out rc
        sed "$1" "$SRC/deploy/daemonset.yaml" >"$T/bad.yaml"
        out=$(validate "$T/bad.yaml" 2>&1)
        rc=$?
        if [[ $rc == 1 && $out == *"$2"* ]]; then ok "$3"; else
                not_ok "$3 (exit $rc)"
                diag "$out"
        fi
}
rejected 's/mountPropagation:/mountPropogation:/' "mountPropogation: unknown field" \
        "a DaemonSet with mountPropogation fails, naming the field"
rejected 's/periodSeconds: 30$/periodSeconds: 30s/' "periodSeconds must be integer" \
        "a DaemonSet with periodSeconds: 30s fails (must be integer)"

# The ConfigMap as kubemount reads it on the host.
SYNC=$SRC/deploy/sync-vcs-map.sh
if sh "$SYNC" "$T/cm" "$T/host" >"$T/sync.log" 2>&1 && [[ -L $T/host/..data && -f $T/host/..data/mappings ]]; then
        ok "sync-vcs-map copies the projected ConfigMap to the host's layout (..data)"
else
        not_ok "sync-vcs-map copies the projected ConfigMap to the host's layout (..data)"
        diag "$(cat "$T/sync.log")" "$(ls -la "$T/host" 2>&1)"
fi
mkdir "$T/vcs.d"
list() { KUBEMOUNT_VCS_DIR=$T/vcs.d "$KUBEMOUNT" --vcs-configmap "$T/host" vcs list --json 2>"$T/err"; }
list >"$T/list.json"
rc=$?
[[ $rc == 0 ]] && ok "kubemount vcs list --json: exit 0" || not_ok "kubemount vcs list --json: exit 0 (was $rc)"
[[ ! -s $T/err ]] && ok "... no warning: kubemount takes the ConfigMap whole" || {
        not_ok "... no warning: kubemount takes the ConfigMap whole"
        diag "$(cat "$T/err")"
}
# What the ConfigMap says, read here without kubemount, against what kubemount lists.
compare() { # CM-DIR LIST.JSON
        python3 - "$1" "$2" <<'PY'
import json, os, sys
cm, listed = sys.argv[1], json.load(open(sys.argv[2]))
want = {}
read = lambda k: open(os.path.join(cm, "..data", k)).read().strip()
if os.path.exists(os.path.join(cm, "..data", "volume-plugin")):
    want[read("volume-plugin")] = read("docker-container")
for e in json.loads(read("mappings"))["mappings"]:
    for t in e["types"]:
        want[t] = e.get("image")
bad = []
for t, image in sorted(want.items()):
    got = next((x for x in listed if x["type"] == t), None)
    if got is None or got["image"] != image or not got["source"].startswith("configmap "):
        bad.append("%s: want %s from the configmap, got %s" % (t, image, got))
print("\n".join(bad) if bad else "%d types: %s" % (len(want), " ".join(sorted(want))))
sys.exit(1 if bad or len(want) < 2 else 0)
PY
}
if out=$(compare "$T/host" "$T/list.json" 2>&1); then
        ok "every type of both forms (volume-plugin/docker-container, mappings) with its image: $out"
else
        not_ok "every type of both forms (volume-plugin/docker-container, mappings) with its image"
        diag "$out"
fi

# A new version of the ConfigMap, as the kubelet swaps it, reaches the host's copy.
new=..2026_01_02_00_00_00.2
cp -r "$T/cm/..data/." "$T/cm/$new"
printf 'registry.example.com/kubemount/nfs@sha256:%064d' 2 >"$T/cm/$new/docker-container"
ln -s "$new" "$T/cm/..data_tmp" && mv -T "$T/cm/..data_tmp" "$T/cm/..data"
sh "$SYNC" "$T/cm" "$T/host" >>"$T/sync.log" 2>&1
list >"$T/list2.json"
if out=$(compare "$T/host" "$T/list2.json" 2>&1) && grep -q "nfs@sha256:0*2\"" "$T/list2.json"; then
        ok "a new ConfigMap version (nfs pinned by digest) replaces the old on the host"
else
        not_ok "a new ConfigMap version (nfs pinned by digest) replaces the old on the host"
        diag "$out" "$(cat "$T/sync.log")"
fi
versions=$(find "$T/host" -maxdepth 1 -name '..km*' | wc -l)
[[ $versions == 1 ]] && ok "... and the old version is gone" || not_ok "... and the old version is gone ($versions left)"

echo "1..$N"
exit $((FAILED > 0))
