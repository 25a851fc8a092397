#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No circles, no arrows up (TAP).  From the object files of the build, an
# undefined symbol in file A that file B defines is an edge A -> B; so is an
# #include "B.h" in A.c or in A's own A.h (a header's macros and inline
# helpers are B's, called or not: a circle through them is a circle).  Fails on
#   1. an edge from a lower folder to a higher one, or between container and
#      image (basic < mount < container < broker, image < vcs < route < cli; nsenter-compat
#      sees only mount and basic);
#   2. a cycle between files (each strongly connected set is reported with
#      one shortest cycle through it and a symbol per hop).
# Usage: layers.sh BUILD_ROOT [SOURCE_ROOT]
set -u -o pipefail
build=$1
src=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# Edges left out of the cycle check, "from-file to-file", each with a comment
# saying why and what ends it.  Reported on every run; add one only for a
# cycle that cannot be fixed where it is found, and tell the lead.
allow=()

# The folders each folder may call (its own is always allowed).
declare -A below=(
        [basic]=""
        [mount]="basic"
        [container]="mount basic"
        [image]="mount basic"
        [broker]="container mount basic"
        [vcs]="broker container image mount basic"
        [route]="vcs broker container image mount basic"
        [nsenter-compat]="mount basic"
        [cli]="route vcs broker container image mount basic"
)

command -v nm >/dev/null || { echo "Bail out! missing tool nm (binutils)"; exit 1; }
shopt -s nullglob
libs=("$build"/src/lib/*/libkm-*.a "$build"/nsenter-compat/libnsenter-compat.a)
cli_objs=("$build"/src/cli/kubemount.p/*.o)
[[ ${#libs[@]} -ge 5 ]] || { echo "Bail out! only ${#libs[@]} static libraries under $build (build first)"; exit 1; }
[[ ${#cli_objs[@]} -ge 5 ]] || { echo "Bail out! only ${#cli_objs[@]} objects of kubemount under $build (build first)"; exit 1; }

# "folder/file.c U|D symbol" for every global symbol of every object: U
# undefined there (lowercase w and v: weak undefined), D defined.
symbols() {
        local lib folder
        for lib in "${libs[@]}" cli; do
                if [[ $lib == cli ]]; then
                        folder=cli
                        set -- "${cli_objs[@]}"
                else
                        folder=$(basename "$(dirname "$lib")")
                        set -- "$lib"
                fi
                nm -A -P "$@" | awk -v folder="$folder" '
                        $3 ~ /^[A-Z]$/ || $3 == "w" || $3 == "v" {
                                obj = $1
                                sub(/^.*\[/, "", obj); sub(/\]:$/, "", obj); sub(/:$/, "", obj)
                                sub(/^.*\//, "", obj); sub(/\.o$/, "", obj)
                                print folder "/" obj, ($3 == "U" || $3 == "w" || $3 == "v") ? "U" : "D", $2
                        }' || return 1
        done
}

# The same records for includes: A.c (or its A.h) including B.h, where B.c exists, is
# "A U #include:B.h" and "B D #include:B.h".  Headers of no file (macro.h, kubemount.h,
# the CLI's cli.h) are below everything and make no edge.
includes() {
        local -A file_of=()
        local c b h f inc
        local sources=("$src"/src/lib/*/*.c "$src"/src/cli/*.c "$src"/nsenter-compat/*.c)
        for c in "${sources[@]}"; do file_of[$(basename "$c" .c)]=$c; done
        for c in "${sources[@]}"; do
                b=$(basename "$c" .c) h=${c%.c}.h
                f="$(basename "$(dirname "$c")")/$b.c"
                for inc in $(cat "$c" $([[ -f $h ]] && echo "$h") | sed -n 's/^#include "\([^"/]*\)\.h".*/\1/p' | sort -u); do
                        [[ $inc != "$b" && -n ${file_of[$inc]:-} ]] || continue
                        echo "$f U #include:$inc.h"
                        echo "$(basename "$(dirname "${file_of[$inc]}")")/$inc.c D #include:$inc.h"
                done
        done
}
table=$(symbols) || { echo "Bail out! nm failed on ${libs[*]}"; exit 1; }
table+=$'\n'$(includes) || { echo "Bail out! cannot read the includes under $src"; exit 1; }

