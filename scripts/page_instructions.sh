#!/usr/bin/env bash
# Instructions per deep `before` page of 50, counted by callgrind, for two
# builds in open and tokens mode: docs/performance.md, "Instructions per
# deep page". Instruction counts do not depend on what else the machine is
# doing, so this compares builds on a busy machine, where CPU time cannot
# (it counts user-space instructions only: no kernel, no waiting).
#
#   (cd OLD && swift build -c release --product history-server)
#   swift build -c release --product history-server --product history-load
#   scripts/page_instructions.sh OLD/.build/release [OUT_DIR]
#
# Environment: PAGES (300 measured per run), WARM (50 before the counters
# are zeroed), CONVERSATIONS (200), MESSAGES (400000), MODES ("open tokens"),
# GZIP (set to 1: requests accept gzip). Needs valgrind, gcc and python3.
# Loopback only; everything it starts is stopped and deleted on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD="$(cd "${1:?usage: page_instructions.sh OLD_RELEASE_DIR [OUT_DIR]}" && pwd)"
NEW="$ROOT/.build/release"
OUT="${2:-$(mktemp -d /tmp/history-page-instructions.XXXXXX)}"
mkdir -p "$OUT"
PAGES="${PAGES:-300}"
WARM="${WARM:-50}"
MODES="${MODES:-open tokens}"
for tool in "$OLD/history-server" "$NEW/history-server" "$NEW/history-load" valgrind callgrind_control gcc; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
WORK="$(mktemp -d /tmp/history-page-instructions.XXXXXX)"
PIDS=()
cleanup() {
    set +e
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Valgrind 3.19 stops in libdispatch's dispatch_main (its signal thread's
# sigsuspend), and reads no DWARF 5: the server runs with a dispatch_main
# that only sleeps (nothing of a page's path is on the main queue; the
# server is then stopped with SIGKILL) and without its debug sections
# (function names come from the symbol table).
cat >"$WORK/shim.c" <<'C'
#include <unistd.h>
void dispatch_main(void) { for (;;) pause(); }
C
gcc -shared -fPIC -O2 -o "$WORK/shim.so" "$WORK/shim.c"
objcopy --strip-debug "$OLD/history-server" "$WORK/old-server"
objcopy --strip-debug "$NEW/history-server" "$WORK/new-server"

printf 'bench %s\n' "$(openssl rand -hex 32)" >"$WORK/hs.keys"
chmod 600 "$WORK/hs.keys"
# Each build reads a file seeded by its own tool when OLD has one (a build
# older than a migration refuses a newer file): the seed is deterministic,
# so both files hold the same conversations and messages.
"$NEW/history-load" seed --direct "$WORK/seed.sqlite" --conversations "${CONVERSATIONS:-200}" \
    --messages "${MESSAGES:-400000}" --jwt-secret-file "$WORK/hs.keys" --quiet >"$OUT/seed.txt"
if [ -x "$OLD/history-load" ]; then
    "$OLD/history-load" seed --direct "$WORK/old-seed.sqlite" --conversations "${CONVERSATIONS:-200}" \
        --messages "${MESSAGES:-400000}" --jwt-secret-file "$WORK/hs.keys" --quiet >"$OUT/old-seed.txt"
else
    cp "$WORK/seed.sqlite" "$WORK/old-seed.sqlite"
fi
TOKEN="$("$NEW/history-load" token --sub load-user-0000 --jwt-secret-file "$WORK/hs.keys" --ttl 86400)"
read -r LARGEST NEWEST <<<"$(python3 - "$WORK/seed.sqlite" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT id, newest_id FROM conversations ORDER BY message_count DESC LIMIT 1").fetchone()
print(row[0], row[1])
PY
)"

# Deep `before` pages of 50 on one keep-alive connection, cursors from a
# fixed seed (the same pages for both builds), no Accept-Encoding unless
# GZIP=1, as `history-load run --no-gzip` sends them.
cat >"$WORK/drive.py" <<'PY'
import http.client, random, sys
port, count, token, cid, newest = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
gzip = sys.argv[6] == "1"
rng = random.Random(27)
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
total = 0
for _ in range(count):
    conn.putrequest("GET", f"/v1/conversations/{cid}/messages?limit=50&before={rng.randint(min(1000, newest), newest)}",
                    skip_accept_encoding=True)
    if token: conn.putheader("Authorization", "Bearer " + token)
    if gzip: conn.putheader("Accept-Encoding", "gzip")
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    assert response.status == 200, (response.status, body[:200])
    total += len(body)
print(f"{count} pages, {total / count:.0f} bytes per page")
PY

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

measure() { # build mode
    local build=$1 mode=$2 flags=() token="" port pid name="$1-$2"
    [ "$mode" = tokens ] && { flags=(--jwt-hs256-secret-file "$WORK/hs.keys" --rate-limit-reads 0 --rate-limit-writes 0); token="$TOKEN"; }
    port=$(port)
    if [ "$build" = old ]; then cp "$WORK/old-seed.sqlite" "$WORK/$name.sqlite"; else cp "$WORK/seed.sqlite" "$WORK/$name.sqlite"; fi
    LD_PRELOAD="$WORK/shim.so" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind-$name.out" \
        "$WORK/$build-server" --host 127.0.0.1 --port "$port" --database "$WORK/$name.sqlite" --access-log off \
        --max-connections-per-client 0 "${flags[@]}" >"$OUT/server-$name.log" 2>&1 &
    pid=$!; PIDS+=("$pid")
    for _ in $(seq 1 1200); do
        kill -0 "$pid" 2>/dev/null || { echo "the $name server stopped" >&2; tail "$OUT/server-$name.log" >&2; exit 1; }
        curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
        sleep 0.5
    done
    python3 "$WORK/drive.py" "$port" "$WARM" "$token" "$LARGEST" "$NEWEST" "${GZIP:-0}" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    python3 "$WORK/drive.py" "$port" "$PAGES" "$token" "$LARGEST" "$NEWEST" "${GZIP:-0}" >"$OUT/$name.txt"
    callgrind_control -d "$pid" >/dev/null 2>&1
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    rm -f "$WORK/$name.sqlite"*
    local dump total
    dump=$(ls -t "$OUT/callgrind-$name.out".* | head -1)
    total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
    printf '%s\t%s\t%s\t%s\n' "$name" "$total" "$((total / PAGES))" "$(cat "$OUT/$name.txt")" | tee -a "$OUT/results.tsv"
}

printf 'run\tinstructions\tper page\tpages\n' >"$OUT/results.tsv"
for mode in $MODES; do
    for build in old new; do measure "$build" "$mode"; done
done
echo "profiles: callgrind_annotate $OUT/callgrind-<run>.out.1" >&2
