#!/usr/bin/env bash
# Appends through one PostgreSQL instance against two at once, for one or
# more builds alternated in rounds on one throwaway cluster (the appends
# part of bench_several_instances.sh, with a small dataset: posts need no
# deep history). The cluster has the same durable settings (fsync and
# synchronous_commit on, as `nobody` when root, loopback only).
#
#   swift build -c release --product history-server   # one --product per call:
#   swift build -c release --product history-load     # with two, only the last is built
#   scripts/bench_appends_instances.sh [OUT_DIR]
#   BUILDS="/tmp/old /tmp/new" ROUNDS=3 scripts/bench_appends_instances.sh /tmp/appends
#
# Environment: BUILDS (folders holding history-server, named apart by
# their last component; default this checkout's .build/release;
# history-load is taken from the first),
# CONVERSATIONS (100), MESSAGES (10000), ROUNDS (3), SECONDS_EACH (10),
# PGBIN. Each round runs every build (the order reversed every other
# round): one instance with 64 posters, then two instances with 32 + 32
# posters at once, all on the same 64 live conversations, then two at once
# on separate conversations (10 each, seeded as apart-a-* and apart-b-*,
# one set through each), where only the activity counter's row is shared.
# Everything it starts is stopped and deleted on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
read -r -a BUILDS <<<"${BUILDS:-$ROOT/.build/release}"
OUT="${1:-$(mktemp -d /tmp/history-appends.XXXXXX)}"
mkdir -p "$OUT"
CONVERSATIONS="${CONVERSATIONS:-100}"
MESSAGES="${MESSAGES:-10000}"
ROUNDS="${ROUNDS:-3}"
SECONDS_EACH="${SECONDS_EACH:-10}"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
LOAD="${BUILDS[0]}/history-load"
for tool in "$LOAD" "$PGBIN/initdb" $(for b in "${BUILDS[@]}"; do echo "$b/history-server"; done); do
    [ -x "$tool" ] || { echo "missing $tool (swift build -c release --product history-server, then --product history-load)" >&2; exit 1; }
done
WORK="$(mktemp -d /tmp/history-appends-work.XXXXXX)"
PIDS=()
AS_SERVER_USER=()
cleanup() {
    set +e
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    [ -f "$WORK/pg/data/postmaster.pid" ] && "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/log.txt" >&2; }
read -r PGPORT PORT_A PORT_B <<<"$(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')"

mkdir -p "$WORK/pg"
if [ "$(id -u)" = 0 ]; then chown nobody "$WORK/pg"; chmod 755 "$WORK"; AS_SERVER_USER=(runuser -u nobody --); fi
"${AS_SERVER_USER[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
"${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/postgres.log" -w -t 60 -o "-p $PGPORT -k $WORK/pg \
 -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_buffers=512MB -c fsync=on -c synchronous_commit=on \
 -c max_wal_size=4GB -c wal_compression=on" start >/dev/null
"$PGBIN/psql" -X -q -d "postgresql://postgres@/postgres?host=$WORK/pg&port=$PGPORT" -c "CREATE DATABASE history"
DB="postgresql://postgres@/history?host=$WORK/pg&port=$PGPORT"
"$PGBIN/psql" -X -At -d "$DB" -c "SELECT version(); SHOW fsync; SHOW synchronous_commit" >"$OUT/postgres-settings.txt"
log "seed PostgreSQL ($CONVERSATIONS conversations, $MESSAGES messages)"
"$LOAD" seed --direct "$DB" --conversations "$CONVERSATIONS" --messages "$MESSAGES" --quiet >"$OUT/seed.txt"
for side in a b; do
    "$LOAD" seed --direct "$DB" --prefix "apart-$side-" --conversations 10 --messages 1000 --quiet >>"$OUT/seed.txt"
done
"$PGBIN/psql" -X -q -d "$DB" -c "VACUUM ANALYZE"

SERVER_FLAGS=(--host 127.0.0.1 --max-connections 12000 --max-connections-per-client 0 --max-parked-polls-per-client 100000)
start_server() { # build name port
    "$1/history-server" "${SERVER_FLAGS[@]}" --port "$3" --database "$DB" >"$WORK/$2.out" 2>"$WORK/$2.err" &
    PIDS+=($!)
    for _ in $(seq 1 200); do curl -fsS "http://127.0.0.1:$3/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done
    cat "$WORK/$2.err" >&2; exit 1
}
post() { # port clients json [prefix live-conversations]
    "$LOAD" run --url "http://127.0.0.1:$1" --scenario post --clients "$2" --prefix "${4:-load-}" --live-conversations "${5:-64}" \
        --duration "${SECONDS_EACH}s" --quiet --json "$3" >"${3%.json}.txt"
}

for round in $(seq 1 "$ROUNDS"); do
    order=("${BUILDS[@]}")
    if [ $((round % 2)) = 0 ]; then order=(); for ((i=${#BUILDS[@]}-1; i>=0; i--)); do order+=("${BUILDS[$i]}"); done; fi
    for build in "${order[@]}"; do
        name="$(basename "$build")"
        log "round $round, $build: one instance (64 posters), then two at once (32 + 32)"
        start_server "$build" a "$PORT_A"; A_PID=${PIDS[-1]}
        post "$PORT_A" 64 "$OUT/$round-$name-one.json"
        start_server "$build" b "$PORT_B"; B_PID=${PIDS[-1]}
        post "$PORT_A" 32 "$OUT/$round-$name-two-a.json" &
        first=$!
        post "$PORT_B" 32 "$OUT/$round-$name-two-b.json"
        wait "$first"
        # Separate conversations (apart-a-* through A, apart-b-* through B):
        # only the activity counter's row is shared by the two writers.
        post "$PORT_A" 32 "$OUT/$round-$name-apart-a.json" apart-a- 10 &
        first=$!
        post "$PORT_B" 32 "$OUT/$round-$name-apart-b.json" apart-b- 10
        wait "$first"
        kill "$A_PID" "$B_PID"; wait "$A_PID" 2>/dev/null || true; wait "$B_PID" 2>/dev/null || true
        python3 - "$OUT" "$round-$name" "$build" <<'PY' | tee -a "$OUT/appends.txt"
import json, sys
out, key, build = sys.argv[1:]
load = lambda part: json.load(open(f"{out}/{key}-{part}.json"))
one, a, b, c, d = (load(x) for x in ("one", "two-a", "two-b", "apart-a", "apart-b"))
rate = lambda r: r["requests_per_second"]
two, apart = rate(a) + rate(b), rate(c) + rate(d)
bad = sum(r["error_count"] + sum(i["violations"] for i in r["invariants"]) for r in (one, a, b, c, d))
print(f"{key} ({build}): one instance {rate(one):.0f}/s (p99 {one['p99_ms']:.1f} ms); "
      f"two at once {two:.0f}/s ({rate(a):.0f} + {rate(b):.0f}, p99 {a['p99_ms']:.1f} and {b['p99_ms']:.1f} ms; "
      f"{(two / rate(one) - 1) * 100:+.0f}%); two apart {apart:.0f}/s ({rate(c):.0f} + {rate(d):.0f}, "
      f"p99 {c['p99_ms']:.1f} and {d['p99_ms']:.1f} ms); errors and violations {bad}")
PY
    done
done
log "done: $OUT"
