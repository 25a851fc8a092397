# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# A local docker-registry (and python fakes) for the registry client's
# integration tests, sourced after tests/lib/node.sh:
#
#     registry_private_net "$@"   before node_sandbox: the sandbox's PID 1
#         re-executes itself once in a new network namespace with only a
#         loopback (nothing of this test can reach or be reached from outside)
#     registry_start [--tls] [--htpasswd USER:PASS] [--token]
#         docker-registry 2.8 with a config of ours: http.addr 127.0.0.1:PORT
#         (a free port), storage in a temp dir; waits until it answers.  Sets
#         REGISTRY=127.0.0.1:PORT, REGISTRY_DIR (the temp dir) and REGISTRY_URL.
#         --tls: a throwaway CA and a server certificate for 127.0.0.1 and
#             localhost (openssl); REGISTRY_CA is the CA's certificate and
#             REGISTRY_CERTS_DIR a certs.d-style DIR with $REGISTRY/ca.crt;
#         --htpasswd USER:PASS: docker-registry's htpasswd auth (bcrypt);
#         --token: the registry stays open on a port of its own and
#             REGISTRY is a python front (tests/lib/registry-fake.py front)
#             that wants a Bearer token it issued, from its /token, to the
#             basic credentials USER:PASS (from --htpasswd, else user:pass);
#             issued tokens are listed in REGISTRY_TOKENS (a file).
#     registry_push SRC NAME:TAG
#         skopeo copy of SRC (an OCI layout dir, a skopeo dir: dir, or any
#         skopeo source) to $REGISTRY/NAME:TAG, with the CA and credentials
#     registry_stop
#         kills what registry_start started, by PID, and removes the temp dir
#     registry_fake_start NAME ARGS...
#         tests/lib/registry-fake.py serve ARGS... on a free port; sets
#         FAKE_PORT, and FAKE_LOG (its request log) and FAKE_PID[NAME];
#         registry_fake_stop NAME (registry_stop ends them all too)
#     registry_make_certs DIR
#         DIR/ca.crt (a throwaway CA), DIR/server.crt and DIR/server.key (for
#         127.0.0.1 and localhost), DIR/client.crt and DIR/client.key (a
#         client certificate) for TLS fakes
#     registry_test_image DIR
#         a small OCI layout in DIR (tag "test"): busybox and 2 MB of random
#         bytes in two layers, built with umoci
#
# Processes started here are ended by PID; nothing listens on anything but
# 127.0.0.1.

REGISTRY_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REGISTRY_FAKE=$REGISTRY_LIB_DIR/registry-fake.py
REGISTRY_PID=""
REGISTRY_FRONT_PID=""
REGISTRY_DIR=""
REGISTRY_PUSH_TO=""
REGISTRY_PUSH_CREDS=""
declare -A FAKE_PID=()
FAKE_PORT="" FAKE_LOG=""
export FAKE_PORT FAKE_LOG

registry_private_net() {
        [[ ${KM_IN_SANDBOX:-} == 1 ]] || return 0
        if [[ ${KM_REGISTRY_NETNS:-} != 1 ]]; then
                command -v unshare >/dev/null && unshare --net true 2>/dev/null || return 0
                export KM_REGISTRY_NETNS=1
                # exec: still PID 1 of the sandbox (node_sandbox checks).
                exec unshare --net -- bash "$0" "$@"
        fi
        if command -v ip >/dev/null; then
                ip link set lo up
        else
                python3 -c 'import fcntl, socket, struct
s = socket.socket(); ifr = struct.pack("16sH14s", b"lo", 0, b"")
flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, ifr))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))'
        fi
}

_registry_err() { echo "registry.sh: $*" >&2; }

_registry_free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# _registry_answers URL [CAFILE]: any HTTP status from URL.
_registry_answers() {
        local code
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 ${2:+--cacert "$2"} "$1" 2>/dev/null)
        [[ $code =~ ^[1-5][0-9][0-9]$ ]]
}

registry_make_certs() {
        local d=$1
        mkdir -p "$d" || return 1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj "/CN=kubemount test CA $$" -keyout "$d/ca.key" -out "$d/ca.crt" \
                -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
                >/dev/null 2>&1 &&
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
                        -keyout "$d/server.key" -out "$d/server.csr" >/dev/null 2>&1 &&
                printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
                        "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" \
                        >"$d/server.ext" &&
                openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
                        -days 2 -extfile "$d/server.ext" -out "$d/server.crt" >/dev/null 2>&1 &&
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=kubemount test client" \
                        -keyout "$d/client.key" -out "$d/client.csr" >/dev/null 2>&1 &&
                printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
                        "extendedKeyUsage=clientAuth" >"$d/client.ext" &&
                openssl x509 -req -in "$d/client.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
                        -days 2 -extfile "$d/client.ext" -out "$d/client.crt" >/dev/null 2>&1 || {
                _registry_err "openssl could not make the test certificates"
                return 1
        }
}

