#!/usr/bin/env bash
# The measurements of performance.md's "PostgreSQL and several instances":
# the same dataset seeded into a SQLite file and a throwaway PostgreSQL
# cluster (fsync on, synchronous_commit on, as `nobody` when root, loopback
# only), then `history-load bench` against a SQLite server, a PostgreSQL
# server, and two PostgreSQL instances on the one database (cross-instance
# delivery, and deep pages through both at once against one alone), with
# each server's CPU per page (utime + stime from /proc, PostgreSQL's
# processes included, divided by the pages served).
#
#   swift build -c release --product history-server && swift build -c release --product history-load
#   scripts/bench_several_instances.sh [OUT_DIR]     # about 7 minutes
#
# Environment: CONVERSATIONS (1000), MESSAGES (2500000: load-0000 holds 1M),
# ROUNDS (5, bench's --page-rounds), GZIP (1; 0: identity pages), PGBIN, READERS (each PostgreSQL server's
# --read-connections; its default when unset), SETTLE (15: seconds of appends
# into PostgreSQL's seed before any row, below), BIN (this checkout's
# .build/release: another build's, to compare); ALTERNATE=N: only the deep
# pages of the three set-ups, alternated in N rounds, with CPU per page. Everything it starts is stopped and deleted on exit.
set -euo pipefail

source "$(dirname "$0")/lib/bench_common.sh"
BIN="${BIN:-$ROOT/.build/release}"
bench_begin history-bench "${1:-$(mktemp -d /tmp/history-bench-results.XXXXXX)}"
CONVERSATIONS="${CONVERSATIONS:-1000}"
MESSAGES="${MESSAGES:-2500000}"
ROUNDS="${ROUNDS:-5}"
bench_require "swift build -c release --product history-server && swift build -c release --product history-load" \
    "$BIN/history-server" "$BIN/history-load" "$PGBIN/initdb"
read -r PGPORT PORT_SQLITE PORT_A PORT_B <<<"$(free_ports 4)"

# PostgreSQL: durable settings (fsync and synchronous_commit on: the defaults).
pg_cluster_start "$PGPORT" "-c max_connections=100 -c shared_buffers=512MB -c fsync=on -c synchronous_commit=on \
 -c max_wal_size=4GB -c wal_compression=on -c log_checkpoints=on -c log_autovacuum_min_duration=0"
"$PGBIN/psql" -X -At -d "$DB" -c "SELECT version(); SHOW fsync; SHOW synchronous_commit; SHOW shared_buffers" >"$OUT/postgres-settings.txt"

SEED=(--conversations "$CONVERSATIONS" --messages "$MESSAGES" --quiet)
log "seed SQLite"
"$BIN/history-load" seed --direct "$WORK/history.sqlite" "${SEED[@]}" | tee "$OUT/seed-sqlite.txt"
log "seed PostgreSQL (COPY)"
"$BIN/history-load" seed --direct "$DB" "${SEED[@]}" | tee "$OUT/seed-postgres.txt"
"$PGBIN/psql" -X -q -d "$DB" -c "VACUUM ANALYZE"

