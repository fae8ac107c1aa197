#!/usr/bin/env bash
# Where a deep page's CPU time goes, for two builds (or two modes of one):
# `perf record -e cpu-clock` on the server under 32 readers of `history-load
# run --scenario deep`, the builds alternated round by round, and each
# library's and symbol's share of the samples turned into µs per page
# (share x that run's CPU per page). Instruction counts
# (scripts/page_instructions.sh) say what the code executes; this says what
# it costs, copies and cache misses included: docs/performance.md, "Where
# the time goes, against where the instructions go".
#
#   (cd OLD && swift build -c release --product history-server --product history-load)
#   swift build -c release --product history-server --product history-load
#   scripts/page_time_profile.sh OLD/.build/release [OUT_DIR]
#
# Environment: ROUNDS (2), SECONDS_EACH (8, the recorded part of each run),
# MODE (open or tokens), TOP (25 symbols listed), CONVERSATIONS (200),
# MESSAGES (400000). SQLite only; needs perf. Loopback only; everything it
# starts is stopped and deleted on exit.
set -euo pipefail

source "$(dirname "$0")/lib/bench_common.sh"
bench_two_builds page_time_profile.sh history-time-profile "$@"
ROUNDS="${ROUNDS:-2}"
SECONDS_EACH="${SECONDS_EACH:-8}"
MODE="${MODE:-open}"
command -v perf >/dev/null || { echo "missing perf (Debian: linux-perf)" >&2; exit 1; }
read -r PORT <<<"$(free_ports 1)"

bench_seed_arguments
log "seed"
bench_seed_sqlite_pair "$WORK/new.sqlite" "$WORK/old.sqlite"
bench_mode_flags "$MODE"
flags=("${SERVER_FLAGS[@]}"); load=("${LOAD_FLAGS[@]}")

printf 'run\tpages/s\tus/page\n' >"$OUT/runs.tsv"
for round in $(seq 1 "$ROUNDS"); do
    order="old new"; [ $((round % 2)) = 0 ] && order="new old"
    for build in $order; do
        bin=$([ "$build" = old ] && echo "$OLD" || echo "$NEW")
        name="$build-$round"
        log "round $round: $build build, $MODE mode"
        "$bin/history-server" --host 127.0.0.1 --port "$PORT" --database "$WORK/$build.sqlite" --access-log off \
            --max-connections-per-client 0 "${flags[@]}" >"$WORK/server.out" 2>&1 &
        pid=$!; PIDS+=("$pid")
        wait_healthy "$PORT"
        "$NEW/history-load" run --url "http://127.0.0.1:$PORT" --scenario deep --clients 32 --duration 3s \
            "${load[@]}" --no-gzip --quiet >/dev/null
        # The load runs two seconds past the recording, so every recorded
        # sample is under load; pages are counted from the server's own CPU.
        "$NEW/history-load" run --url "http://127.0.0.1:$PORT" --scenario deep --clients 32 \
            --duration "$((SECONDS_EACH + 2))s" "${load[@]}" --no-gzip --quiet --json "$OUT/$name.json" >/dev/null &
        loader=$!; PIDS+=("$loader")
        sleep 1
        before=$(cpu_seconds "$pid")
        perf record -q -e cpu-clock -F 4999 -p "$pid" -o "$OUT/$name.data" -- sleep "$SECONDS_EACH" >/dev/null 2>&1
        after=$(cpu_seconds "$pid")
        wait "$loader"
        kill "$pid"; wait "$pid" 2>/dev/null || true
        python3 - "$name" "$OUT/$name.json" "$before" "$after" "$SECONDS_EACH" <<'PY' | tee -a "$OUT/runs.tsv"
import json, sys
name, path, before, after, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rate = json.load(open(path))["requests_per_second"]
print(f"{name}\t{rate:.0f}\t{(after - before) / (rate * seconds) * 1e6:.1f}")
PY
        perf report -i "$OUT/$name.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null \
            | grep -E '^ +[0-9]+\.[0-9]+%' >"$OUT/$name.symbols" || true
    done
done

python3 - "$OUT" "${TOP:-25}" <<'PY' | tee "$OUT/summary.txt"
import collections, os, re, sys
out, top = sys.argv[1], int(sys.argv[2])
runs = {line.split("\t")[0]: float(line.split("\t")[2]) for line in open(f"{out}/runs.tsv").read().splitlines()[1:]}
per = {"old": collections.Counter(), "new": collections.Counter()}
dsos = {"old": collections.Counter(), "new": collections.Counter()}
count = collections.Counter()
for name, cpu in runs.items():
    build = name.split("-")[0]
    count[build] += 1
    for line in open(f"{out}/{name}.symbols"):
        match = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)", line)
        if not match:
            continue
        share, dso, symbol = float(match.group(1)), match.group(2), match.group(3).strip()
        per[build][f"{dso} {symbol}"] += share * cpu / 100
        dsos[build][dso] += share * cpu / 100
for build in per:
    for table in (per[build], dsos[build]):
        for key in table:
            table[key] /= count[build]
mean = {build: sum(cpu for name, cpu in runs.items() if name.startswith(build)) / count[build] for build in count}
print(f"µs of server CPU per deep page, mean of {count['old']} runs each: old {mean['old']:.1f}, new {mean['new']:.1f}")
print("\nby library:             old     new    new-old")
for dso in sorted(set(dsos["old"]) | set(dsos["new"]), key=lambda d: -dsos["new"][d])[:8]:
    print(f"  {dso[:20]:20} {dsos['old'][dso]:7.2f} {dsos['new'][dso]:7.2f} {dsos['new'][dso] - dsos['old'][dso]:+8.2f}")
print(f"\nthe new build's top {top} symbols:  old     new    new-old")
for key in sorted(per["new"], key=lambda k: -per["new"][k])[:top]:
    print(f"  {per['old'][key]:7.2f} {per['new'][key]:7.2f} {per['new'][key] - per['old'][key]:+8.2f}  {key[:110]}")
PY
