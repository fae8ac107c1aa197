# Sourced by the benchmark scripts (bench_*.sh, pg_statements.sh), which
# all need the same scaffolding: a work folder deleted on exit with every
# process they started, free loopback ports, a throwaway PostgreSQL
# cluster run as `nobody` when root (PostgreSQL refuses to run as root),
# and CPU seconds read from /proc. Written once so that a fix to the
# clean-up reaches every script. Loopback only.
#
# After `bench_begin WORK_PREFIX OUT_DIR`: ROOT, OUT (made), WORK (made,
# deleted on exit), PIDS (append each started process: killed on exit),
# AS_SERVER_USER (the prefix that runs PostgreSQL's tools), PGBIN.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
PIDS=()
AS_SERVER_USER=()

bench_begin() { # work_prefix out_dir
    OUT="$2"
    mkdir -p "$OUT"
    WORK="$(mktemp -d "/tmp/$1.XXXXXX")"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}

bench_cleanup() {
    set +e
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    [ -f "$WORK/pg/data/postmaster.pid" ] && "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$WORK"
}

# Every tool named must be an executable; the hint says how to build them.
bench_require() { # hint tool...
    local hint=$1 tool
    shift
    for tool in "$@"; do
        [ -x "$tool" ] || { echo "missing $tool ($hint)" >&2; exit 1; }
    done
}

log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/log.txt" >&2; }

# N free loopback ports on one line (bound together, so all distinct).
free_ports() { # n
    python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

# The start of a script that compares two builds: OLD is the release folder
# named by its first argument, NEW this checkout's; both servers and NEW's
# load tool must be built; then `bench_begin` with the second argument, or
# a fresh folder, as OUT.
bench_two_builds() { # script_name work_prefix "$@"
    local name=$1 prefix=$2
    shift 2
    OLD="$(cd "${1:?usage: $name OLD_RELEASE_DIR [OUT_DIR]}" && pwd)"
    NEW="$ROOT/.build/release"
    bench_begin "$prefix" "${2:-$(mktemp -d "/tmp/$prefix.XXXXXX")}"
    bench_require "swift build -c release --product history-server, then --product history-load, in each checkout" \
        "$OLD/history-server" "$NEW/history-server" "$NEW/history-load"
}

# A random HS256 secret in $WORK/hs.keys (the server's and the load tool's
# key file in tokens mode) and the seed's arguments in SEED.
bench_seed_arguments() {
    printf 'bench %s\n' "$(openssl rand -hex 32)" >"$WORK/hs.keys"
    chmod 600 "$WORK/hs.keys"
    SEED=(--conversations "${CONVERSATIONS:-200}" --messages "${MESSAGES:-400000}" --jwt-secret-file "$WORK/hs.keys" --quiet)
}

# Two builds compared on SQLite: NEW_FILE seeded by $NEW's tool, OLD_FILE by
# $OLD's own (a build refuses a file migrated past what it knows; the seed
# is deterministic, so both hold the same data), or a copy when $OLD has no
# tool. Each seed's report goes to $OUT/seed-<file name>.txt.
bench_seed_sqlite_pair() { # new_file old_file
    "$NEW/history-load" seed --direct "$1" "${SEED[@]}" >"$OUT/seed-$(basename "$1").txt"
    if [ -x "$OLD/history-load" ]; then
        "$OLD/history-load" seed --direct "$2" "${SEED[@]}" >"$OUT/seed-$(basename "$2").txt"
    else
        cp "$1" "$2"
    fi
}

# The server's and the load tool's flags for MODE (open or tokens: rates
# off, so the page path is measured, not the limiter) in SERVER_FLAGS and
# LOAD_FLAGS.
bench_mode_flags() { # mode
    SERVER_FLAGS=(); LOAD_FLAGS=()
    if [ "$1" = tokens ]; then
        SERVER_FLAGS=(--jwt-hs256-secret-file "$WORK/hs.keys" --rate-limit-reads 0 --rate-limit-writes 0)
        LOAD_FLAGS=(--jwt-secret-file "$WORK/hs.keys")
    fi
}

# A server's CPU seconds so far: the process, or for PostgreSQL the
# postmaster with its live children and the children that exited.
cpu_seconds() { python3 "$ROOT/scripts/cpu_seconds.py" "$@"; } # pid [postgres]
postmaster() { head -1 "$WORK/pg/data/postmaster.pid"; }

# A throwaway cluster in $WORK/pg on PORT, its socket in $WORK/pg, with a
# database `history`; sets DB to its URL. The settings passed are added to
# loopback-only listening (fsync and synchronous_commit stay at their
# durable defaults unless a setting says otherwise).
pg_cluster_start() { # port "-c name=value ..."
    PGPORT=$1
    mkdir -p "$WORK/pg"
    if [ "$(id -u)" = 0 ]; then chown nobody "$WORK/pg"; chmod 755 "$WORK"; AS_SERVER_USER=(runuser -u nobody --); fi
    "${AS_SERVER_USER[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
    "${AS_SERVER_USER[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/postgres.log" -w -t 60 \
        -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 $2" start >/dev/null
    pg_create_database history
    DB="$(pg_url history)"
}

pg_url() { echo "postgresql://postgres@/$1?host=$WORK/pg&port=$PGPORT"; } # database
pg_create_database() { "$PGBIN/psql" -X -q -d "$(pg_url postgres)" -c "CREATE DATABASE $1"; } # name

# Waits up to 30 s for a server's /healthz.
wait_healthy() { # port
    for _ in $(seq 1 300); do curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "the server on port $1 did not become healthy" >&2
    return 1
}
