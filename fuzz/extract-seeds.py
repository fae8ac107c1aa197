#!/usr/bin/env python3
"""Rebuilds the seed corpora in fuzz/corpus/<target>/ from the string
literals of the test suites, so the fuzzers start from what the tests
already know is interesting (valid requests, each malformed variant, JSON
edge cases, query strings, token headers and claims).

Run from the repository root: python3 fuzz/extract-seeds.py
Existing seeds are kept; a seed's file name is the SHA-1 of its bytes, as
libFuzzer names the inputs it adds to a corpus.
"""
import hashlib
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"

# "..." or #"..."# single-line literals; interpolations are dropped with the literal.
LITERAL = re.compile(r'#"((?:[^"\n]|"(?!#))*)"#|"((?:[^"\\\n]|\\.)*)"')


def unescape(body, raw):
    if "\\(" in body or "\\#(" in body:
        return None  # interpolated: its value is not in the text
    if raw:
        return body.encode()
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = body[i + 1]
        if n == "u":
            end = body.index("}", i)
            out += chr(int(body[i + 3:end], 16)).encode("utf-8", "surrogatepass")
            i = end + 1
            continue
        out += {"r": b"\r", "n": b"\n", "t": b"\t", "0": b"\0", '"': b'"', "\\": b"\\", "'": b"'"}.get(n, n.encode())
        i += 2
    return bytes(out)


def literals(*globs):
    for pattern in globs:
        for path in sorted(ROOT.glob(pattern)):
            for match in LITERAL.finditer(path.read_text()):
                raw = match.group(1) is not None
                value = unescape(match.group(1) if raw else match.group(2), raw)
                if value:
                    yield value


def write(target, seeds):
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for seed in sorted(set(seeds)):
        (directory / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        count += 1
    print(f"{target}: {count} seeds")


http_tests = ("Tests/HTTPCoreTests/*.swift", "Tests/HistoryServerTests/*.swift")
requests = [s for s in literals(*http_tests) if re.match(rb"^[\r\n]*[A-Z]+ \S* HTTP/", s) or s.startswith(b"GET ")]
write("request-parser", requests)

bodies = []
for request in requests:
    head, _, body = request.partition(b"\r\n\r\n")
    if b"chunked" in head.lower() and body:
        bodies.append(body)
bodies += [s for s in literals(*http_tests) if re.match(rb"^[0-9a-fA-F]+(;[^\r\n]*)?\r\n", s)]
write("chunked-body-decoder", bodies)

json_tests = ("Tests/StrictJSONTests/*.swift", "Tests/HistoryAPITests/JSON*.swift", "Tests/HistoryAPITests/*APITests.swift",
              "Tests/HistoryClientTests/*.swift")
write("json-reader", [s for s in literals(*json_tests) if re.match(rb"^\s*[\[{\"0-9tfn-]", s)])

query_tests = ("Tests/HistoryAPITests/QueryParametersTests.swift", "Tests/HistoryAPITests/PageAPITests.swift",
               "Tests/HistoryAPITests/EventAPITests.swift", "Tests/HistoryAPITests/RouterTests.swift")
queries = []
for s in literals(*query_tests):
    if b"?" in s:
        queries.append(s.split(b"?", 1)[1])
    elif b"=" in s or re.fullmatch(rb"[0-9.]+", s):
        queries.append(s)
write("query-parameters", queries)

# Token seeds: a JSON header and JSON claims on two lines (the target signs
# them), the headers and claims the token tests use, with the fuzz target's
# key ids ("hs", "es"), audience, issuer and a clock of 1,750,000,000.
token_tests = ("Tests/HistoryAccessTests/Token*.swift",)
headers = {s.replace(b'"k1"', b'"hs"').replace(b'"e1"', b'"es"')
           for s in literals(*token_tests) if s.startswith(b'{"alg"')}
headers |= {b'{"alg":"HS256","typ":"JWT","kid":"hs"}', b'{"alg":"ES256","kid":"es"}', b'{"alg":"HS256","kid":"es"}'}
claims = [b'{"sub":"ana","exp":1750000300,"aud":"chat","iss":"https://issuer.test"}',
          b'{"sub":"svc","scope":"admin read","exp":1750000300,"iat":1749999990,"nbf":1749999990,'
          b'"aud":["other","chat"],"iss":"https://issuer.test"}',
          b'{"sub":"bo.b@x-y_z","exp":1749999000,"aud":"chat","iss":"https://issuer.test"}',
          b'{"sub":"ana","exp":1750000300}']
claims += [s for s in literals(*token_tests) if s.startswith(b'{"sub"')]
tokens = [h + b"\n" + c for h in sorted(headers) for c in claims[:4]] + [b'{"alg":"HS256","kid":"hs"}\n' + c for c in claims[4:]]
tokens += [s for s in literals(*token_tests) if re.fullmatch(rb"[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-.]*", s) or s.startswith(b"Bearer")]
write("token-verifier", tokens)