echo "1..2"
printf '%s\n' "$table" | awk -v allow="${allow[*]}" -v below_spec="$(
        for f in "${!below[@]}"; do printf '%s:%s;' "$f" "${below[$f]}"; done
)" '
function folder(f) { sub(/\/.*/, "", f); return f }
function edge_ok(a, b,   fa, fb) {
        fa = folder(a); fb = folder(b)
        return fa == fb || ((fa SUBSEP fb) in may)
}
# Tarjan: strongly connected sets of files.
function strong(v,   i, w) {
        index_of[v] = low[v] = ++counter
        stack[++sp] = v; on_stack[v] = 1
        for (i = 1; i <= nout[v]; i++) {
                w = out[v, i]
                if (!(w in index_of)) {
                        strong(w)
                        if (low[w] < low[v]) low[v] = low[w]
                } else if (on_stack[w] && index_of[w] < low[v])
                        low[v] = index_of[w]
        }
        if (low[v] == index_of[v]) {
                ++nscc
                do {
                        w = stack[sp--]; on_stack[w] = 0
                        scc_of[w] = nscc; scc_size[nscc]++
                } while (w != v)
        }
}
# Shortest way from v back to v inside its strongly connected set.
function cycle(v,   head, tail, q, i, n, u, w, seen, prev, hop, path) {
        head = tail = 1; q[1] = v; seen[v] = 1
        while (head <= tail) {
                u = q[head++]
                for (i = 1; i <= nout[u]; i++) {
                        w = out[u, i]
                        if (scc_of[w] != scc_of[v]) continue
                        if (w == v) {
                                # walk back to v, then print forwards
                                n = 0; hop[++n] = v; hop[++n] = u
                                while (u != v) { u = prev[u]; hop[++n] = u }
                                path = hop[n]
                                for (i = n - 1; i >= 1; i--)
                                        path = path " -> " hop[i] " (" via[hop[i + 1], hop[i]] ")"
                                return path
                        }
                        if (!(w in seen)) { seen[w] = 1; prev[w] = u; q[++tail] = w }
                }
        }
        return v
}
BEGIN {
        n = split(below_spec, specs, ";")
        for (i = 1; i <= n; i++) {
                if (specs[i] == "") continue
                split(specs[i], kv, ":"); m = split(kv[2], lows, " ")
                for (j = 1; j <= m; j++) may[kv[1], lows[j]] = 1
        }
        n = split(allow, words, " ")
        for (i = 1; i + 1 <= n; i += 2) allowed[words[i], words[i + 1]] = 1
}
$2 == "D" { if (!($3 in def)) def[$3] = $1; files[$1] = 1; next }
$2 == "U" { files[$1] = 1; need[++nneed] = $1 SUBSEP $3 }
END {
        for (i = 1; i <= nneed; i++) {
                split(need[i], p, SUBSEP); a = p[1]; s = p[2]
                if (!(s in def) || def[s] == a) continue
                b = def[s]
                if ((a, b) in via) continue
                via[a, b] = s; nedges++
                if (!edge_ok(a, b)) up[++nup] = a " -> " b " (" s ")"
                if ((a, b) in allowed) { allowed_seen[a, b] = s; continue }
                out[a, ++nout[a]] = b
        }
        nfiles = 0
        for (f in files) nfiles++

        if (nup == 0)
                printf "ok 1 - %d calls between %d files, none up a folder or between container and image\n", nedges, nfiles
        else {
                printf "not ok 1 - %d %s up a folder or between container and image:\n", nup, nup == 1 ? "call goes" : "calls go"
                for (i = 1; i <= nup; i++) printf "#   %s\n", up[i]
        }

        for (f in files) if (!(f in index_of)) strong(f)
        bad = 0
        for (c = 1; c <= nscc; c++) if (scc_size[c] > 1) bad++
        nallowed = 0
        for (k in allowed_seen) nallowed++
        if (bad == 0)
                printf "ok 2 - no cycle between the %d files%s\n", nfiles,
                       nallowed ? sprintf(" (%d calls left out: allow in layers.sh)", nallowed) : ""
        else {
                printf "not ok 2 - %d %s of files call each other in a cycle:\n", bad, bad == 1 ? "set" : "sets"
                for (f in files) {
                        c = scc_of[f]
                        if (scc_size[c] < 2 || (c in told)) continue
                        told[c] = 1
                        printf "#   cycle: %s\n", cycle(f)
                        printf "#     calls inside it:\n"
                        for (k in via) {
                                split(k, p, SUBSEP)
                                if (scc_of[p[1]] == c && scc_of[p[2]] == c && !((k) in allowed_seen))
                                        printf "#       %s -> %s (%s)\n", p[1], p[2], via[k]
                        }
                }
        }
        for (k in allowed) {
                split(k, p, SUBSEP)
                if (k in allowed_seen)
                        printf "# left out of the cycle check (allow in layers.sh): %s -> %s (%s)\n", p[1], p[2], allowed_seen[k]
                else
                        printf "# allow in layers.sh names %s -> %s, a call no longer made: remove it\n", p[1], p[2]
        }
}'
