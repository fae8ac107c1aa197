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

source "$(dirname "$0")/lib/bench_common.sh"
read -r -a BUILDS <<<"${BUILDS:-$ROOT/.build/release}"
bench_begin history-appends-work "${1:-$(mktemp -d /tmp/history-appends.XXXXXX)}"
CONVERSATIONS="${CONVERSATIONS:-100}"
MESSAGES="${MESSAGES:-10000}"
ROUNDS="${ROUNDS:-3}"
SECONDS_EACH="${SECONDS_EACH:-10}"
LOAD="${BUILDS[0]}/history-load"
bench_require "swift build -c release --product history-server, then --product history-load" \
    "$LOAD" "$PGBIN/initdb" $(for b in "${BUILDS[@]}"; do echo "$b/history-server"; done)
read -r PGPORT PORT_A PORT_B <<<"$(free_ports 3)"

pg_cluster_start "$PGPORT" "-c max_connections=100 -c shared_buffers=512MB -c fsync=on -c synchronous_commit=on \
 -c max_wal_size=4GB -c wal_compression=on"
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
    wait_healthy "$3" || { cat "$WORK/$2.err" >&2; exit 1; }
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
