#!/usr/bin/env python3
"""The peer for verifying a journal: HMAC-SHA256 of every line with the key,
nothing else (no JSON, no chain). bench/receipts/run times it next to
`glove audit verify`."""
import hashlib
import hmac
import sys

key = open(sys.argv[1], "rb").read()
n = 0
with open(sys.argv[2], "rb") as f:
    for line in f:
        hmac.new(key, b"glove receipt v1\n" + line.rstrip(b"\n"), hashlib.sha256).hexdigest()
        n += 1
if n == 0:
    sys.exit("no lines")
