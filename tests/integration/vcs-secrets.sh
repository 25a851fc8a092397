#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# THREATS 32 (issue 9, item 12): secrets in a VCS command's arguments and
# environment (password=, *_KEY, --token VALUE, a URL's password) are masked
# in ps, ps --json, logs and state.json, also after the agent is restarted
# and adopts the container, and for a state.json an older agent wrote in
# clear.  The real command and environment stay only in the bundle's
# config.json (mode 0600 in a 0700 directory), which the runtime reads and
# exec needs (the container's environment): nothing else under the state
# directory holds them, with the embedded launcher, runc and crun (whose own
# state keeps a copy of the bundle config, root's alone).
# shellcheck disable=SC2016 # single-quoted scripts are expanded by the container's sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/rootfs.sh" || { echo "Bail out! cannot load tests/lib/rootfs.sh"; exit 1; }
export KM_RUN_PRIVILEGED=1 # these containers make their own mounts (see tests/lib/rootfs.sh km)
node_sandbox "$@"

need_tools python3 grep stat runc crun

node_up --no-kubelet
vcs_setup
vcs_agent_start
S=$KUBEMOUNT_STATE_DIR
LEAK='hunter2|s3cr3tenv|t0kenval|urlpa55|awsk3y'

# What a VCS for a cifs share runs, with its secrets in every form.
SCRIPT='echo started; : mount.cifs //srv/share /mnt -o username=u,password=hunter2; exec sleep 1000'
ARGS=(sh -c "$SCRIPT" sh --token t0kenval https://u:urlpa55@srv/x AWS_SECRET_ACCESS_KEY=awss3cr3t)
LEAK+='|awss3cr3t'
ENVS=(-e DB_PASSWORD=s3cr3tenv -e AWS_SECRET_ACCESS_KEY=awsk3y -e PLAIN=visible)

# secrets_only_in_config NAME DESC: the secrets are in NAME's config.json
# (0600, its directory 0700) and in no other file under the state dir but
# the runtime's own copy of the bundle config (crun keeps one in its state,
# runtime/NAME/config.json), which only root can read either.
secrets_only_in_config() {
        local name=$1 desc=$2 dir=$S/containers/$1 files f
        like "$(cat "$dir/config.json" 2>&1)" "password=hunter2" "$desc: config.json holds the real command"
        like "$(cat "$dir/config.json" 2>&1)" "DB_PASSWORD=s3cr3tenv" "$desc: ... and environment"
        is "$(stat -c %a "$dir/config.json" 2>&1)" 600 "$desc: config.json is mode 0600"
        is "$(stat -c %a "$dir" 2>&1)" 700 "$desc: its directory is mode 0700"
        files=$(grep -rlaE "$LEAK" "$S" 2>/dev/null | grep -vx "$S/containers/[^/]*/config.json" |
                grep -vx "$S/runtime/[^/]*/config.json")
        is "$files" "" "$desc: no other file under the state dir holds a secret"
        if [[ -e $S/runtime/$name/config.json ]]; then
                for f in "$S/runtime" "$S/runtime/$name" "$S/runtime/$name/config.json"; do
                        like "$(stat -c %u:%a "$f")" "^0:[0-7]00$" "$desc: ${f#"$S"/} is root's alone (uid:mode)"
                done
        fi
}

# masked_everywhere NAME DESC: ps, ps --json, logs and state.json show the
# command with <masked> values and no secret.
masked_everywhere() {
        local name=$1 desc=$2
        run km ps
        like "$OUT" "(^|$NL)$name .*password=<masked>" "$desc: ps shows the command, password masked"
        unlike "$OUT$ERR" "$LEAK" "$desc: ps shows no secret"
        run km ps --json -a
        like "$OUT" "--token\",[[:space:]]*\"<masked>\"" "$desc: ps --json masks the value after --token"
        like "$OUT" "https://u:<masked>@srv/x" "$desc: ps --json masks a URL's password"
        like "$OUT" "AWS_SECRET_ACCESS_KEY=<masked>" "$desc: ps --json masks an assignment"
        unlike "$OUT$ERR" "$LEAK" "$desc: ps --json shows no secret"
        like "$(cat "$S/containers/$name/state.json" 2>&1)" "password=<masked>" "$desc: state.json has the masked command"
        unlike "$(cat "$S/containers/$name/state.json" 2>&1)" "$LEAK" "$desc: state.json holds no secret"
        run km logs "$name"
        like "$OUT" "started" "$desc: logs has the output"
        unlike "$OUT$ERR" "$LEAK" "$desc: logs shows no secret"
}
NL=$'\n'

# ---- the embedded launcher ----
run vcs_run --detach --name s1 "${ENVS[@]}" -- "${ARGS[@]}"
is "$RC:$OUT" "0:s1" "run --detach with secrets in the command and environment"
wait_for 5 vcs_logs_has s1 started || diag "s1 did not start: $(km logs s1 2>&1)"
masked_everywhere s1 "embedded"
secrets_only_in_config s1 "embedded"
run km exec s1 -- sh -c 'echo "$DB_PASSWORD $PLAIN"'
is "$OUT" "s3cr3tenv visible" "embedded: exec gets the container's real environment"

# ---- an attached run: masked while it runs ----
spawn km run --rootfs "$ROOTFS" --name s2 "${ENVS[@]}" -- "${ARGS[@]}" >"$KM_SCRATCH/s2.out" 2>&1
wait_for 5 vcs_wait_status s2 running 5 || diag "s2 did not start: $(cat "$KM_SCRATCH/s2.out")"
run km ps --json
like "$OUT" "\"s2\"" "attached run: listed by ps --json"
unlike "$OUT" "$LEAK" "attached run: ps --json shows no secret"
unlike "$(cat "$S/containers/s2/state.json" 2>&1)" "$LEAK" "attached run: state.json holds no secret"
# The kubemount that waits for it (timeout(1) runs it under km) shows its command line to everyone.
caller=$(pgrep -P "$(pgrep -P "$SPAWNED" -x timeout | head -n1)" -x kubemount | head -n1)
like "$(tr '\0' ' ' <"/proc/${caller:-0}/cmdline" 2>&1)" "run --rootfs .*password=\*+" \
        "attached run: the caller's command line keeps the keys"
unlike "$(tr '\0' ' ' <"/proc/${caller:-0}/cmdline" 2>&1)" "$LEAK" "attached run: ... and shows no secret value"
km rm -f s2 >/dev/null 2>&1

# ---- the agent killed and started again: it adopts s1 from state.json and config.json ----
{ kill -KILL "$AGENT" && wait "$AGENT"; } 2>/dev/null
rm -f "$S/agent.sock" # stale: vcs_agent_start waits for the new one
vcs_agent_start
is "$(vcs_status s1)" "running" "a new agent adopts s1"
masked_everywhere s1 "adopted"
run km exec s1 -- sh -c 'echo "$DB_PASSWORD"'
is "$OUT" "s3cr3tenv" "adopted: exec still gets the real environment (from config.json)"

# ---- a state.json written in clear (by an older agent) is masked when shown ----
{ kill -KILL "$AGENT" && wait "$AGENT"; } 2>/dev/null
rm -f "$S/agent.sock" # stale: vcs_agent_start waits for the new one
python3 - "$S/containers/s1/state.json" <<'EOF'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["command"] = ["mount.cifs", "//srv/share", "/mnt", "-o", "username=u,password=hunter2"]
json.dump(s, open(p, "w"))
EOF
vcs_agent_start
run km ps --json -a
like "$OUT" "username=u,password=<masked>" "an old state.json in clear: ps --json masks it"
unlike "$OUT" "$LEAK" "... no secret shown"
run km ps
unlike "$OUT" "$LEAK" "... nor by ps"
km rm -f s1 >/dev/null 2>&1

# ---- runc ----
run vcs_run --detach --name s3 --runtime runc "${ENVS[@]}" -- "${ARGS[@]}"
is "$RC:$OUT" "0:s3" "runc: run --detach with secrets"
wait_for 10 vcs_logs_has s3 started || diag "s3 did not start: $(km logs s3 2>&1)"
masked_everywhere s3 "runc"
secrets_only_in_config s3 "runc"
km rm -f s3 >/dev/null 2>&1

# ---- crun ----
run vcs_run --detach --name s4 --runtime crun "${ENVS[@]}" -- "${ARGS[@]}"
is "$RC:$OUT" "0:s4" "crun: run --detach with secrets"
[[ $RC == 0 ]] || diag "$ERR"
wait_for 10 vcs_logs_has s4 started || diag "s4 did not start: $(km logs s4 2>&1)"
masked_everywhere s4 "crun"
secrets_only_in_config s4 "crun"
km rm -f s4 >/dev/null 2>&1

unlike "$(cat "$KM_SCRATCH/agent.log" 2>&1)" "$LEAK" "the agent's own log has no secret"
vcs_cleanup
node_down "vcs secrets"
done_testing