SERVER_FLAGS=(--host 127.0.0.1 --max-connections 12000 --max-connections-per-client 0 --max-parked-polls-per-client 100000)
# READERS is PostgreSQL's sessions: the SQLite server keeps its default
# (one reader per core), as 16 SQLite readers on 2 cores served a third
# fewer deep pages (docs/performance.md, "How many SQLite readers").
PG_FLAGS=()
[ -n "${READERS:-}" ] && PG_FLAGS=(--read-connections "$READERS")
start_server() { # name port database
    local flags=("${SERVER_FLAGS[@]}")
    [[ "$3" == postgresql://* ]] && flags+=("${PG_FLAGS[@]}")
    "$BIN/history-server" "${flags[@]}" --port "$2" --database "$3" >"$WORK/$1.out" 2>"$WORK/$1.err" &
    PIDS+=($!)
    wait_healthy "$2" || { cat "$WORK/$1.err" >&2; exit 1; }
}
# Keeps PostgreSQL's log (checkpoints, autovacuum) beside the results; the
# work folder is deleted on exit.
finish() {
    cp "$WORK/pg/postgres.log" "$OUT/postgres.log"
    log "done: $OUT"
}
stop_server() { # pid
    kill "$1"; wait "$1" 2>/dev/null || true
}

# PostgreSQL's first appends after the seed go into the free space VACUUM
# found in the seed's pages, each into an old page of its own (read,
# dirtied, written whole to the WAL after the checkpoint): about half the
# rate until some 40,000 appends have filled it (docs/performance.md,
# "PostgreSQL's appends after a bulk load"). A production table meets that
# once, after an import; the rows measure what follows. SETTLE seconds of
# appends through a server, then VACUUM again (the conversations' rows).
log "PostgreSQL: ${SETTLE:-15} s of appends into the seed's free space"
start_server settle "$PORT_A" "$DB"
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario post --clients 64 --live-conversations 64 \
    --duration "${SETTLE:-15}s" --quiet >"$OUT/settle-postgres.txt"
stop_server "${PIDS[-1]}"
# The seed's, the settling's and VACUUM's dirty pages written out before
# anything is measured, not by a checkpoint or the kernel's writeback
# under the rows.
"$PGBIN/psql" -X -q -d "$DB" -c "VACUUM ANALYZE" -c "CHECKPOINT"
sync
# GZIP=0: every page identity (no Accept-Encoding), as builds before gzip
# were measured; by default history-load asks for gzip like a phone would.
ENCODING=()
[ "${GZIP:-1}" = 0 ] && ENCODING=(--no-gzip)
BENCH=(--no-inbox --page-rounds "$ROUNDS" --quiet "${ENCODING[@]}")

# CPU per page: `run --scenario deep` for 20 s, the server's CPU seconds
# (and PostgreSQL's) over that run, divided by the requests answered.
cpu_per_page() { # name url server-pid [postgres]
    local before_server before_pg after_server after_pg
    before_server=$(cpu_seconds "$3"); before_pg=0
    [ -n "${4:-}" ] && before_pg=$(cpu_seconds "$(postmaster)" postgres)
    "$BIN/history-load" run --url "$2" --scenario deep --clients 32 --duration 20s --quiet "${ENCODING[@]}" --json "$OUT/cpu-$1.json" >"$OUT/cpu-$1.txt"
    after_server=$(cpu_seconds "$3"); after_pg=0
    [ -n "${4:-}" ] && after_pg=$(cpu_seconds "$(postmaster)" postgres)
    python3 - "$1" "$OUT/cpu-$1.json" "$before_server" "$after_server" "$before_pg" "$after_pg" <<'PY' | tee -a "$OUT/cpu-per-page.txt"
import json, sys
name, path, bs, as_, bp, ap = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
report = json.load(open(path))
requests = report["requests"]
server, pg = as_ - bs, ap - bp
print(f"{name}: {requests} pages in {report['duration_seconds']:.1f} s ({report['requests_per_second']:.0f}/s); "
      f"server {server:.1f} CPU s = {server / requests * 1e6:.0f} us/page; PostgreSQL {pg:.1f} CPU s = {pg / requests * 1e6:.0f} us/page; "
      f"total {(server + pg) / requests * 1e6:.0f} us/page")
PY
}

if [ -n "${ALTERNATE:-}" ]; then
    # Only the page comparison, alternated in rounds (the machine's speed
    # drifts; each round sees every set-up at about the same moment):
    # deep pages for 20 s on SQLite, on one PostgreSQL instance, and on two
    # at once, each with its CPU per page.
    start_server sqlite "$PORT_SQLITE" "$WORK/history.sqlite"; SQLITE_PID=${PIDS[-1]}
    start_server a "$PORT_A" "$DB"; A_PID=${PIDS[-1]}
    start_server b "$PORT_B" "$DB"; B_PID=${PIDS[-1]}
    for round in $(seq 1 "$ALTERNATE"); do
        log "round $round: SQLite, one PostgreSQL instance, two at once"
        cpu_per_page "sqlite-$round" "http://127.0.0.1:$PORT_SQLITE" "$SQLITE_PID"
        cpu_per_page "postgres-$round" "http://127.0.0.1:$PORT_A" "$A_PID" postgres
        before_a=$(cpu_seconds "$A_PID"); before_b=$(cpu_seconds "$B_PID"); before_pg=$(cpu_seconds "$(postmaster)" postgres)
        "$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario deep --clients 16 --duration 20s --quiet "${ENCODING[@]}" \
            --json "$OUT/two-a-$round.json" >/dev/null &
        first=$!
        "$BIN/history-load" run --url "http://127.0.0.1:$PORT_B" --scenario deep --clients 16 --duration 20s --quiet "${ENCODING[@]}" \
            --json "$OUT/two-b-$round.json" >/dev/null
        wait "$first"
        after_a=$(cpu_seconds "$A_PID"); after_b=$(cpu_seconds "$B_PID"); after_pg=$(cpu_seconds "$(postmaster)" postgres)
        python3 - "$OUT" "$round" "$before_a" "$after_a" "$before_b" "$after_b" "$before_pg" "$after_pg" <<'PY' | tee -a "$OUT/cpu-per-page.txt"
import json, sys
out, n = sys.argv[1], sys.argv[2]
ba, aa, bb, ab, bp, ap = map(float, sys.argv[3:])
a, b = (json.load(open(f"{out}/two-{x}-{n}.json")) for x in "ab")
pages = a["requests"] + b["requests"]
rate = a["requests_per_second"] + b["requests_per_second"]
server, pg = (aa - ba) + (ab - bb), ap - bp
print(f"two-{n}: {pages} pages ({rate:.0f}/s: {a['requests_per_second']:.0f} + {b['requests_per_second']:.0f}); "
      f"servers {server:.1f} CPU s = {server / pages * 1e6:.0f} us/page; PostgreSQL {pg:.1f} CPU s = {pg / pages * 1e6:.0f} us/page; "
      f"total {(server + pg) / pages * 1e6:.0f} us/page")
PY
    done
    finish
    exit 0
fi

log "SQLite server: bench"
start_server sqlite "$PORT_SQLITE" "$WORK/history.sqlite"; SQLITE_PID=${PIDS[-1]}
"$BIN/history-load" bench --url "http://127.0.0.1:$PORT_SQLITE" "${BENCH[@]}" --server-pid "$SQLITE_PID" >"$OUT/bench-sqlite.md"
cpu_per_page sqlite "http://127.0.0.1:$PORT_SQLITE" "$SQLITE_PID"
stop_server "$SQLITE_PID"

log "PostgreSQL, one instance: bench"
start_server a "$PORT_A" "$DB"; A_PID=${PIDS[-1]}
"$BIN/history-load" bench --url "http://127.0.0.1:$PORT_A" "${BENCH[@]}" --server-pid "$A_PID" >"$OUT/bench-postgres.md"
cpu_per_page postgres "http://127.0.0.1:$PORT_A" "$A_PID" postgres

log "PostgreSQL, two instances: cross-instance delivery (parked on A, posted through B)"
start_server b "$PORT_B" "$DB"; B_PID=${PIDS[-1]}
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --writer-url "http://127.0.0.1:$PORT_B" --scenario tail \
    --clients 10000 --live-conversations 1000 --writers 8 --rate 200 --duration 8s --quiet >"$OUT/delivery-across.txt"

log "deep pages: one instance alone, then both at once (16 + 16 connections)"
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario deep --clients 32 --duration 20s --quiet "${ENCODING[@]}" \
    --json "$OUT/deep-one.json" >"$OUT/deep-one.txt"
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario deep --clients 16 --duration 20s --quiet "${ENCODING[@]}" \
    --json "$OUT/deep-two-a.json" >"$OUT/deep-two-a.txt" &
first=$!
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_B" --scenario deep --clients 16 --duration 20s --quiet "${ENCODING[@]}" \
    --json "$OUT/deep-two-b.json" >"$OUT/deep-two-b.txt"
wait "$first"
log "appends: one instance alone, then both at once (32 + 32 posters)"
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario post --clients 64 --live-conversations 64 --duration 10s --quiet \
    --json "$OUT/post-one.json" >"$OUT/post-one.txt"
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_A" --scenario post --clients 32 --live-conversations 64 --duration 10s --quiet \
    --json "$OUT/post-two-a.json" >"$OUT/post-two-a.txt" &
first=$!
"$BIN/history-load" run --url "http://127.0.0.1:$PORT_B" --scenario post --clients 32 --live-conversations 64 --duration 10s --quiet \
    --json "$OUT/post-two-b.json" >"$OUT/post-two-b.txt"
wait "$first"
python3 - "$OUT" <<'PY' | tee "$OUT/one-vs-two.txt"
import json, sys
out = sys.argv[1]
rate = lambda name: json.load(open(f"{out}/{name}.json"))["requests_per_second"]
for kind in ("deep", "post"):
    one, two = rate(f"{kind}-one"), rate(f"{kind}-two-a") + rate(f"{kind}-two-b")
    print(f"{kind}: one instance {one:.0f}/s, two instances {two:.0f}/s in total ({(two / one - 1) * 100:+.0f}%)")
PY
finish
