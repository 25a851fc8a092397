#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""HTTP servers on 127.0.0.1 for the registry client's tests (tests/lib/registry.sh).

  registry-fake.py serve --layout DIR --port-file F [--tls CERT KEY [--client-ca CA]]
                         [--basic USER:PASS] [--fault KIND]... [--redirect URLBASE|self]
                         [--redirect-query Q] [--fail-first N] [--retry-after S] [--log FILE]
      a read-only registry that serves the OCI layout DIR (tags from the
      org.opencontainers.image.ref.name annotations) under any repository
      name, with faults on demand:
        long-layer / long-layer-chunked   layers with 1 MiB more than declared
                                          (with a matching Content-Length / none)
        wrong-layer                       layers with their last byte changed
        manifest-bytes                    the manifest with a byte more, but the
                                          original Docker-Content-Digest
        manifest-bytes-nodcd              the same without Docker-Content-Digest
        big-manifest / big-manifest-chunked  a 5 MiB manifest
        manifest-also-index               the manifest with "manifests": [] too
        layer-urls                        a layer with foreign "urls"
        layer-digest-traversal            a layer digest "sha256:../../x"
      --client-ca: TLS clients must show a certificate that CA signed;
      --redirect: blob requests get 307 to URLBASE + the same path (+ --redirect-query Q),
      "self": to this server again (a redirect loop);
      --fail-first N: the first N /v2/NAME/ requests get 503 (with Retry-After S).

  registry-fake.py front --upstream HOST:PORT --port-file F --user USER:PASS --tokens FILE [--log FILE]
      a token service (/token) and a reverse proxy to the registry at
      upstream that wants "Authorization: Bearer T" for a T it issued (to
      the basic credentials USER:PASS only) for the repository's scope.

