#!/usr/bin/env bash
# Checks docs/nginx-upstream.conf for real: a throwaway PostgreSQL cluster,
# two history-server instances on it, nginx in front with that very file
# (ports and paths rewritten), then through them:
#   1. a conversation created through nginx;
#   2. a post through instance A's port read back through instance B's;
#   3. a long-poll parked through nginx, woken by a post through instance B;
#   4. nginx spread requests over both instances (its access log).
# Exits 0 only if all pass; everything it started is stopped and deleted on
# exit, also on failure or Ctrl-C. It installs nothing: it needs nginx
# (Debian: apt-get install -y nginx-light), PostgreSQL's server binaries
# (apt-get install -y postgresql), curl and python3, and a history-server
# binary (default: .build/release, else .build/debug; or HISTORY_SERVER=path).
#
#   swift build -c release --product history-server
#   scripts/check_nginx_upstream.sh
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONF="$ROOT/docs/nginx-upstream.conf"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

NGINX="$(command -v nginx || true)"
[ -z "$NGINX" ] && [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx
[ -n "$NGINX" ] || fail "nginx not found (Debian: apt-get install -y nginx-light)"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
[ -x "$PGBIN/initdb" ] || fail "PostgreSQL server binaries not found (Debian: apt-get install -y postgresql; or PGBIN=dir)"
command -v curl >/dev/null || fail "curl not found"
command -v python3 >/dev/null || fail "python3 not found"
SERVER="${HISTORY_SERVER:-}"
if [ -z "$SERVER" ]; then
    for candidate in "$ROOT/.build/release/history-server" "$ROOT/.build/debug/history-server"; do
        [ -x "$candidate" ] && { SERVER="$candidate"; break; }
    done
fi
[ -n "$SERVER" ] && [ -x "$SERVER" ] || fail "no history-server binary (swift build -c release --product history-server, or HISTORY_SERVER=path)"

# nginx must close idle upstream connections before the instances do (else
# a request sent as an instance closes one gets a 502): its keepalive_timeout
# below the server's idle timeout, HTTPLimits' default.
idle=$(sed -n 's/.*idleTimeout: Duration = \.seconds(\([0-9]*\)).*/\1/p' "$ROOT/Sources/HTTPCore/Parsing/HTTPLimits.swift")
keepalive=$(sed -n 's/^ *keepalive_timeout \([0-9]*\)s;.*/\1/p' "$CONF")
[ -n "$idle" ] && [ -n "$keepalive" ] || fail "cannot read the server's idle timeout (HTTPLimits.swift) or keepalive_timeout (in seconds) of $CONF"
[ "$keepalive" -lt "$idle" ] || fail "$CONF: keepalive_timeout ${keepalive}s is not below the server's idle timeout ${idle}s"
pass "nginx's upstream keepalive_timeout ${keepalive}s < the server's idle timeout ${idle}s"

WORK="$(mktemp -d /tmp/history-nginx-check.XXXXXX)"
PIDS=()
AS_SERVER_USER=()
cleanup() {
    set +e
    [ -f "$WORK/nginx/nginx.pid" ] && kill "$(cat "$WORK/nginx/nginx.pid")" 2>/dev/null
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    [ -f "$WORK/pg/data/postmaster.pid" ] && "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Ports the kernel says are free right now on 127.0.0.1.
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
PY
}
read -r PGPORT PORT_A PORT_B PORT_NGINX <<<"$(free_ports 4)"

# PostgreSQL refuses to run as root: as root, the cluster belongs to nobody.
mkdir -p "$WORK/pg"
if [ "$(id -u)" = 0 ]; then
    chown nobody "$WORK/pg"
    chmod 755 "$WORK"
    AS_SERVER_USER=(runuser -u nobody --)
fi
"${AS_SERVER_USER[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust --encoding=UTF8 --locale=C \
    --no-sync >"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log" >&2; fail "initdb"; }
"${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/postgres.log" -w -t 60 \
    -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=100" start >/dev/null \
    || { cat "$WORK/pg/postgres.log" >&2; fail "PostgreSQL did not start"; }
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "postgresql://postgres@/postgres?host=$WORK/pg&port=$PGPORT" \
    -c "CREATE DATABASE history" || fail "CREATE DATABASE"
DB="postgresql://postgres@/history?host=$WORK/pg&port=$PGPORT"
pass "PostgreSQL on port $PGPORT, socket in $WORK/pg"

# Two instances on the one database. Behind nginx every request comes from
# nginx's address: no per-address connection limit, and nginx (127.0.0.1)
# is the trusted proxy whose X-Forwarded-For names the client. Open mode
# refuses proxied requests unless told (--insecure-no-auth): this checks
# the config, not access.
start_instance() { # name port
    "$SERVER" --host 127.0.0.1 --port "$2" --database "$DB" --access-log on --max-connections-per-client 0 \
        --trusted-proxy 127.0.0.1 --insecure-no-auth \
        >"$WORK/$1.out" 2>"$WORK/$1.err" &
    PIDS+=($!)
}
start_instance a "$PORT_A"
start_instance b "$PORT_B"
wait_healthy() { # port name
    for _ in $(seq 1 100); do
        curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    cat "$WORK/$2.err" >&2
    fail "instance $2 on port $1 did not answer /healthz"
}
wait_healthy "$PORT_A" a
wait_healthy "$PORT_B" b
pass "instances on ports $PORT_A and $PORT_B"

# nginx with docs/nginx-upstream.conf, its ports rewritten, inside a main
# file whose paths are all in the work folder.
mkdir -p "$WORK/nginx"
sed -e "s/127\.0\.0\.1:8081/127.0.0.1:$PORT_A/" -e "s/127\.0\.0\.1:8082/127.0.0.1:$PORT_B/" \
    -e "s/listen 8080;/listen 127.0.0.1:$PORT_NGINX;/" "$CONF" >"$WORK/nginx/history.conf"
grep -q "127.0.0.1:$PORT_A" "$WORK/nginx/history.conf" && grep -q "127.0.0.1:$PORT_B" "$WORK/nginx/history.conf" \
    && grep -q "listen 127.0.0.1:$PORT_NGINX;" "$WORK/nginx/history.conf" \
    || fail "docs/nginx-upstream.conf no longer has the ports 8081, 8082 and 'listen 8080;' this script rewrites"
cat >"$WORK/nginx/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
    log_format upstream '\$request_method \$uri \$status upstream=\$upstream_addr';
    access_log $WORK/nginx/access.log upstream;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    include $WORK/nginx/history.conf;
}
NGINX
[ "$(id -u)" = 0 ] && echo "user nobody $(id -gn nobody);" | cat - "$WORK/nginx/nginx.conf" >"$WORK/nginx/nginx.tmp" \
    && mv "$WORK/nginx/nginx.tmp" "$WORK/nginx/nginx.conf"
