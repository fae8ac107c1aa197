#!/usr/bin/env bash
# Runs docs/nginx-upstream.conf for real: a throwaway PostgreSQL cluster, two
# history-server instances on loopback sharing its database, nginx (Debian's
# nginx-light) in front; checks that requests pass through nginx to both
# instances and that a post through one is read back through the other.
#
#   scripts/check_nginx_upstream.sh
#
# Environment:
#   HISTORY_SERVER  the binary (default: built with `swift build --product history-server`)
#   PG_BIN          PostgreSQL's binaries (default: the newest /usr/lib/postgresql/*/bin)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v nginx >/dev/null || { echo "nginx is missing: apt-get install nginx-light" >&2; exit 2; }
pg_bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}"
if [ -z "${HISTORY_SERVER:-}" ]; then
    swift build --product history-server >/dev/null
    HISTORY_SERVER="$(swift build --show-bin-path)/history-server"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    as_pg "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# PostgreSQL refuses to run as root.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown nobody "$work"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pg_port=$(free_port); port_a=$(free_port); port_b=$(free_port); port_nginx=$(free_port)

as_pg "$pg_bin/initdb" -D "$work/pg" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >/dev/null
as_pg "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
    -o "-p $pg_port -k $work -c listen_addresses='' -c fsync=off" start >/dev/null
database="postgresql://postgres@/postgres?host=$work&port=$pg_port"

for port in "$port_a" "$port_b"; do
    "$HISTORY_SERVER" --port "$port" --database "$database" --max-connections-per-client 0 \
        >"$work/server-$port.log" 2>&1 &
    pids+=($!)
done
for port in "$port_a" "$port_b"; do
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done

# The documented file with this run's ports, inside a minimal nginx.conf.
sed -e "s/127.0.0.1:8081/127.0.0.1:$port_a/" -e "s/127.0.0.1:8082/127.0.0.1:$port_b/" \
    -e "s/listen 8080;/listen 127.0.0.1:$port_nginx;/" docs/nginx-upstream.conf >"$work/upstream.conf"
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events {}
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    include $work/upstream.conf;
}
CONF
nginx -t -q -p "$work/nginx" -c "$work/nginx.conf"
nginx -p "$work/nginx" -c "$work/nginx.conf"
proxy="http://127.0.0.1:$port_nginx"
for _ in $(seq 100); do curl -sf "$proxy/healthz" >/dev/null && break; sleep 0.1; done

fail() { echo "check_nginx_upstream: FAILED: $*" >&2; exit 1; }
json=(-H 'Content-Type: application/json')
status=$(curl -s -o /dev/null -w '%{http_code}' "${json[@]}" -d '{"id":"through-nginx"}' "$proxy/v1/conversations")
[ "$status" = 201 ] || fail "create answered $status"
for n in $(seq 1 20); do
    status=$(curl -s -o /dev/null -w '%{http_code}' "${json[@]}" -d "{\"sender\":\"ana\",\"body\":\"$n\"}" \
        "$proxy/v1/conversations/through-nginx/messages")
    [ "$status" = 201 ] || fail "post $n answered $status"
done
# Each instance reads what went through either.
for port in "$port_a" "$port_b"; do
    count=$(curl -s "http://127.0.0.1:$port/v1/conversations/through-nginx" | python3 -c 'import json,sys; print(json.load(sys.stdin)["message_count"])')
    [ "$count" = 20 ] || fail "instance on $port counts $count messages"
done
# Both instances served requests that came through nginx (access log lines).
for port in "$port_a" "$port_b"; do
    served=$(grep -c 'POST /v1/conversations/through-nginx/messages' "$work/server-$port.log" || true)
    [ "$served" -ge 1 ] || fail "instance on $port served no post through nginx"
    echo "instance on port $port served $served of the 20 posts"
done
echo "check_nginx_upstream: OK"
