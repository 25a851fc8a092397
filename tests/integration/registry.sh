#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The registry client (src/lib/image/registry.c) through tests/integration/registry-pull.c,
# against docker-registry 2.8 and python fakes (tests/lib/registry.sh), all on
# 127.0.0.1 in a network namespace of the test's own:
#   - plain http registry named insecure: pull by tag and by digest, every blob
#     in the store under its sha256; a second pull fetches no blob; 404 is not
#     retried; without --insecure no plain-http request is ever made;
#   - TLS registry with a throwaway CA: refused without the CA ("certificate"),
#     works with --certs-dir (ca.crt or any *.crt); client certificates from
#     the certs dir (client.cert + client.key);
#   - basic auth (htpasswd -B): config.json "auth" / "username"+"password",
#     the default file list ($REGISTRY_AUTH_FILE, $HOME/.docker), the first file
#     with an entry wins; no or wrong credentials: a clear 401 with no password;
#   - bearer tokens from the python token front: works; no token in any output
#     (with --debug), no credentials: the token service's 401;
#   - THREATS 24: layer longer than declared (with and without Content-Length),
#     wrong bytes, manifest bytes that do not match the digest asked for or
#     Docker-Content-Digest, manifest over 4 MiB, manifest that is also an
#     index, foreign "urls", digest "sha256:../../x": refused, nothing stored;
#   - THREATS 25: a redirect to another host or port carries no Authorization
#     (the target logs what it got); https -> http redirect refused, its signed
#     query in no message; a redirect loop ends after 5;
#   - retries on 503 with backoff and Retry-After, none with --retries -1;
#   - progress line on a terminal only.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/node.sh" || { echo "Bail out! cannot load tests/lib/node.sh"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh" || { echo "Bail out! cannot load tests/lib/registry.sh"; exit 1; }
registry_private_net "$@"
node_sandbox "$@"

PULL=${REGISTRY_PULL:-}
[[ -n $PULL && -x $PULL ]] || bail_out "no registry-pull binary: set REGISTRY_PULL (meson test sets it)"
need_tools docker-registry skopeo umoci openssl python3 curl htpasswd sha256sum busybox
[[ ${KM_REGISTRY_NETNS:-} == 1 ]] || diag "no private network namespace: servers listen on 127.0.0.1 only"

node_up --no-kubelet --private
trap 'registry_stop; _km_sandbox_exit' EXIT
W=$NODE/reg
mkdir -p "$W"
export REGISTRY_TMPDIR=$W
# The machine's credentials must not take part.
export HOME=$W/home DOCKER_CONFIG=$W/no-docker-config
unset REGISTRY_AUTH_FILE
mkdir -p "$HOME"

