#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: spare containers (src/lib/vcs/agent-spare.h).  After a run of an
# image, the agent starts one container of its kind ahead, held before its
# command; the next run of the kind is served by it (its PID 1 is older than
# its command).  What a run gets from a spare is its own: its command's
# output, status and stdin; ps lists no spare; a run of another kind
# (--privileged) is never served by one of the default kind, nor the other
# way; a run from a --rootfs directory is, until what its start took there
# changes (/proc made a symlink, the root moved or mounted over, a bind
# source replaced: the run then gets what a start of its own would); an
# image's tree changed since its spare was made is found and unpacked again,
# and the spare is not used; ten runs at once all come right;
# an agent killed leaves no spare behind (their PID 1s end with its socket,
# the next agent removes their state); an agent with KUBEMOUNT_SPARES=0 makes
# none; a spare keeps no idle agent from exiting, and goes with it.
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
node_sandbox "$@"
need_tools pgrep tar python3

node_up --no-kubelet
vcs_setup
export KUBEMOUNT_STORE_DIR=$NODE/store
CONTAINERS=$KUBEMOUNT_STATE_DIR/containers

has_spare() { compgen -G "$CONTAINERS/spare-*" >/dev/null; }
no_spare() { ! has_spare; }
spare_names() { (cd "$CONTAINERS" 2>/dev/null && compgen -G 'spare-*' | xargs); }
# How many clock ticks PID 1 started before the command: about 0 for a start of its own,
# the time since it was made for a spare's (each run below comes a second after the last).
AGE='set -- $(cat /proc/1/stat); p1=${22}; set -- $(cat /proc/self/stat); echo "age $((${22} - p1))"'
age_of() { sed -n 's/^age //p' <<<"$1"; }
served() { local a; a=$(age_of "$1"); [[ -n $a ]] && ((a >= 50)); }
# The ps -a names, spares would be among them.
listed() { vcs_json "' '.join(x.get('name', '') for x in c)"; }
# never_served DESC CMD...: CMD -- sh twice, a second apart; the second starts from nothing, no spare is made.
never_served() {
        local desc=$1
        shift
        run "$@" -- sh -c "$AGE"
        sleep 1
        run "$@" -- sh -c "$AGE"
        served "$OUT" && not_ok "$desc" || ok "$desc (age $(age_of "$OUT"))"
        holds "... and no spare is made" no_spare
}
# agent_end SIGNAL: the agent of vcs_agent_start ended by SIGNAL, and reaped.
agent_end() {
        kill -"$1" "$AGENT"
        wait "$AGENT" 2>/dev/null
        node_untrack "$AGENT"
}

