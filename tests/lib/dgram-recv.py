#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dgram-recv.py SOCKET OUT: binds an AF_UNIX datagram socket at SOCKET ("@NAME":
abstract) and appends each datagram to OUT as one JSON object a line: the
journal's native fields (KEY=VALUE lines, or KEY, a 64-bit little-endian
length, the value and a newline), or sd_notify's KEY=VALUE lines."""
import json
import os
import socket
import struct
import sys


def parse(data):
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack_from("<Q", data, nl + 1)
            v = data[nl + 9:nl + 9 + n]
            if data[nl + 9 + n:nl + 10 + n] != b"\n":
                raise ValueError("binary field without its newline")
            i = nl + 10 + n
        fields.setdefault(k.decode(), []).append(v.decode(errors="replace"))
    return fields


def main():
    path, out = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + path[1:] if path.startswith("@") else path)
    with open(out + ".ready", "w"):
        pass
    with open(out, "a", buffering=1) as f:
        while True:
            data = s.recv(1 << 20)
            if not data.endswith(b"\n"):
                data += b"\n"  # sd_notify's last line has none
            try:
                rec = parse(data)
            except (ValueError, struct.error) as e:
                rec = {"_BAD": [str(e)], "_RAW": [data.decode(errors="replace")]}
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    os.umask(0o022)
    main()