IMG=$W/img
registry_test_image "$IMG" >/dev/null || { echo "Bail out! cannot build the test image"; exit 1; }
# json_get EXPR FILE: a python expression over j (the JSON in FILE).
json_get() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($1)" "$2"; }
MANIFEST=$(json_get 'j["manifests"][0]["digest"]' "$IMG/index.json")
mapfile -t LAYERS < <(json_get '"\n".join(l["digest"] for l in j["layers"])' "$IMG/blobs/sha256/${MANIFEST#sha256:}")
CONFIG=$(json_get 'j["config"]["digest"]' "$IMG/blobs/sha256/${MANIFEST#sha256:}")
((${#LAYERS[@]} == 2)) || { echo "Bail out! the test image should have 2 layers"; exit 1; }
LAYER=${LAYERS[0]} # the first fetched: the one a layer fault stops at

STORE=$W/store
fresh_store() { rm -rf "$STORE"; }
# pull ARGS...: registry-pull with RC, OUT, ERR (also kept in POUT, PERR for no_secret).
pull() {
        run "$PULL" "$@"
        POUT=$OUT PERR=$ERR
}
# has_blob DIGEST: in the store, and its content hashes to its name.
has_blob() {
        local f=$STORE/blobs/sha256/${1#sha256:}
        [[ -f $f && $(sha256sum <"$f" | cut -d' ' -f1) == "${1#sha256:}" ]]
}
# The whole image is in the store and every blob verifies.
image_stored() {
        local d bad=0
        for d in "$MANIFEST" "$CONFIG" "${LAYERS[@]}"; do
                has_blob "$d" || bad=1
        done
        for d in "$STORE"/blobs/sha256/*; do
                [[ $(sha256sum <"$d" | cut -d' ' -f1) == "$(basename "$d")" ]] || bad=1
        done
        return $bad
}
tmp_empty() { [[ -z $(ls -A "$STORE/tmp" 2>/dev/null) ]]; }
blob_count() { find "$STORE/blobs/sha256" -type f 2>/dev/null | wc -l; }
# Secrets must be in neither output of the last pull.
no_secret() { # DESC SECRET...
        local desc=$1 s leaked=""
        shift
        for s; do
                [[ -n $s && ($POUT == *"$s"* || $PERR == *"$s"*) ]] && leaked=1
        done
        if [[ -z $leaked ]]; then ok "$desc"; else
                not_ok "$desc"
                diag "a secret is in the output:" "$POUT" "$PERR"
        fi
}
auth_json() { # FILE KEY USER:PASS
        printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$2" "$(printf '%s' "$3" | base64 -w0)" >"$1"
}
echo '{"auths": {}}' >"$W/empty.json"

# ---- plain http, named insecure ----
registry_start || { echo "Bail out! docker-registry did not start"; exit 1; }
check "skopeo pushes the test image to docker-registry on $REGISTRY" registry_push "$IMG" kubemount/test:v1
fresh_store
pull --insecure "$REGISTRY" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "pull by tag (OCI manifest): prints the manifest digest"
[[ $RC != 0 ]] && diag "$ERR"
check "... manifest, config and both layers in the store, each verifying" image_stored
is "$(blob_count)" 4 "... and nothing else"
check "... no temp file left" tmp_empty
fresh_store
pull --insecure "$REGISTRY" "$REGISTRY/kubemount/test@$MANIFEST" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "pull by digest"
check "... the whole image in the store" image_stored
pull --insecure "$REGISTRY" "$REGISTRY/kubemount/test:nope" "$STORE"
is "$RC" 1 "an unknown tag fails"
like "$ERR" "manifest kubemount/test:nope: 404 Not Found: MANIFEST_UNKNOWN" "... with the registry's 404 and code"
pull "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "without --insecure an http registry is not used"
like "$ERR" "GET https://$REGISTRY/" "... the request was https"
# kubemount vcs pull: the images the type table maps, once each (named types: the
# defaults name docker.io, which this test never reaches).
mkdir -p "$W/vcs.d"
printf '{"mappings": [{"types": ["kmtest-a", "kmtest-b"], "image": "%s"}, {"types": ["kmtest-c"], "image": "%s"}]}\n' \
        "$REGISTRY/kubemount/test:v1" "$REGISTRY/kubemount/missing:v1" >"$W/vcs.d/10-test.json"
VP=(env KUBEMOUNT_VCS_DIR="$W/vcs.d" KUBEMOUNT_STORE_DIR="$W/vstore" "$KUBEMOUNT")
run "${VP[@]}" vcs pull --insecure-registry "$REGISTRY" --json kmtest-a kmtest-b
is "$RC" 0 "vcs pull kmtest-a kmtest-b: exit 0"
is "$(grep -c '"manifest": "'"$MANIFEST"'"' <<<"$OUT")" 1 "... one image, pulled once for both types"
run "${VP[@]}" vcs pull --insecure-registry "$REGISTRY" kmtest-c kmtest-a
is "$RC" 1 "vcs pull with an image the registry lacks: exit 1"
like "$ERR" "vcs pull $REGISTRY/kubemount/missing:v1: .*404" "... naming it and why"
like "$OUT" "$MANIFEST" "... and the other still pulled"
run "${VP[@]}" vcs pull kmtest-nope
is "$RC" 2 "vcs pull of an unmapped type: exit 2"
registry_stop

# ---- TLS with a throwaway CA ----
registry_start --tls || { echo "Bail out! docker-registry with TLS did not start"; exit 1; }
check "skopeo pushes to the TLS registry (--dest-cert-dir)" registry_push "$IMG" kubemount/test:v1
fresh_store
pull "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "TLS registry, CA not given: refused"
like "$ERR" "certificate" "... the error names the certificate problem"
is "$(blob_count)" 0 "... nothing stored"
pull --certs-dir "$REGISTRY_CERTS_DIR" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "with --certs-dir DIR (DIR/$REGISTRY/ca.crt): works"
check "... the whole image in the store" image_stored
mkdir -p "$W/certs2/$REGISTRY"
cp "$REGISTRY_CA" "$W/certs2/$REGISTRY/zz-other.crt"
fresh_store
pull --certs-dir "$W/certs2" "$REGISTRY/kubemount/test@$MANIFEST" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "any *.crt in the certs dir is a CA"
registry_stop

# Nothing is ever asked over plain http of a registry not named insecure.
registry_fake_start plain --layout "$IMG" || { echo "Bail out! the fake registry did not start"; exit 1; }
pull "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "an http-only server, not named insecure: refused"
is "$(grep -c '^GET' "$FAKE_LOG")" 0 "... no plain-http request reached it (no fallback)"
registry_fake_stop plain

# ---- basic auth (htpasswd) ----
PW="pw-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
registry_start --htpasswd "alice:$PW" || { echo "Bail out! docker-registry with htpasswd did not start"; exit 1; }
check "skopeo pushes with credentials" registry_push "$IMG" kubemount/test:v1
auth_json "$W/good.json" "$REGISTRY" "alice:$PW"
auth_json "$W/bad.json" "$REGISTRY" "alice:wrong-$PW"
fresh_store
pull --insecure "$REGISTRY" --auth-file "$W/good.json" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "basic auth with a config.json \"auth\" entry"
check "... the whole image in the store" image_stored
fresh_store
pull --insecure "$REGISTRY" --auth-file "$W/empty.json" --auth-file "$W/good.json" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 0 "a file without an entry is passed over for the next"
fresh_store
run env REGISTRY_AUTH_FILE="$W/good.json" "$PULL" --insecure "$REGISTRY" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 0 "default list: \$REGISTRY_AUTH_FILE"
mkdir -p "$HOME/.docker"
printf '{"auths": {"http://%s/v1/": {"username": "alice", "password": "%s"}}}\n' "$REGISTRY" "$PW" \
        >"$HOME/.docker/config.json"
fresh_store
pull --insecure "$REGISTRY" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 0 "default list: \$HOME/.docker/config.json, \"username\"/\"password\" under a URL key"
rm -rf "$HOME/.docker"
fresh_store
pull --insecure "$REGISTRY" --auth-file "$W/empty.json" --debug "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "no credentials: refused"
like "$ERR" "401 Unauthorized.*no credentials for $REGISTRY in $W/empty.json" "... a clear 401 naming the files searched"
pull --insecure "$REGISTRY" --auth-file "$W/bad.json" --debug "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "wrong password: refused"
like "$ERR" "401 Unauthorized.*credentials for $REGISTRY from $W/bad.json were refused" "... a clear 401"
no_secret "... no password in any output (with --debug)" "$PW" "$(printf '%s' "alice:wrong-$PW" | base64 -w0)"
is "$(blob_count)" 0 "... nothing stored"
registry_stop

# ---- bearer tokens (python token front before docker-registry) ----
registry_start --token || { echo "Bail out! the token front did not start"; exit 1; }
check "skopeo pushes behind the token front" registry_push "$IMG" kubemount/test:v1
auth_json "$W/token.json" "$REGISTRY" "user:pass"
auth_json "$W/token-bad.json" "$REGISTRY" "user:nope"
fresh_store
pull --insecure "$REGISTRY" --auth-file "$W/token.json" --debug "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 0 "bearer flow: pull works"
[[ $RC != 0 ]] && diag "$ERR"
check "... the whole image in the store" image_stored
like "$(cat "$REGISTRY_DIR/front.log")" "GET /token\?service=kubemount-test&scope=repository%3Akubemount%2Ftest%3Apull authorization=Basic" \
        "... the token was asked for the challenge's service and scope, with basic credentials"
is "$(grep -c 'blobs/.*authorization=Bearer' "$REGISTRY_DIR/front.log")" 3 "... each blob with the token (cached)"
is "$(grep -c '^GET /token.*authorization=Basic' "$REGISTRY_DIR/front.log")" 1 "... one token for the pull"
mapfile -t TOKENS <"$REGISTRY_TOKENS"
if ((${#TOKENS[@]} > 0)); then
        no_secret "... no token, no password in any output (with --debug)" "${TOKENS[@]}" \
                "$(printf user:pass | base64 -w0)"
else
        not_ok "... the front issued no token"
fi
fresh_store
pull --insecure "$REGISTRY" --auth-file "$W/empty.json" "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "bearer flow without credentials: refused"
like "$ERR" "token for repository:kubemount/test:pull from http://$REGISTRY/token: 401 Unauthorized.*no credentials" \
        "... the token service's 401, naming the missing credentials"
pull --insecure "$REGISTRY" --auth-file "$W/token-bad.json" --debug "$REGISTRY/kubemount/test:v1" "$STORE"
is "$RC" 1 "bearer flow with a wrong password: refused"
mapfile -t TOKENS <"$REGISTRY_TOKENS"
no_secret "... no token, no password in any output" "${TOKENS[@]}" "user:nope" "$(printf user:nope | base64 -w0)"
registry_stop

# ---- THREATS 24: a registry serving bad content ----
threat24() { # FAULT REF-SUFFIX ERE DESC
        local fault=$1 ref=$2 ere=$3 desc=$4 layer
        registry_fake_start "$fault" --layout "$IMG" --fault "$fault" || return
        fresh_store
        pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y$ref" "$STORE"
        is "$RC" 1 "[24] $desc: refused"
        like "$ERR" "$ere" "[24] ... $ere"
        for layer in "${LAYERS[@]}"; do
                check_fails "[24] ... layer $layer not stored" has_blob "$layer"
        done
        check_fails "[24] ... the manifest not stored" test -e "$STORE/blobs/sha256/${MANIFEST#sha256:}"
        check "[24] ... no temp file left" tmp_empty
        registry_fake_stop "$fault"
}
threat24 long-layer :test "blob x/y@$LAYER: the registry sends more than the [0-9]+ bytes declared, refused" \
        "a layer longer than declared (Content-Length)"
threat24 long-layer-chunked :test "blob x/y@$LAYER: the registry sends more than the [0-9]+ bytes declared" \
        "a layer longer than declared (no Content-Length)"
threat24 wrong-layer :test "blob x/y@$LAYER: .*got sha256:" "wrong bytes for a layer's digest"
threat24 manifest-bytes-nodcd "@$MANIFEST" "the registry sent content whose digest is sha256:" \
        "a manifest fetched by digest whose bytes have another digest"
threat24 manifest-bytes :test "Docker-Content-Digest $MANIFEST does not match the content's" \
        "a manifest by tag that does not match Docker-Content-Digest"
threat24 big-manifest :test "manifest x/y:test: larger than 4194304 bytes, refused" "a manifest over 4 MiB"
threat24 big-manifest-chunked :test "larger than 4194304 bytes, refused" "a manifest over 4 MiB (no Content-Length)"
threat24 manifest-also-index :test "also an index" "a manifest that is also an index"
threat24 layer-urls :test "urls" "a layer with foreign urls"
threat24 layer-digest-traversal :test "digest" "a layer digest sha256:../../x"
registry_fake_start traversal --layout "$IMG"
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y@sha256:../../x" "$STORE"
is "$RC" 1 "[24] a reference with digest sha256:../../x: refused"
is "$(grep -c '^GET' "$FAKE_LOG")" 0 "[24] ... before any request"
registry_fake_stop traversal

# ---- THREATS 25: redirects ----
registry_fake_start target --layout "$IMG"
TARGET=$FAKE_PORT TARGET_LOG=$FAKE_LOG
for to in "localhost:$TARGET" "127.0.0.1:$TARGET"; do
        registry_fake_start front --layout "$IMG" --basic "u:$PW" --redirect "http://$to"
        FRONT=127.0.0.1:$FAKE_PORT
        auth_json "$W/front.json" "$FRONT" "u:$PW"
        : >"$TARGET_LOG"
        fresh_store
        pull --insecure "$FRONT" --auth-file "$W/front.json" "$FRONT/x/y:test" "$STORE"
        is "$RC:$OUT" "0:$MANIFEST" "[25] blobs redirected to http://$to: the pull works"
        check "[25] ... the whole image in the store" image_stored
        is "$(grep -c 'blobs/.*authorization=Basic' "$FAKE_LOG")" 3 "[25] ... the registry got the credentials"
        is "$(grep -c "blobs/.*authorization=none host=$to\$" "$TARGET_LOG")" 3 \
                "[25] ... the redirect target ($to) got 3 blob requests, none with Authorization"
        is "$(grep -vc 'authorization=none' "$TARGET_LOG")" 0 "[25] ... and nothing else"
        registry_fake_stop front
done
# A second pull into a full store asks for no blob.
registry_fake_start again --layout "$IMG"
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 0 "a pull into a store that has the blobs"
is "$(grep -c /blobs/ "$FAKE_LOG")" 0 "... fetches no blob"
registry_fake_stop again

registry_make_certs "$W/tls" || { echo "Bail out! openssl"; exit 1; }
SIG="X-Amz-Signature=s3cr3t$RANDOM"
registry_fake_start tlsfront --layout "$IMG" --tls "$W/tls/server.crt" "$W/tls/server.key" \
        --redirect "http://127.0.0.1:$TARGET" --redirect-query "?$SIG"
mkdir -p "$W/tls-certs/127.0.0.1:$FAKE_PORT"
cp "$W/tls/ca.crt" "$W/tls-certs/127.0.0.1:$FAKE_PORT/ca.crt"
: >"$TARGET_LOG"
fresh_store
pull --certs-dir "$W/tls-certs" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "[25] https registry redirecting a blob to http: refused"
like "$ERR" "redirect to http://127.0.0.1:$TARGET/v2/x/y/blobs/sha256:[0-9a-f]+ refused" "[25] ... by name"
no_secret "[25] ... the redirect's signed query is in no message" "$SIG" "s3cr3t"
is "$(grep -c '^GET' "$TARGET_LOG")" 0 "[25] ... the http target got no request"
check "[25] ... no temp file left" tmp_empty
registry_fake_stop tlsfront
registry_fake_stop target

# A redirect loop ends after 5 redirects.
registry_fake_start loop --layout "$IMG" --redirect self
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "a redirect loop: refused"
like "$ERR" "more than 5 redirects" "... after 5 redirects"
is "$(grep -c /blobs/ "$FAKE_LOG")" 6 "... 6 requests"
registry_fake_stop loop

# ---- client certificates (certs.d client.cert + client.key) ----
registry_fake_start mtls --layout "$IMG" --tls "$W/tls/server.crt" "$W/tls/server.key" --client-ca "$W/tls/ca.crt"
C=$W/mtls-certs/127.0.0.1:$FAKE_PORT
mkdir -p "$C"
cp "$W/tls/ca.crt" "$C/ca.crt"
fresh_store
pull --certs-dir "$W/mtls-certs" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "a registry that wants a client certificate, none in certs.d: refused"
cp "$W/tls/client.crt" "$C/client.cert"
cp "$W/tls/client.key" "$C/client.key"
pull --certs-dir "$W/mtls-certs" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC:$OUT" "0:$MANIFEST" "... with client.cert and client.key there: works"
rm "$C/client.key"
pull --certs-dir "$W/mtls-certs" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "a client.cert without its client.key: refused"
like "$ERR" "client certificate .*client.cert: its key .*client.key" "... naming the missing key"
registry_fake_stop mtls

# ---- retries ----
registry_fake_start retry --layout "$IMG" --fail-first 2
fresh_store
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 0 "two 503s, then the pull works (retries)"
is "$(grep -c manifests/test "$FAKE_LOG")" 3 "... the manifest was asked 3 times"
registry_fake_stop retry
registry_fake_start retry --layout "$IMG" --fail-first 1
pull --insecure "127.0.0.1:$FAKE_PORT" --retries -1 "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC" 1 "--retries -1: a 503 is final"
like "$ERR" "503 Service Unavailable" "... and reported"
registry_fake_stop retry
registry_fake_start retry --layout "$IMG" --fail-first 1 --retry-after 1
fresh_store
t0=$(date +%s%N)
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
ms=$((($(date +%s%N) - t0) / 1000000))
is "$RC" 0 "a 503 with Retry-After: 1, then the pull works"
check "... after waiting the second ($ms ms)" test "$ms" -ge 1000
registry_fake_stop retry
registry_fake_start four --layout "$IMG"
pull --insecure "127.0.0.1:$FAKE_PORT" "127.0.0.1:$FAKE_PORT/x/y:nope" "$STORE"
is "$RC:$(grep -c manifests/nope "$FAKE_LOG")" "1:1" "a 404 is not retried"

# ---- progress: on a terminal only ----
fresh_store
run script -qec "'$PULL' --insecure 127.0.0.1:$FAKE_PORT --progress 127.0.0.1:$FAKE_PORT/x/y:test '$STORE'" /dev/null
like "$OUT" "pull x/y: sha256:[0-9a-f]{12} [0-9.]+/[0-9.]+ MB" "a progress line on a terminal"
fresh_store
pull --insecure "127.0.0.1:$FAKE_PORT" --progress "127.0.0.1:$FAKE_PORT/x/y:test" "$STORE"
is "$RC:$ERR" "0:" "nothing when it is not a terminal"
registry_fake_stop four

registry_stop
node_down "registry"
done_testing
