#!/usr/bin/env bash
# Server CPU per deep page in open mode and in tokens mode, for two builds
# (the one before a change and the one after), on SQLite and on PostgreSQL,
# alternated in rounds: docs/performance.md, "Access decided in the
# snapshot". In tokens mode every page is read as a user token's subject
# who is a member (`seed --jwt-secret-file`), so the role check is paid.
#
#   (cd OLD && swift build -c release --product history-server && swift build -c release --product history-load)
#   swift build -c release --product history-server && swift build -c release --product history-load
#   scripts/bench_access_cpu.sh OLD/.build/release [OUT_DIR]     # about 10 minutes
#
# Environment: ROUNDS (3), DURATION (15s), CONVERSATIONS (200), MESSAGES
# (400000), STORES ("sqlite postgres"), MODES ("open tokens"), SCENARIO
# (deep: pages from 32 clients; post: appends from 64 posters on 64
# conversations, CPU per append), PGBIN. Loopback only; everything it
# starts is stopped and deleted on exit.
set -euo pipefail

source "$(dirname "$0")/lib/bench_common.sh"
bench_two_builds bench_access_cpu.sh history-access-bench "$@"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-15s}"
STORES="${STORES:-sqlite postgres}"
MODES="${MODES:-open tokens}"
SCENARIO="${SCENARIO:-deep}"
case "$SCENARIO" in
    deep) SCENARIO_ARGS=(--scenario deep --clients 32) ;;
    post) SCENARIO_ARGS=(--scenario post --clients 64 --live-conversations 64) ;;
    *) echo "SCENARIO is deep or post, not $SCENARIO" >&2; exit 2 ;;
esac
read -r PGPORT PORT <<<"$(free_ports 2)"

bench_seed_arguments
declare -A DATABASE
if [[ " $STORES " == *" sqlite "* ]]; then
    log "seed SQLite"
    bench_seed_sqlite_pair "$WORK/history.sqlite" "$WORK/history-old.sqlite"
    DATABASE[sqlite]="$WORK/history.sqlite"
    DATABASE[sqlite-old]="$WORK/history-old.sqlite"
fi
if [[ " $STORES " == *" postgres "* ]]; then
    pg_cluster_start "$PGPORT" "-c shared_buffers=512MB"
    DATABASE[postgres]="$DB"
    log "seed PostgreSQL"
    "$NEW/history-load" seed --direct "${DATABASE[postgres]}" "${SEED[@]}" >"$OUT/seed-postgres.txt"
    "$PGBIN/psql" -X -q -d "${DATABASE[postgres]}" -c "VACUUM ANALYZE"
    if [ -x "$OLD/history-load" ]; then
        pg_create_database history_old
        DATABASE[postgres-old]="$(pg_url history_old)"
        "$OLD/history-load" seed --direct "${DATABASE[postgres-old]}" "${SEED[@]}" >"$OUT/seed-postgres-old.txt"
        "$PGBIN/psql" -X -q -d "${DATABASE[postgres-old]}" -c "VACUUM ANALYZE"
    fi
fi

