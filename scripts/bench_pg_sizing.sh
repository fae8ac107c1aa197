#!/usr/bin/env bash
# What PostgreSQL's own settings do to this server's figures, measured
# (docs/several-instances.md, "Sizing"; docs/performance.md, "PostgreSQL's
# settings, measured"): on one throwaway cluster of README's data set,
#
# 1. appends (64 posters on 64 conversations) with `synchronous_commit` on
#    and off, alternated in ROUNDS rounds;
# 2. deep pages (32 clients) with `shared_buffers` at 128MB (Debian's
#    default) and 512MB, alternated (the cluster restarts for each);
# 3. the WAL an append writes, steady and right after a checkpoint
#    (`pg_current_wal_lsn` around a run, `pg_waldump --stats=record`).
#
# Each run: a fresh server, 2 s of warm-up, then DURATION measured, with the
# server's and PostgreSQL's CPU from /proc per request.
#
#   swift build -c release --product history-server && swift build -c release --product history-load
#   scripts/bench_pg_sizing.sh [OUT_DIR]     # about 8 minutes
#
# Environment: CONVERSATIONS (1000), MESSAGES (2500000), ROUNDS (3),
# DURATION (8s), READERS (16), PGBIN. Loopback only; everything it starts
# is stopped and deleted on exit.
set -euo pipefail

source "$(dirname "$0")/lib/bench_common.sh"
BIN="$ROOT/.build/release"
bench_begin history-sizing "${1:-$(mktemp -d /tmp/history-sizing-results.XXXXXX)}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-8s}"
bench_require "swift build -c release --product history-server && swift build -c release --product history-load" \
    "$BIN/history-server" "$BIN/history-load" "$PGBIN/initdb" "$PGBIN/pg_waldump"
read -r PGPORT PORT <<<"$(free_ports 2)"

# The bench's durable settings; shared_buffers is given at each start.
SETTINGS="-c max_connections=100 -c fsync=on -c max_wal_size=4GB -c wal_compression=on -c log_checkpoints=on"
pg_cluster_start "$PGPORT" "$SETTINGS -c shared_buffers=512MB"
pg_restart() { # shared_buffers
    "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null
    "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/postgres.log" -w -t 60 \
        -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 $SETTINGS -c shared_buffers=$1" start >/dev/null
}
psql_admin() { "$PGBIN/psql" -X -q -At -d "$DB" "$@"; }

log "seed PostgreSQL (COPY)"
"$BIN/history-load" seed --direct "$DB" --conversations "${CONVERSATIONS:-1000}" --messages "${MESSAGES:-2500000}" --quiet \
    | tee "$OUT/seed.txt"
psql_admin -c "VACUUM ANALYZE" -c "CHECKPOINT"
sync

server_start() {
    "$BIN/history-server" --host 127.0.0.1 --port "$PORT" --database "$DB" --read-connections "${READERS:-16}" \
        --access-log off --max-connections-per-client 0 >"$WORK/server.out" 2>"$WORK/server.err" &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    wait_healthy "$PORT" || { cat "$WORK/server.err" >&2; exit 1; }
}
server_stop() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }

# One measured run of SCENARIO ARGS...: prints a line, keeps the JSON.
measure() { # label json-name scenario-args...
    local label=$1 name=$2
    shift 2
    "$BIN/history-load" run --url "http://127.0.0.1:$PORT" "$@" --duration 2s --no-gzip --quiet >/dev/null
    local s0 p0 s1 p1
    s0=$(cpu_seconds "$SERVER_PID"); p0=$(cpu_seconds "$(postmaster)" postgres)
    "$BIN/history-load" run --url "http://127.0.0.1:$PORT" "$@" --duration "$DURATION" --no-gzip --quiet \
        --json "$OUT/$name.json" >"$OUT/$name.txt"
    s1=$(cpu_seconds "$SERVER_PID"); p1=$(cpu_seconds "$(postmaster)" postgres)
    python3 - "$label" "$OUT/$name.json" "$s0" "$s1" "$p0" "$p1" <<'PY' | tee -a "$OUT/results.txt"
import json, sys
label, path = sys.argv[1], sys.argv[2]
s0, s1, p0, p1 = map(float, sys.argv[3:])
report = json.load(open(path))
n, seconds = report["requests"], report["duration_seconds"]
first = report["kinds"][0]
print(f"{label}: {n / seconds:,.0f} requests/s, {first['kind']} p99 {first['p99_ms']:.2f} ms, "
      f"server {(s1 - s0) / n * 1e6:.1f} us + PostgreSQL {(p1 - p0) / n * 1e6:.1f} us per request")
PY
}
APPENDS=(--scenario post --clients 64 --live-conversations 64)
DEEP=(--scenario deep --clients 32)