"$NGINX" -t -q -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" 2>"$WORK/nginx/test.log" \
    || { cat "$WORK/nginx/test.log" >&2; fail "nginx -t refused the configuration"; }
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" || fail "nginx did not start"
for _ in $(seq 1 50); do
    curl -fsS "http://127.0.0.1:$PORT_NGINX/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
NGINX_URL="http://127.0.0.1:$PORT_NGINX"
pass "nginx on port $PORT_NGINX"

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

# 1. A conversation created through nginx.
status=$(curl -sS -o "$WORK/created.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"id":"through-nginx","title":"behind a proxy"}' "$NGINX_URL/v1/conversations")
[ "$status" = 201 ] || fail "creating a conversation through nginx answered $status: $(cat "$WORK/created.json")"
[ "$(json "['id']" <"$WORK/created.json")" = through-nginx ] || fail "the created conversation: $(cat "$WORK/created.json")"
pass "1. conversation created through nginx"

# 2. Posted through A, read through B.
posted=$(curl -fsS -X POST -H 'Content-Type: application/json' -d '{"sender":"ana","body":"hello from A"}' \
    "http://127.0.0.1:$PORT_A/v1/conversations/through-nginx/messages") || fail "posting through instance A"
id=$(json "['id']" <<<"$posted")
page=$(curl -fsS "http://127.0.0.1:$PORT_B/v1/conversations/through-nginx/messages") || fail "reading through instance B"
python3 -c "
import json, sys
page = json.loads(sys.argv[1])
assert [(m['id'], m['body']) for m in page['messages']] == [($id, 'hello from A')], page
" "$page" || fail "instance B's page lacks the post through A: $page"
pass "2. post through A (id $id) read through B"

# 3. A long-poll through nginx, woken by a post through B.
version=$(curl -fsS "$NGINX_URL/v1/conversations/through-nginx" | json "['version']")
start=$(date +%s.%N)
curl -sS -o "$WORK/poll.json" -w '%{http_code}' \
    "$NGINX_URL/v1/conversations/through-nginx/events?since=$version&wait=30" >"$WORK/poll.status" &
poll=$!
sleep 1
kill -0 "$poll" 2>/dev/null || fail "the long-poll answered before anything was posted: $(cat "$WORK/poll.json")"
curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '{"sender":"bo","body":"hello from B"}' \
    "http://127.0.0.1:$PORT_B/v1/conversations/through-nginx/messages" || fail "posting through instance B"
wait "$poll" || fail "the long-poll through nginx failed"
elapsed=$(python3 -c "import time; print(round(time.time() - $start, 2))")
[ "$(cat "$WORK/poll.status")" = 200 ] || fail "the long-poll answered $(cat "$WORK/poll.status"): $(cat "$WORK/poll.json")"
python3 -c "
import json, sys
events = json.load(open(sys.argv[1]))['events']
assert [(e['type'], e['message']['body']) for e in events] == [('created', 'hello from B')], events
assert float(sys.argv[2]) < 10, 'woken after %s s' % sys.argv[2]
" "$WORK/poll.json" "$elapsed" || fail "the long-poll's answer: $(cat "$WORK/poll.json") after ${elapsed}s"
pass "3. long-poll through nginx woken by a post through B (answered ${elapsed}s after it parked)"

# 4. nginx spread requests over both instances.
for _ in $(seq 1 10); do curl -fsS -o /dev/null "$NGINX_URL/v1/conversations/through-nginx/messages"; done
for port in "$PORT_A" "$PORT_B"; do
    count=$(grep -c "upstream=127.0.0.1:$port\$" "$WORK/nginx/access.log" || true)
    [ "$count" -gt 0 ] || fail "nginx sent no request to 127.0.0.1:$port: $(cat "$WORK/nginx/access.log")"
    echo "   nginx -> 127.0.0.1:$port: $count requests"
done
grep -q "GET" "$WORK/a.out" && grep -q "GET" "$WORK/b.out" || fail "an instance's access log is empty"
pass "4. both instances served requests through nginx"

# 5. gzip and ETag through nginx: a page of 1 KiB and more comes back
# Content-Encoding: gzip and inflates to the identity page; both instances
# give it the same ETag, and If-None-Match with it is a 304 through nginx.
for index in $(seq 1 30); do
    curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' \
        -d "{\"sender\":\"ana\",\"body\":\"message $index, long enough to make a page of more than a kibibyte\"}" \
        "$NGINX_URL/v1/conversations/through-nginx/messages" || fail "posting message $index through nginx"
done
curl -fsS -o "$WORK/identity.json" -D "$WORK/identity.head" "$NGINX_URL/v1/conversations/through-nginx/messages" \
    || fail "reading the page through nginx"
curl -fsS -o "$WORK/gzip.bin" -D "$WORK/gzip.head" -H 'Accept-Encoding: gzip' \
    "$NGINX_URL/v1/conversations/through-nginx/messages" || fail "reading the page through nginx with gzip"
grep -qi '^content-encoding: gzip' "$WORK/gzip.head" || fail "no Content-Encoding: gzip through nginx: $(cat "$WORK/gzip.head")"
grep -qi '^vary:.*accept-encoding' "$WORK/gzip.head" || fail "no Vary: Accept-Encoding through nginx: $(cat "$WORK/gzip.head")"
python3 -c "
import gzip, json, sys
identity = open(sys.argv[1], 'rb').read()
inflated = gzip.decompress(open(sys.argv[2], 'rb').read())
assert inflated == identity, 'the gzip page does not inflate to the identity page'
assert len(json.loads(identity)['messages']) == 32, identity[:200]
" "$WORK/identity.json" "$WORK/gzip.bin" || fail "the gzip page through nginx"
etag=$(grep -i '^etag:' "$WORK/gzip.head" | cut -d' ' -f2- | tr -d '\r')
[ -n "$etag" ] || fail "no ETag through nginx: $(cat "$WORK/gzip.head")"
for port in "$PORT_A" "$PORT_B"; do
    direct=$(curl -fsS -o /dev/null -D - -H 'Accept-Encoding: gzip' \
        "http://127.0.0.1:$port/v1/conversations/through-nginx/messages" | grep -i '^etag:' | cut -d' ' -f2- | tr -d '\r')
    [ "$direct" = "$etag" ] || fail "127.0.0.1:$port tags the page $direct, nginx answered $etag"
done
status=$(curl -sS -o "$WORK/304.body" -w '%{http_code}' -H 'Accept-Encoding: gzip' -H "If-None-Match: $etag" \
    "$NGINX_URL/v1/conversations/through-nginx/messages")
[ "$status" = 304 ] && [ ! -s "$WORK/304.body" ] || fail "If-None-Match through nginx answered $status"
pass "5. gzip through nginx inflates to the identity page ($(wc -c <"$WORK/gzip.bin") of $(wc -c <"$WORK/identity.json") bytes); one ETag on both instances, 304 through nginx"
echo "all checks passed"