# One measurement: a server of `build` on `store` in `mode`, deep pages for
# DURATION from 32 clients, its CPU (and PostgreSQL's) per page answered.
measure() { # round store build mode
    local round=$1 store=$2 build=$3 mode=$4 bin flags=() load=() pid name
    bin=$([ "$build" = old ] && echo "$OLD" || echo "$NEW")
    # Rates off in both modes (tokens mode limits each user to 50 reads a
    # second by default): the page path is measured, not the limiter.
    bench_mode_flags "$mode"
    flags=("${SERVER_FLAGS[@]}"); load=("${LOAD_FLAGS[@]}")
    local database="${DATABASE[$store]}"
    [ "$build" = old ] && [ -n "${DATABASE[$store-old]:-}" ] && database="${DATABASE[$store-old]}"
    "$bin/history-server" --host 127.0.0.1 --port "$PORT" --database "$database" --access-log off \
        --max-connections-per-client 0 "${flags[@]}" >"$WORK/server.out" 2>"$WORK/server.err" &
    pid=$!; PIDS+=("$pid")
    wait_healthy "$PORT"
    name="$store-$build-$mode-$round"
    local before after before_pg=0 after_pg=0
    before=$(cpu_seconds "$pid")
    [ "$store" = postgres ] && before_pg=$(cpu_seconds "$(postmaster)" postgres)
    # Identity answers (--no-gzip): builds before gzip have none, and the
    # access check is measured, not the compression.
    "$NEW/history-load" run --url "http://127.0.0.1:$PORT" "${SCENARIO_ARGS[@]}" --duration "$DURATION" \
        "${load[@]}" --no-gzip --quiet --json "$OUT/$name.json" >"$OUT/$name.txt"
    after=$(cpu_seconds "$pid")
    [ "$store" = postgres ] && after_pg=$(cpu_seconds "$(postmaster)" postgres)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    python3 - "$name" "$OUT/$name.json" "$before" "$after" "$before_pg" "$after_pg" <<'PY' | tee -a "$OUT/results.tsv"
import json, sys
name, path, b, a, bp, ap = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
report = json.load(open(path))
n = report["requests"]
print(f"{name}\t{report['requests_per_second']:.0f}\t{(a - b) / n * 1e6:.1f}\t{(ap - bp) / n * 1e6:.1f}\t{sum(report.get('errors', {}).values())}")
PY
}

printf 'run\tpages/s\tserver us/page\tpostgres us/page\terrors\n' >"$OUT/results.tsv"
for round in $(seq 1 "$ROUNDS"); do
    # Odd rounds measure the old build first, even rounds the new one, so a
    # machine that slows down during a round does not favour either.
    order="old new"; [ $((round % 2)) = 0 ] && order="new old"
    for store in $STORES; do
        for build in $order; do
            for mode in $MODES; do
                log "round $round: $store, $build build, $mode mode"
                measure "$round" "$store" "$build" "$mode"
            done
        done
    done
done

# Medians over the rounds, and the two ratios the change is judged by.
python3 - "$OUT/results.tsv" <<'PY' | tee "$OUT/summary.txt"
import collections, statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
cpu = collections.defaultdict(list)
rate = collections.defaultdict(list)
failed = [row[0] for row in rows if row[4] != "0"]
if failed:
    print(f"WARNING: requests failed in {', '.join(failed)}: those figures are not pages")
for name, per_second, server, postgres, _ in rows:
    store, build, mode, _ = name.split("-")
    cpu[store, build, mode].append(float(server) + float(postgres))
    rate[store, build, mode].append(float(per_second))
for store in sorted({key[0] for key in cpu}):
    print(f"{store}: median CPU per request (server + database), requests/s")
    modes = [mode for mode in ("open", "tokens") if cpu[store, "new", mode]]
    for build in ("old", "new"):
        for mode in modes:
            key = (store, build, mode)
            print(f"  {build:3} {mode:6} {statistics.median(cpu[key]):7.1f} us  {statistics.median(rate[key]):8.0f}/s")
    if "tokens" in modes:
        old_tokens, new_tokens = statistics.median(cpu[store, "old", "tokens"]), statistics.median(cpu[store, "new", "tokens"])
        print(f"  tokens mode, new against old: {100 * (new_tokens / old_tokens - 1):+.1f}% CPU per request")
    if modes == ["open", "tokens"]:
        new_open = statistics.median(cpu[store, "new", "open"])
        print(f"  new build, tokens against open: {100 * (new_tokens / new_open - 1):+.1f}% CPU per request")
    # Paired by round (each round runs both builds back to back): the
    # machine's drift within a sitting cancels out of each pair, so the
    # median of the rounds' ratios, and how many rounds the new build won,
    # say more than the ratio of two medians when rounds move 25%.
    for mode in modes:
        pairs = list(zip(cpu[store, "old", mode], cpu[store, "new", mode]))
        ratios = [new / old for old, new in pairs if old > 0]
        if not ratios:
            continue
        won = sum(1 for old, new in pairs if new < old)
        print(f"  {mode} mode, paired by round: new/old median {100 * (statistics.median(ratios) - 1):+.1f}%,"
              f" new lower in {won} of {len(pairs)} rounds")
PY