log "appends: synchronous_commit on and off, alternated"
for round in $(seq 1 "$ROUNDS"); do
    for mode in on off; do
        psql_admin -c "ALTER SYSTEM SET synchronous_commit = $mode" -c "SELECT pg_reload_conf()" >/dev/null
        server_start
        measure "appends, synchronous_commit=$mode, round $round" "appends-$mode-$round" "${APPENDS[@]}"
        server_stop
    done
done
psql_admin -c "ALTER SYSTEM RESET synchronous_commit" -c "SELECT pg_reload_conf()" >/dev/null

log "deep pages: shared_buffers 128MB and 512MB, alternated"
for round in $(seq 1 "$ROUNDS"); do
    for buffers in 128MB 512MB; do
        pg_restart "$buffers"
        server_start
        measure "deep pages, shared_buffers=$buffers, round $round" "deep-$buffers-$round" "${DEEP[@]}"
        server_stop
    done
done

log "WAL per append: steady, then right after a checkpoint"
server_start
for state in steady after-checkpoint; do
    [ "$state" = after-checkpoint ] && psql_admin -c "CHECKPOINT"
    start=$(psql_admin -c "SELECT pg_current_wal_lsn()")
    "$BIN/history-load" run --url "http://127.0.0.1:$PORT" "${APPENDS[@]}" --duration "$DURATION" --no-gzip --quiet \
        --json "$OUT/wal-$state.json" >"$OUT/wal-$state.txt"
    end=$(psql_admin -c "SELECT pg_current_wal_lsn()")
    bytes=$(psql_admin -c "SELECT pg_wal_lsn_diff('$end', '$start')")
    "$PGBIN/pg_waldump" -p "$WORK/pg/data/pg_wal" -s "$start" -e "$end" --stats=record >"$OUT/waldump-$state.txt" 2>&1 || true
    python3 - "$state" "$OUT/wal-$state.json" "$bytes" "$OUT/waldump-$state.txt" <<'PY' | tee -a "$OUT/results.txt"
import json, re, sys
state, path, wal, dump = sys.argv[1], sys.argv[2], float(sys.argv[3]), open(sys.argv[4]).read()
report = json.load(open(path))
appends = sum(k["count"] for k in report["kinds"] if k["kind"] in ("post", "post retry"))
fpi = re.search(r"^Total\s+\d+\s+\d+\s+\[[\d.]+%\]\s+\d+\s+\[([\d.]+)%\]", dump, re.M)
leaf = re.search(r"^Btree/INSERT_LEAF\s+(\d+)", dump, re.M)
lock = re.search(r"^Heap/LOCK\s+(\d+)", dump, re.M)
per = lambda m: f"{int(m.group(1)) / appends:.2f}" if m else "?"
print(f"WAL {state}: {appends:,} appends, {wal / 1e6:.1f} MB, {wal / appends:,.0f} bytes per append "
      f"({fpi.group(1) if fpi else '?'}% full-page images); per append {per(leaf)} index leaf inserts, "
      f"{per(lock)} row locks")
PY
done
server_stop
psql_admin -c "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname IN ('conversations', 'messages', 'activity_counter') ORDER BY relname" \
    | tee "$OUT/hot-updates.txt"
cp "$WORK/pg/postgres.log" "$OUT/postgres.log"
log "done: $OUT"