# _registry_wait_port FILE PID: the port a python server wrote to FILE.
_registry_wait_port() {
        local i
        for ((i = 0; i < 500; i++)); do
                [[ -s $1 ]] && { cat "$1"; return 0; }
                kill -0 "$2" 2>/dev/null || return 1
                sleep 0.02
        done
        return 1
}

registry_start() {
        local tls=0 token=0 creds="" port scheme=http a tries
        while (($#)); do
                case $1 in
                --tls) tls=1 ;;
                --token) token=1 ;;
                --htpasswd)
                        creds=$2
                        shift
                        ;;
                *)
                        _registry_err "registry_start: unknown option $1"
                        return 1
                        ;;
                esac
                shift
        done
        [[ -z $REGISTRY_PID ]] || { _registry_err "registry_start: one is running"; return 1; }
        for a in docker-registry skopeo openssl python3 curl; do
                command -v "$a" >/dev/null || { _registry_err "$a is not installed"; return 1; }
        done
        REGISTRY_DIR=$(mktemp -d "${REGISTRY_TMPDIR:-${KM_SCRATCH:-${TMPDIR:-/tmp}}}/registry.XXXXXX") || return 1
        mkdir -p "$REGISTRY_DIR/data"
        REGISTRY_CA="" REGISTRY_CERTS_DIR="" REGISTRY_TOKENS="" REGISTRY_PUSH_CREDS=""
        if ((tls)); then
                registry_make_certs "$REGISTRY_DIR/tls" || return 1
                REGISTRY_CA=$REGISTRY_DIR/tls/ca.crt
                scheme=https
        fi
        {
                echo "version: 0.1"
                echo "log: {level: warn, accesslog: {disabled: true}}"
                echo "storage:"
                echo "  filesystem: {rootdirectory: $REGISTRY_DIR/data}"
                echo "  delete: {enabled: true}"
                echo "  maintenance: {uploadpurging: {enabled: false}}"
                echo "http:"
                echo "  addr: 127.0.0.1:@PORT@"
                echo "  secret: $(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
                ((tls)) && echo "  tls: {certificate: $REGISTRY_DIR/tls/server.crt, key: $REGISTRY_DIR/tls/server.key}"
                if [[ -n $creds ]] && ((!token)); then
                        echo "auth:"
                        echo "  htpasswd: {realm: kubemount-test, path: $REGISTRY_DIR/htpasswd}"
                fi
        } >"$REGISTRY_DIR/config.in"
        if [[ -n $creds ]] && ((!token)); then
                printf '%s\n' "${creds#*:}" | htpasswd -Bic "$REGISTRY_DIR/htpasswd" "${creds%%:*}" 2>/dev/null || {
                        _registry_err "htpasswd failed"
                        return 1
                }
                REGISTRY_PUSH_CREDS=$creds
        fi
        # A free port can be taken between the check and the bind: try again then.
        for ((tries = 0; tries < 5; tries++)); do
                port=$(_registry_free_port) || return 1
                sed "s/@PORT@/$port/" "$REGISTRY_DIR/config.in" >"$REGISTRY_DIR/config.yml"
                docker-registry serve "$REGISTRY_DIR/config.yml" >>"$REGISTRY_DIR/registry.log" 2>&1 </dev/null &
                REGISTRY_PID=$!
                if wait_for 15 _registry_up "$scheme://127.0.0.1:$port/v2/" "$REGISTRY_PID"; then
                        kill -0 "$REGISTRY_PID" 2>/dev/null && break
                fi
                kill "$REGISTRY_PID" 2>/dev/null
                wait "$REGISTRY_PID" 2>/dev/null
                REGISTRY_PID=""
        done
        if [[ -z $REGISTRY_PID ]]; then
                _registry_err "docker-registry did not start:"
                tail -n 5 "$REGISTRY_DIR/registry.log" >&2
                registry_stop
                return 1
        fi
        REGISTRY=127.0.0.1:$port
        REGISTRY_PUSH_TO=$REGISTRY
        if ((tls)); then
                mkdir -p "$REGISTRY_DIR/certs.d/$REGISTRY"
                cp "$REGISTRY_CA" "$REGISTRY_DIR/certs.d/$REGISTRY/ca.crt"
                REGISTRY_CERTS_DIR=$REGISTRY_DIR/certs.d
        fi
        if ((token)); then
                REGISTRY_TOKENS=$REGISTRY_DIR/tokens
                : >"$REGISTRY_TOKENS"
                python3 "$REGISTRY_FAKE" front --upstream "$REGISTRY" --user "${creds:-user:pass}" \
                        --tokens "$REGISTRY_TOKENS" --port-file "$REGISTRY_DIR/front.port" \
                        --log "$REGISTRY_DIR/front.log" >>"$REGISTRY_DIR/front.err" 2>&1 </dev/null &
                REGISTRY_FRONT_PID=$!
                port=$(_registry_wait_port "$REGISTRY_DIR/front.port" "$REGISTRY_FRONT_PID") || {
                        _registry_err "the token front did not start:"
                        cat "$REGISTRY_DIR/front.err" >&2
                        registry_stop
                        return 1
                }
                REGISTRY=127.0.0.1:$port
        fi
        REGISTRY_URL=$scheme://$REGISTRY
        export REGISTRY REGISTRY_URL REGISTRY_CA REGISTRY_CERTS_DIR REGISTRY_TOKENS REGISTRY_DIR
}

