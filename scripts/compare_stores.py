#!/usr/bin/env python3
# Differential check of the two stores through HTTP: starts history-server
# twice, on a SQLite file and on a PostgreSQL database, sends both the same
# seeded random mix of requests (posts with client_id and reply_to, edits,
# deletes, members, read markers, every page cursor, conversation and inbox
# events, inbox paging, bad input) and prints every answer that differs
# (status or body bytes, timestamps masked). Exit 1 when any differs.
#
#   scripts/compare_stores.py ./x.sqlite 'postgresql://postgres@/db?host=/tmp/x&port=5432' SEED
#
# The SQLite file and the PostgreSQL database must be new and empty.
# HISTORY_SERVER names the binary (default .build/debug/history-server).
import json, random, re, subprocess, sys, http.client, os

SERVER = os.environ.get("HISTORY_SERVER", ".build/debug/history-server")

def start(db, log):
    p = subprocess.Popen([SERVER, "--port", "0", "--database", db,
                          "--access-log", "off", "--log-level", "error", "--durability", "normal"],
                         stdout=subprocess.PIPE, stderr=open(log, "w"), text=True)
    line = p.stdout.readline()
    port = int(re.search(r":(\d+) database", line).group(1))
    return p, port

TS = re.compile(r'"(created_at|edited_at|deleted_at|joined_at)":"[^"]*"')
def norm(b):
    return TS.sub(r'"\1":"T"', b)

class Both:
    def __init__(self, ports):
        self.conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=30) for p in ports]
        self.diffs = 0; self.n = 0
    def req(self, method, path, body=None):
        outs = []
        for c in self.conns:
            data = body if body is None or isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
            c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data is not None else {})
            r = c.getresponse()
            outs.append((r.status, norm(r.read().decode("utf-8", "replace"))))
        self.n += 1
        if outs[0] != outs[1]:
            self.diffs += 1
            if self.diffs <= 40:
                print("DIFF", method, path, (body if not isinstance(body, bytes) else body[:200]))
                print("  sqlite:", outs[0][0], outs[0][1][:600])
                print("  pg    :", outs[1][0], outs[1][1][:600])
        return outs[0]