The log has one line per request: "METHOD PATH authorization=SCHEME|none host=HOST";
never a credential.  The tokens file gets every issued token, one a line,
for the tests to look for them in outputs.
"""
import argparse
import base64
import hashlib
import http.client
import http.server
import json
import os
import re
import secrets
import ssl
import sys
import threading
from urllib.parse import parse_qs

LOCK = threading.Lock()


def log_request(args, handler):
    if not args.log:
        return
    auth = handler.headers.get("Authorization")
    scheme = auth.split(" ", 1)[0] if auth else "none"
    with LOCK, open(args.log, "a") as f:
        f.write("%s %s authorization=%s host=%s\n" % (handler.command, handler.path, scheme,
                                                      handler.headers.get("Host", "")))


def write_port(server, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, path)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):  # quiet: the log file says what is needed
        pass

    def reply(self, status, body=b"", headers=(), length=True):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code, message, headers=()):
        body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
        self.reply(status, body, [("Content-Type", "application/json")] + list(headers))


# ---- serve -------------------------------------------------------------------------------

class Layout:
    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "index.json")) as f:
            index = json.load(f)
        self.tags = {}
        for m in index.get("manifests", []):
            name = m.get("annotations", {}).get("org.opencontainers.image.ref.name")
            if name:
                self.tags[name] = m["digest"]
        self.layers = set()
        for digest in self.tags.values():
            m = json.loads(self.blob(digest))
            for layer in m.get("layers", []):
                self.layers.add(layer["digest"])

    def blob(self, digest):
        if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
            return None
        try:
            with open(os.path.join(self.path, "blobs", "sha256", digest[7:]), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None


def mutate_manifest(body, faults):
    m = json.loads(body)
    if "manifest-also-index" in faults:
        m["manifests"] = []
    if "layer-urls" in faults:
        m["layers"][0]["urls"] = ["http://evil.example/layer"]
    if "layer-digest-traversal" in faults:
        m["layers"][0]["digest"] = "sha256:../../x"
    return json.dumps(m, indent=2).encode()


def make_serve_handler(args, layout):
    state = {"failures": 0}

    class Serve(Handler):
        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            log_request(args, self)
            faults = set(args.fault or [])
            if args.basic:
                want = "Basic " + base64.b64encode(args.basic.encode()).decode()
                if self.headers.get("Authorization") != want:
                    return self.error(401, "UNAUTHORIZED", "authentication required",
                                      [("WWW-Authenticate", 'Basic realm="fake"')])
            if self.path == "/v2/" or self.path == "/v2":
                return self.reply(200, b"{}", [("Content-Type", "application/json")])
            m = re.fullmatch(r"/v2/([a-z0-9._/-]+)/(manifests|blobs)/([^/?]+)", self.path)
            if not m:
                return self.error(404, "NAME_UNKNOWN", "no such path")
            with LOCK:
                if state["failures"] < args.fail_first:
                    state["failures"] += 1
                    fail = True
                else:
                    fail = False
            if fail:
                headers = [("Retry-After", str(args.retry_after))] if args.retry_after is not None else []
                return self.error(503, "UNAVAILABLE", "try again", headers)
            kind, ref = m.group(2), m.group(3)
            if kind == "manifests":
                return self.manifest(ref, faults)
            if args.redirect:
                base = args.redirect
                if base == "self":
                    base = "%s://127.0.0.1:%d" % ("https" if args.tls else "http", self.server.server_address[1])
                return self.reply(307, b"", [("Location", base + self.path + args.redirect_query)])
            body = layout.blob(ref)
            if body is None:
                return self.error(404, "BLOB_UNKNOWN", "blob unknown")
            length = True
            if ref in layout.layers:
                if "long-layer" in faults or "long-layer-chunked" in faults:
                    body = body + b"\0" * (1024 * 1024)
                    length = "long-layer" in faults
                if "wrong-layer" in faults:
                    body = body[:-1] + bytes([body[-1] ^ 1])
            self.reply(200, body, [("Content-Type", "application/octet-stream"),
                                   ("Docker-Content-Digest", ref)], length)

        def manifest(self, ref, faults):
            digest = layout.tags.get(ref, ref)
            body = layout.blob(digest)
            if body is None:
                return self.error(404, "MANIFEST_UNKNOWN", "manifest unknown")
            media_type = json.loads(body).get("mediaType", "application/vnd.oci.image.manifest.v1+json")
            served_digest = digest
            if faults & {"manifest-also-index", "layer-urls", "layer-digest-traversal"}:
                body = mutate_manifest(body, faults)
                served_digest = "sha256:" + hashlib.sha256(body).hexdigest()
            if "manifest-bytes" in faults or "manifest-bytes-nodcd" in faults:
                body = body + b" "
            length = True
            if "big-manifest" in faults or "big-manifest-chunked" in faults:
                body = body + b" " * (5 * 1024 * 1024)
                length = "big-manifest" in faults
            headers = [("Content-Type", media_type)]
            if "manifest-bytes-nodcd" not in faults:
                headers.append(("Docker-Content-Digest", served_digest))
            self.reply(200, body, headers, length)

    return Serve


# ---- front -------------------------------------------------------------------------------

def make_front_handler(args, port):
    tokens = {}  # token -> set of "repository:NAME:ACTION"
    realm = "http://127.0.0.1:%d/token" % port
    upstream_base = "http://" + args.upstream

    class Front(Handler):
        def do_token(self):
            want = "Basic " + base64.b64encode(args.user.encode()).decode()
            if self.headers.get("Authorization") != want:
                return self.error(401, "UNAUTHORIZED", "token service: bad or no credentials",
                                  [("WWW-Authenticate", 'Basic realm="kubemount-test-token"')])
            q = self.path.split("?", 1)[1] if "?" in self.path else ""
            params = parse_qs(q)
            if params.get("service") != ["kubemount-test"]:
                return self.error(400, "UNSUPPORTED", "unknown service")
            granted = set()
            for scope in params.get("scope", []):
                parts = scope.split(":")
                if len(parts) == 3 and parts[0] == "repository":
                    for action in parts[2].split(","):
                        granted.add("repository:%s:%s" % (parts[1], action))
            token = secrets.token_urlsafe(32)
            with LOCK:
                tokens[token] = granted
                with open(args.tokens, "a") as f:
                    f.write(token + "\n")
            body = json.dumps({"token": token, "access_token": token, "expires_in": 300}).encode()
            self.reply(200, body, [("Content-Type", "application/json")])

        def authorized(self, name, action):
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Bearer "):
                return False
            granted = tokens.get(auth[7:])
            if granted is None:
                return False
            return name is None or "repository:%s:%s" % (name, action) in granted

        def proxy(self):
            log_request(args, self)
            if self.path.startswith("/token"):
                return self.do_token()
            m = re.match(r"/v2/([a-z0-9._/-]+?)/(manifests|blobs|tags)/", self.path)
            name = m.group(1) if m else None
            action = "pull" if self.command in ("GET", "HEAD") else "push"
            if not self.authorized(name, action):
                challenge = 'Bearer realm="%s",service="kubemount-test"' % realm
                if name:
                    challenge += ',scope="repository:%s:%s"' % (name, action)
                return self.error(401, "UNAUTHORIZED", "authentication required",
                                  [("WWW-Authenticate", challenge)])
            length = int(self.headers.get("Content-Length", "0") or "0")
            data = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection(args.upstream, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("authorization", "host")}
            conn.request(self.command, self.path, body=data, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            out = []
            for k, v in resp.getheaders():
                if k.lower() in ("content-length", "transfer-encoding", "connection"):
                    continue
                if k.lower() == "location" and v.startswith(upstream_base):
                    v = "http://127.0.0.1:%d" % port + v[len(upstream_base):]
                out.append((k, v))
            conn.close()
            self.reply(resp.status, body, out)

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = proxy

    return Front


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--layout", required=True)
    s.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    s.add_argument("--basic")
    s.add_argument("--fault", action="append")
    s.add_argument("--redirect")
    s.add_argument("--client-ca")
    s.add_argument("--redirect-query", default="")
    s.add_argument("--fail-first", type=int, default=0)
    s.add_argument("--retry-after", type=int)
    f = sub.add_parser("front")
    f.add_argument("--upstream", required=True)
    f.add_argument("--user", required=True)
    f.add_argument("--tokens", required=True)
    for x in (s, f):
        x.add_argument("--port-file", required=True)
        x.add_argument("--log")
    args = p.parse_args()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if args.mode == "serve":
        server.RequestHandlerClass = make_serve_handler(args, Layout(args.layout))
        if args.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(args.tls[0], args.tls[1])
            if args.client_ca:
                ctx.verify_mode = ssl.CERT_REQUIRED
                ctx.load_verify_locations(args.client_ca)
            server.socket = ctx.wrap_socket(server.socket, server_side=True)
    else:
        server.RequestHandlerClass = make_front_handler(args, port)
    write_port(server, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
