#!/usr/bin/env python3
"""Bytes against CPU of zlib's gzip levels on one real page: what chose the
server's level (Gzip.serverLevel; docs/performance.md, "gzip level").

Fetches the page identity (no Accept-Encoding) and deflates it in the gzip
wrapper (windowBits 31, memLevel 8, as Sources/CZlib does) with each level,
many times, through the same system zlib the server links. Prints, per
level, the bytes and the CPU microseconds per page (process time, so other
processes' load counts less than with wall time, but a busy machine still
slows the caches).

    scripts/gzip_levels.py URL [--levels 1,4,6,9] [--rounds 2000]
    scripts/gzip_levels.py 'http://127.0.0.1:8080/v1/conversations/load-0000/messages?limit=50'
"""
import argparse
import time
import urllib.request
import zlib

parser = argparse.ArgumentParser()
parser.add_argument("url")
parser.add_argument("--levels", default="1,4,6,9")
parser.add_argument("--rounds", type=int, default=2000)
parser.add_argument("--token", help="a bearer token (tokens mode)")
arguments = parser.parse_args()

request = urllib.request.Request(arguments.url)
if arguments.token:
    request.add_header("Authorization", "Bearer " + arguments.token)
with urllib.request.urlopen(request) as response:
    page = response.read()
    assert response.headers.get("Content-Encoding") is None, "asked identity, got a coding"

def deflate(level):
    stream = zlib.compressobj(level, zlib.DEFLATED, 31, 8, zlib.Z_DEFAULT_STRATEGY)
    return stream.compress(page) + stream.flush()

print(f"page: {len(page)} bytes of JSON, {arguments.rounds} rounds per level")
print("| level | bytes | of identity | CPU µs per page |")
print("|---:|---:|---:|---:|")
for level in (int(text) for text in arguments.levels.split(",")):
    compressed = deflate(level)
    assert zlib.decompress(compressed, 31) == page
    deflate(level)  # warm
    best = None
    for _ in range(3):  # the best of three batches: the least disturbed by others
        start = time.process_time()
        for _ in range(arguments.rounds):
            deflate(level)
        elapsed = (time.process_time() - start) / arguments.rounds
        best = elapsed if best is None else min(best, elapsed)
    print(f"| {level} | {len(compressed)} | {len(compressed) * 100 / len(page):.1f}% | {best * 1e6:.1f} |")
