#!/usr/bin/env python3
# Cross-instance wake latency: a long-poll parked on instance A, a post through
# instance B; time from the post's send to the poll's answer. Prints p50/p99/max.
import http.client, json, threading, time, sys
a, b, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def req(c, m, p, body=None):
    c.request(m, p, json.dumps(body) if body else None, {'Content-Type': 'application/json'} if body else {})
    r = c.getresponse(); return r.status, json.loads(r.read() or b'{}')
ca = http.client.HTTPConnection('127.0.0.1', a, timeout=70); cb = http.client.HTTPConnection('127.0.0.1', b, timeout=70)
req(cb, 'POST', '/v1/conversations', {'id': 'wake'})
lat = []
for i in range(n):
    _, conv = req(ca, 'GET', '/v1/conversations/wake')
    out = {}
    def poll():
        out['r'] = req(ca, 'GET', f"/v1/conversations/wake/events?since={conv['version']}&wait=30"); out['t'] = time.perf_counter()
    t = threading.Thread(target=poll); t.start(); time.sleep(0.05)
    s = time.perf_counter(); st, _ = req(cb, 'POST', '/v1/conversations/wake/messages', {'sender': 'ana', 'body': str(i)})
    t.join(); lat.append((out['t'] - s) * 1000)
lat.sort()
print(f"n={n} p50={lat[n//2]:.2f} ms p99={lat[int(n*0.99)-1]:.2f} ms max={lat[-1]:.2f} ms")