_registry_up() { # URL PID
        kill -0 "$2" 2>/dev/null || return 0 # died: stop waiting
        _registry_answers "$1" "${REGISTRY_CA:-}"
}

registry_push() { # SRC NAME:TAG
        local src=$1 dest=$2 opts=(--insecure-policy copy --quiet --retry-times 2)
        [[ -n $REGISTRY_PUSH_TO ]] || { _registry_err "registry_push: no registry"; return 1; }
        if [[ -f $src/oci-layout ]]; then
                src=oci:$src
        elif [[ -f $src/manifest.json ]]; then
                src=dir:$src
        fi
        if [[ -n $REGISTRY_CA ]]; then
                opts+=(--dest-cert-dir "$REGISTRY_CERTS_DIR/$REGISTRY_PUSH_TO")
        else
                opts+=(--dest-tls-verify=false)
        fi
        [[ -n $REGISTRY_PUSH_CREDS ]] && opts+=(--dest-creds "$REGISTRY_PUSH_CREDS")
        # Pushes go to the registry itself, not through the token front.
        REGISTRY_AUTH_FILE=$REGISTRY_DIR/push-auth.json skopeo "${opts[@]}" "$src" "docker://$REGISTRY_PUSH_TO/$dest"
}

registry_fake_start() { # NAME ARGS...
        local name=$1 dir pid
        shift
        [[ -z ${FAKE_PID[$name]:-} ]] || { _registry_err "fake $name is running"; return 1; }
        dir=${REGISTRY_FAKE_DIR:-}
        if [[ -z $dir ]]; then
                dir=$(mktemp -d "${REGISTRY_TMPDIR:-${KM_SCRATCH:-${TMPDIR:-/tmp}}}/registry-fakes.XXXXXX") || return 1
                REGISTRY_FAKE_DIR=$dir
        fi
        rm -f "$dir/$name.port"
        FAKE_LOG=$dir/$name.log
        : >"$FAKE_LOG"
        python3 "$REGISTRY_FAKE" serve --port-file "$dir/$name.port" --log "$FAKE_LOG" "$@" \
                >"$dir/$name.err" 2>&1 </dev/null &
        pid=$!
        FAKE_PID[$name]=$pid
        FAKE_PORT=$(_registry_wait_port "$dir/$name.port" "$pid") || {
                _registry_err "fake registry $name did not start:"
                cat "$dir/$name.err" >&2
                registry_fake_stop "$name"
                return 1
        }
}

registry_fake_stop() { # NAME
        local pid=${FAKE_PID[$1]:-}
        [[ -n $pid ]] || return 0
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        unset "FAKE_PID[$1]"
}

registry_stop() {
        local pid name
        for name in "${!FAKE_PID[@]}"; do
                registry_fake_stop "$name"
        done
        for pid in "$REGISTRY_FRONT_PID" "$REGISTRY_PID"; do
                [[ -n $pid ]] || continue
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        REGISTRY_PID="" REGISTRY_FRONT_PID="" REGISTRY_PUSH_TO=""
        [[ -n $REGISTRY_DIR ]] && rm -rf "$REGISTRY_DIR"
        [[ -n ${REGISTRY_FAKE_DIR:-} ]] && rm -rf "$REGISTRY_FAKE_DIR"
        REGISTRY_DIR="" REGISTRY_FAKE_DIR=""
}

registry_test_image() { # DIR
        local out=$1 work
        command -v umoci >/dev/null || { _registry_err "umoci is not installed"; return 1; }
        work=$(mktemp -d "${REGISTRY_TMPDIR:-${KM_SCRATCH:-${TMPDIR:-/tmp}}}/registry-image.XXXXXX") || return 1
        mkdir -p "$work/bin" "$work/data"
        cp "$(command -v busybox)" "$work/bin/busybox" &&
                head -c 2000000 /dev/urandom >"$work/data/random" &&
                umoci init --layout "$out" &&
                umoci new --image "$out:test" &&
                umoci insert --image "$out:test" "$work/bin" /bin &&
                umoci insert --image "$out:test" "$work/data" /data &&
                umoci config --image "$out:test" --config.cmd /bin/busybox --config.cmd true &&
                umoci gc --layout "$out"
        local rc=$?
        rm -rf "$work"
        ((rc == 0)) || _registry_err "umoci could not build the test image"
        return $rc
}