def run(ports, seed):
    rnd = random.Random(seed)
    b = Both(ports)
    users = ["ana", "Bob", "b-c", "d%C3%A9", "e", "_u", "a.b", "aB"]
    convs = ["c1", "C2", "c-3", "Zed", "a-b_c.d", "_x", "a.b", "aB"]
    for c in convs: b.req("POST", "/v1/conversations", {"id": c, "title": "t " + c})
    b.req("POST", "/v1/conversations", {"id": "c1"})
    bodies = ["hi", "é中😀", "x" * 16384, "a\tb\nc", "\"quoted\" \\ back", " ", "\u2028", "\u00ff" * 5]
    msgs = {c: [] for c in convs}
    for step in range(600):
        c = rnd.choice(convs); u = rnd.choice(users); op = rnd.random()
        if op < 0.35:
            body = {"sender": u, "body": rnd.choice(bodies) + str(step)}
            if rnd.random() < 0.3: body["client_id"] = "k" + str(rnd.randrange(20))
            if rnd.random() < 0.2 and msgs[c]: body["reply_to"] = rnd.choice(msgs[c] + [999999])
            elif rnd.random() < 0.1:
                other = [m for o in convs if o != c for m in msgs[o]]
                if other: body["reply_to"] = rnd.choice(other)
            s, t = b.req("POST", f"/v1/conversations/{c}/messages", body)
            if s in (200, 201): msgs[c].append(json.loads(t)["id"])
        elif op < 0.42 and msgs[c]:
            b.req("PATCH", f"/v1/conversations/{c}/messages/{rnd.choice(msgs[c]+[0, 99999])}", {"body": "edit" + str(step)})
        elif op < 0.47 and msgs[c]:
            b.req("DELETE", f"/v1/conversations/{c}/messages/{rnd.choice(msgs[c]+[99999])}")
        elif op < 0.55:
            b.req("PUT", f"/v1/conversations/{c}/members/{u}", {"role": rnd.choice(["member", "owner"])})
        elif op < 0.58:
            b.req("DELETE", f"/v1/conversations/{c}/members/{u}")
        elif op < 0.64:
            n = rnd.choice([0, 1, 5, 999999] + msgs[c][-3:])
            b.req("PUT", f"/v1/conversations/{c}/members/{u}/read", {"last_read_id": n})
        elif op < 0.75:
            ids = msgs[c] + [0, 1, 2, 999999]
            L = rnd.choice([1, 2, 3, 7, 50, 200])
            q = rnd.choice([f"limit={L}", f"limit={L}&before={rnd.choice(ids)}", f"limit={L}&after={rnd.choice(ids)}",
                            f"limit={L}&around={rnd.choice(ids)}", f"limit={L}&after={rnd.choice(ids)}&before={rnd.choice(ids)}",
                            f"limit={L}&after={rnd.choice(ids)}&window={rnd.choice([1,3,10])}"])
            b.req("GET", f"/v1/conversations/{c}/messages?{q}")
        elif op < 0.82:
            s, t = b.req("GET", f"/v1/conversations/{c}")
            v = json.loads(t).get("version", 0) if s == 200 else 0
            ids = msgs[c] + [0, 999999]
            q = f"since={rnd.randrange(0, v + 2)}&limit={rnd.choice([1, 2, 5, 100])}"
            if rnd.random() < 0.3: q += f"&min_id={rnd.choice(ids)}"
            if rnd.random() < 0.3: q += f"&max_id={rnd.choice(ids)}"
            b.req("GET", f"/v1/conversations/{c}/events?{q}")
        elif op < 0.9:
            L = rnd.choice([1, 2, 50])
            s, t = b.req("GET", f"/v1/users/{u}/conversations?limit={L}")
            while s == 200 and json.loads(t).get("next_cursor"):
                s, t = b.req("GET", f"/v1/users/{u}/conversations?limit={L}&cursor={json.loads(t)['next_cursor']}")
        elif op < 0.96:
            s, t = b.req("GET", f"/v1/users/{u}/events?since=0&limit={rnd.choice([1, 3, 100])}")
            a = json.loads(t).get("activity", 0) if s == 200 else 0
            b.req("GET", f"/v1/users/{u}/events?since={rnd.randrange(0, a + 2)}&limit={rnd.choice([1, 3, 100])}")
        else:
            b.req("GET", f"/v1/conversations/{c}/members?limit={rnd.choice([1, 2, 100])}")
    # Malformed / edge inputs.
    for m, p, body in [("POST", "/v1/conversations/nope/messages", {"sender": "a", "body": "b"}),
                       ("POST", "/v1/conversations/c1/messages", {"sender": "a", "body": "x" * 16385}),
                       ("GET", "/v1/conversations/nope/messages", None), ("GET", "/v1/conversations/nope/events?since=0", None),
                       ("GET", "/v1/conversations/c1/events?since=999999999", None),
                       ("GET", "/v1/users/nobody/conversations", None), ("GET", "/v1/users/nobody/events?since=0", None),
                       ("PUT", "/v1/conversations/nope/members/ana/read", {"last_read_id": 1}),
                       ("PUT", "/v1/conversations/c1/members/stranger/read", {"last_read_id": 1}),
                       ("DELETE", "/v1/conversations/nope/members/ana", None),
                       ("GET", "/v1/conversations/nope/members", None),
                       ("POST", "/v1/conversations", {"id": "c" * 200}),
                       ("GET", "/v1/conversations/c1/messages?limit=200&before=9223372036854775807", None),
                       ("GET", "/v1/conversations/c1/messages?limit=200&around=-5", None),
                       ("GET", "/v1/conversations/c1/messages?limit=200&after=-5", None),
                       ("GET", "/v1/conversations/c1/events?since=0&min_id=9223372036854775807", None),
                       ("GET", "/v1/users/ana/conversations?cursor=garbage", None),
                       ("GET", "/v1/users/ana/events?since=9223372036854775807", None),
                       ("PUT", "/v1/conversations/c1/members/ana/read", {"last_read_id": 9223372036854775807}),
                       ("PUT", "/v1/conversations/c1/members/ana/read", {"last_read_id": -1}),
                       ]:
        b.req(m, p, body)
    for c in convs:
        b.req("GET", f"/v1/conversations/{c}")
        b.req("GET", f"/v1/conversations/{c}/events?since=0&limit=1000")
        b.req("GET", f"/v1/conversations/{c}/messages?limit=200")
    for u in users:
        b.req("GET", f"/v1/users/{u}/conversations?limit=200")
        b.req("GET", f"/v1/users/{u}/events?since=0&limit=1000")
    print(f"seed {seed}: {b.n} requests, {b.diffs} differ")
    return b.diffs

if __name__ == "__main__":
    sqlite_db, pg_db, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a, pa = start(sqlite_db, os.devnull); b_, pb = start(pg_db, os.devnull)
    try:
        d = run([pa, pb], seed)
    finally:
        a.terminate(); b_.terminate(); a.wait(); b_.wait()
    sys.exit(1 if d else 0)
