#!/usr/bin/env bash
# Every statement the server sends PostgreSQL for a page, an append and a
# long-poll re-read, as the server really sends them (no copies of its
# SQL): a throwaway PostgreSQL cluster with pg_stat_statements and
# auto_explain preloaded, a dataset seeded with `history-load seed`, a
# history-server on it, then history-load's deep, post and tail scenarios.
#
# Prints (and keeps in OUT_DIR):
# - statements.txt: pg_stat_statements over a measured run of each
#   scenario (calls, mean server time, rows and shared buffers per call),
#   the counters reset before each scenario;
# - plans.txt: one `EXPLAIN (ANALYZE, BUFFERS)` per distinct statement,
#   logged by auto_explain (log_analyze, log_buffers) during a short run of
#   each scenario after the measured ones.
#
#   swift build --product history-server && swift build --product history-load
#   scripts/pg_statements.sh [OUT_DIR]          # about 2 minutes
#
# Environment: BIN (.build/debug; the statements do not depend on the
# build), CONVERSATIONS (200), MESSAGES (400000), SECONDS_EACH (8), PGBIN,
# READERS (--read-connections). Loopback only; everything it starts is
# stopped and deleted on exit.
set -euo pipefail

source "$(dirname "$0")/lib/bench_common.sh"
BIN="${BIN:-$ROOT/.build/debug}"
bench_begin history-pg-statements "${1:-$(mktemp -d /tmp/history-pg-statements.XXXXXX)}"
CONVERSATIONS="${CONVERSATIONS:-200}"
MESSAGES="${MESSAGES:-400000}"
SECONDS_EACH="${SECONDS_EACH:-8}"
bench_require "swift build --product history-server && swift build --product history-load" \
    "$BIN/history-server" "$BIN/history-load" "$PGBIN/initdb"
read -r PGPORT PORT <<<"$(free_ports 2)"

# The bench's durable settings, plus the two extensions. auto_explain is
# off (its default log_min_duration, -1) until the plans are wanted: with
# log_analyze on it times every node of every statement. Not set with -c:
# a command-line setting would win over ALTER SYSTEM.
pg_cluster_start "$PGPORT" "-c max_connections=100 -c shared_buffers=256MB -c fsync=on -c synchronous_commit=on \
 -c shared_preload_libraries=pg_stat_statements,auto_explain -c pg_stat_statements.track=top \
 -c track_io_timing=on -c auto_explain.log_analyze=on \
 -c auto_explain.log_buffers=on -c auto_explain.log_timing=on -c auto_explain.log_verbose=off"
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -d "$DB" -c "CREATE EXTENSION pg_stat_statements"

log "seed: $CONVERSATIONS conversations, $MESSAGES messages"
"$BIN/history-load" seed --direct "$DB" --conversations "$CONVERSATIONS" --messages "$MESSAGES" --quiet >"$OUT/seed.txt"
psql -d "$DB" -c "VACUUM ANALYZE"

FLAGS=(--host 127.0.0.1 --port "$PORT" --database "$DB" --max-connections 4000 --max-connections-per-client 0
       --max-parked-polls-per-client 100000)
[ -n "${READERS:-}" ] && FLAGS+=(--read-connections "$READERS")
"$BIN/history-server" "${FLAGS[@]}" >"$WORK/server.out" 2>"$WORK/server.err" &
PIDS+=($!)
wait_healthy "$PORT"
URL="http://127.0.0.1:$PORT"

# scenario name, history-load run flags
SCENARIOS=(
    "deep|--scenario deep --clients 16"
    "post|--scenario post --clients 32 --live-conversations 32"
    "tail|--scenario tail --clients 200 --live-conversations 20 --writers 4 --rate 100"
)
run() { # flags duration
    # shellcheck disable=SC2086
    "$BIN/history-load" run --url "$URL" $1 --duration "$2" --quiet >/dev/null
}
log "warm-up"
for entry in "${SCENARIOS[@]}"; do run "${entry#*|}" 3s; done

: >"$OUT/statements.txt"
for entry in "${SCENARIOS[@]}"; do
    name="${entry%%|*}"
    log "measured: $name ($SECONDS_EACH s)"
    psql -d "$DB" -c "SELECT pg_stat_statements_reset()" >/dev/null
    run "${entry#*|}" "${SECONDS_EACH}s"
    {
        echo "### $name: pg_stat_statements over ${SECONDS_EACH} s (statements with at least 10 calls)"
        psql -d "$DB" -P pager=off -c "
            SELECT calls,
                   round(mean_exec_time::numeric * 1000, 1) AS mean_us,
                   round(total_exec_time::numeric, 1) AS total_ms,
                   round(rows::numeric / calls, 1) AS rows_per_call,
                   round(shared_blks_hit::numeric / calls, 1) AS hit_per_call,
                   round(shared_blks_read::numeric / calls, 2) AS read_per_call,
                   round(wal_bytes::numeric / calls) AS wal_bytes_per_call,
                   left(regexp_replace(query, '\\s+', ' ', 'g'), 60) || ' … '
                       || right(regexp_replace(query, '\\s+', ' ', 'g'), 50) AS statement
            FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'history') AND calls >= 10
            ORDER BY calls DESC, total_exec_time DESC"
    } | tee -a "$OUT/statements.txt"
done

log "plans: auto_explain on, a short run of each scenario"
psql -d "$DB" -c "ALTER SYSTEM SET auto_explain.log_min_duration = 0" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
LOG_FROM=$(stat -c %s "$WORK/pg/postgres.log")
for entry in "${SCENARIOS[@]}"; do run "${entry#*|}" 2s; done
psql -d "$DB" -c "ALTER SYSTEM SET auto_explain.log_min_duration = -1" -c "SELECT pg_reload_conf()" >/dev/null
tail -c +"$((LOG_FROM + 1))" "$WORK/pg/postgres.log" >"$WORK/plans.log"
# One plan per distinct statement and plan shape, the first logged; with
# how many times it was logged.
python3 - "$WORK/plans.log" <<'PY' | tee "$OUT/plans.txt"
import re, sys
entries, current = [], None
for line in open(sys.argv[1], errors="replace"):
    if "LOG:  duration:" in line and "plan:" in line:
        current = [line.split("LOG:  ", 1)[1]]
        entries.append(current)
    elif current is not None and not re.match(r"\d{4}-\d\d-\d\d ", line):
        current.append(line)
    else:
        current = None
seen = {}
for entry in entries:
    text = "".join(entry)
    # The whole entry with every number and literal masked: one key per
    # statement text and plan shape (the statements of one simple-protocol
    # string share their Query Text, not their plans).
    # Counters that vary from run to run (buffers, I/O, rows removed) are
    # left out of the key.
    shape = [line for line in text.split("plan:", 1)[-1].splitlines()
             if not re.match(r"\s*(Buffers|I/O Timings|Rows Removed|Heap Fetches|Planning|Execution)", line)]
    key = re.sub(r"'[^']*'|\d+(\.\d+)?", "?", re.sub(r"\s+", " ", " ".join(shape)))
    if "pg_stat_statements" in key or "pg_reload_conf" in key or "ALTER SYSTEM" in key:
        continue
    if key in seen:
        seen[key][1] += 1
    else:
        seen[key] = [text, 1]
for text, count in seen.values():
    print(f"---- logged {count} times; the first:")
    print(text.rstrip())
    print()
PY
log "done: $OUT"