vcs_agent_start
tar -C "$ROOTFS" -czf "$KM_SCRATCH/rootfs.tar.gz" . || bail_out "cannot pack the test rootfs"
run km image import --json "rootfs:$KM_SCRATCH/rootfs.tar.gz" vcs/spare:1
tree=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rootfs"])' "$OUT" 2>/dev/null)
[[ -n $tree && $tree == "$KUBEMOUNT_STORE_DIR"/* && -d $tree ]] || bail_out "no image tree in the test's store: '$tree'"
img_run() { km run --image vcs/spare:1 "$@"; }

# ---- a --rootfs directory: served while what its start took holds (start-pins.h) ----
COPY=$KM_SCRATCH/copy
cp -a "$ROOTFS" "$COPY" && mkdir -p "$KM_SCRATCH/src" && echo first >"$KM_SCRATCH/src/marker" ||
        bail_out "cannot copy the test rootfs"
copy_run() { km run --rootfs "$COPY" --mount "$KM_SCRATCH/src:/src" "$@"; }
# spare_then DESC CHANGE: a spare of copy_run's kind waits, CHANGE is made, the next run shows what it sees.
spare_then() {
        check "$1: a spare of the kind waits" wait_for 10 has_spare
        sleep 1
        eval "$2" || bail_out "$1: cannot make the change"
        run copy_run -- sh -c 'cat /src/marker /marker 2>/dev/null; stat -f -c %T /proc; '"$AGE"
}
run copy_run -- sh -c "$AGE"
is "$RC" 0 "run --rootfs: a first run"
spare_then "run --rootfs again" ":"
served "$OUT" && ok "... served by a spare (age $(age_of "$OUT"))" || not_ok "... served by a spare ($OUT)"
# Answered at its command's exit code, before its PID 1 is gone (agent-run.c answers_at_status): its record first.
check "... a spare of the kind waits again" wait_for 10 has_spare
sleep 1
run copy_run -- sh -c "$AGE; exit 5"
is "$RC" 5 "a served run --rootfs: its command's status"
served "$OUT" && ok "... served (age $(age_of "$OUT"))" || not_ok "... served ($OUT)"
is "$(cd "$CONTAINERS" && compgen -G 'run-*')" "" "... and its record is gone when its client has its answer"
spare_then "a file in a directory no mount passes" "echo live >'$COPY/tmp/file'"
served "$OUT" && ok "... still served (age $(age_of "$OUT"))" || not_ok "... still served ($OUT)"
run copy_run -- cat /tmp/file
is "$OUT" "live" "... and the root is the directory as it is now"
spare_then "/proc replaced by a symlink to /etc" "rm -rf '$COPY/proc' && ln -s /etc '$COPY/proc'"
is "$RC" 125 "... refused as a start of its own refuses it (THREATS 19), not served"
like "$ERR" "/proc is a symlink" "... and says why: $ERR"
rm -f "$COPY/proc" && mkdir "$COPY/proc"
run copy_run -- true
spare_then "the root moved away, another put in its place" \
        "mv '$COPY' '$COPY.old' && cp -a '$COPY.old' '$COPY' && echo new-root >'$COPY/marker'"
like "$OUT" "new-root" "... the run has the new root"
served "$OUT" && not_ok "... not served ($OUT)" || ok "... not served (age $(age_of "$OUT"))"
rm -rf "$COPY.old"
mkdir -p "$KM_SCRATCH/over" && cp -a "$COPY/." "$KM_SCRATCH/over" && echo mounted-over >"$KM_SCRATCH/over/marker"
spare_then "a directory mounted over the root's path" "mount --bind '$KM_SCRATCH/over' '$COPY'"
like "$OUT" "mounted-over" "... the run has what is mounted there"
served "$OUT" && not_ok "... not served ($OUT)" || ok "... not served (age $(age_of "$OUT"))"
umount "$COPY" || bail_out "cannot unmount $COPY"
run copy_run -- true
spare_then "a bind source replaced" \
        "mv '$KM_SCRATCH/src' '$KM_SCRATCH/src.old' && mkdir '$KM_SCRATCH/src' && echo second >'$KM_SCRATCH/src/marker'"
like "$OUT" "^second" "... the run binds the new source"
served "$OUT" && not_ok "... not served ($OUT)" || ok "... not served (age $(age_of "$OUT"))"
run copy_run -- true
# A spare sets up right after a run: meanwhile its caller may remove the directory, and it must make nothing there.
bad=0
for i in $(seq 10); do
        cp -a "$ROOTFS" "$KM_SCRATCH/gone" && rmdir "$KM_SCRATCH/gone/sys" || bail_out "cannot copy the test rootfs"
        km run --rootfs "$KM_SCRATCH/gone" -- true || bad=$((bad + 1))
        rm -rf "$KM_SCRATCH/gone" || bad=$((bad + 1))
        sleep 0.05
        [[ ! -e $KM_SCRATCH/gone ]] || bad=$((bad + 1))
done
is "$bad" 0 "a --rootfs directory removed right after each of ten runs: removed, nothing made again in it"
agent_end TERM # with its spares: the image's below are the only ones
vcs_agent_start

# ---- a run, then its spare; the next run of the kind is served by it ----
run img_run -- sh -c "$AGE; exit 3"
is "$RC" 3 "a first run: its status"
served "$OUT" && not_ok "... started from nothing" || ok "... started from nothing (age $(age_of "$OUT"))"
check "... then a spare of its kind is made" wait_for 10 has_spare
first=$(spare_names)
like "$(cat "$CONTAINERS/$first/state.json" 2>&1)" '"status": *"spare"' "its state says spare ($first)"
unlike "$(listed)" "spare-" "ps -a does not list it"
sleep 1
run img_run -- sh -c "$AGE; echo out; echo err >&2; exit 7"
is "$RC" 7 "the next run of the kind: its own status"
if served "$OUT"; then ok "... served by the spare (age $(age_of "$OUT") ticks)"; else
        not_ok "... served by the spare"
        diag "$OUT" "$(tail -n 20 "$KM_SCRATCH/agent.log")"
fi
like "$OUT" "out" "... its stdout is the client's"
is "$ERR" "err" "... and its stderr"
holds "... the spare it was is gone from the state dir" test ! -e "$CONTAINERS/$first"
check "... and the next spare is made" wait_for 10 has_spare
sleep 1
run with_stdin "from-the-client" img_run -i -- cat
is "$RC:$OUT" "0:from-the-client" "run -i -- cat: the client's stdin"
sleep 1
run with_stdin "again" img_run -i -- sh -c "cat; echo; $AGE"
like "$OUT" "^again" "... again, its own stdin"
served "$OUT" && ok "... served by a spare of the -i kind" || not_ok "... served by a spare of the -i kind ($OUT)"

# ---- a served run's config.json: written once the agent is idle, with its own command ----
check "a spare waits" wait_for 10 has_spare
sleep 1
img_run --name cfg -- sh -c "$AGE; exec sleep 30" >"$KM_SCRATCH/cfg.out" 2>&1 &
cfg_pid=$!
check "... a run of the kind with a name of its own starts" wait_for 10 test -s "$KM_SCRATCH/cfg.out"
served "$(cat "$KM_SCRATCH/cfg.out")" && ok "... served by the spare" || not_ok "... served by the spare ($(cat "$KM_SCRATCH/cfg.out"))"
cfg_args() { python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["process"]["args"]))' \
        "$CONTAINERS/cfg/config.json" 2>/dev/null; }
cfg_is() { [[ $(cfg_args) == "$1" ]]; }
check "... its config.json names its own command, not the spare's" wait_for 5 cfg_is "sh -c $AGE; exec sleep 30"
check "... rm -f" km rm -f cfg
wait "$cfg_pid"

# ---- kinds do not mix ----
full='0 +0 +4294967295'
for round in 1 2 3; do
        run img_run --privileged -- sh -c "cat /proc/self/uid_map; $AGE"
        like "$OUT" "$full" "--privileged, round $round: the host's ids (a privileged container)"
        run img_run -- sh -c "cat /proc/self/uid_map; $AGE"
        unlike "$OUT" "$full" "default, round $round: an id range of its own"
        sleep 1
done
served "$OUT" && ok "... the last one served by a spare of its own kind" || not_ok "... served by a spare ($OUT)"

# ---- ten at once ----
pids=()
for i in $(seq 10); do
        img_run -- sh -c "echo run-$i" >"$KM_SCRATCH/burst-$i.out" 2>&1 &
        pids+=($!)
done
bad=0
for i in $(seq 10); do
        wait "${pids[$((i - 1))]}" || bad=$((bad + 1))
        [[ $(cat "$KM_SCRATCH/burst-$i.out") == "run-$i" ]] || bad=$((bad + 1))
done
is "$bad" 0 "ten runs at once: each its own output and status 0"

# ---- an image's tree changed after its spare was made ----
check "a spare of the image waits" wait_for 10 has_spare
sleep 1
run img_run -- sh -c "$AGE"
served "$OUT" && ok "run --image again: served by a spare" || not_ok "run --image again: served by a spare ($OUT)"
check "... and the next spare is made" wait_for 10 has_spare
sleep 1
echo planted >"$tree/planted"
run img_run -- sh -c 'test -e /planted && echo planted || echo clean; '"$AGE"
like "$OUT" "^clean" "a file planted in the tree after the spare was made: not seen (the tree was unpacked again)"
served "$OUT" && not_ok "... and the spare was not used" || ok "... and the spare was not used (age $(age_of "$OUT"))"
holds "... the store's tree is the image's again" test ! -e "$tree/planted"

# ---- an agent killed leaves no spare ----
check "a spare waits" wait_for 10 has_spare
agent_end KILL
check "the agent killed: its spares' PID 1s end with its socket" wait_for 10 sh -c '! pgrep -x kubemount-init'
vcs_agent_start
check "the next agent removes what they left" wait_for 5 no_spare
unlike "$(listed)" "spare-" "... and ps -a lists none"

# ---- KUBEMOUNT_SPARES=0 ----
agent_end TERM
KUBEMOUNT_SPARES=0 vcs_agent_start
never_served "KUBEMOUNT_SPARES=0: no run is served by a spare" img_run

# ---- a spare keeps no idle agent ----
agent_end TERM
spawn "$KUBEMOUNT" agent --idle-exit 1 >>"$KM_SCRATCH/agent.log" 2>&1 </dev/null
AGENT=$SPAWNED
check "an agent with --idle-exit 1" wait_for 10 test -S "$KUBEMOUNT_STATE_DIR/agent.sock"
check "... runs" img_run -- true
check "... makes a spare" wait_for 10 has_spare
check "... and exits when idle all the same" wait_for 10 vcs_gone "$AGENT"
check "... its spare gone with it" wait_for 5 no_spare

vcs_cleanup
done_testing
