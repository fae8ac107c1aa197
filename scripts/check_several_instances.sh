#!/usr/bin/env bash
# Runs docs/several-instances.md's set-up block as written, then checks what
# it built: the page cannot drift from what works.
#
# The block is the fenced one after the line
# `<!-- check_several_instances.sh runs the next block -->`. It runs in bash
# with `set -euo pipefail`, from a scratch folder that holds the repository's
# docs/ and a .build/release that is the binaries' folder, with these
# rewrites only, each printed:
#   - `swift build ...` is not run: the binaries are already built
#     (HISTORY_BIN=folder, default .build/release, else .build/debug);
#   - ports 8080, 8081, 8082 become free ports, in the block and in the
#     scratch copy of docs/nginx-upstream.conf, so that nothing else on the
#     machine is disturbed;
#   - as root, `sudo` is a shell function (`sudo -u USER cmd` runs cmd as
#     USER through runuser): a fresh machine's root has no sudo.
# Then, through nginx: 401 without a token, the conversation and post the
# block made are there with a token, both instances answered.
#
# It changes the machine (the page's own steps): installs packages when
# missing, starts Debian's PostgreSQL cluster and nginx, creates the OS user
# and role `history`, /etc/history, /usr/local/bin/history-{server,load},
# /etc/nginx/conf.d/history.conf. So it runs only as root, refuses to start
# when any of those exists already (never touching a real deployment), and
# removes all of them on exit, stopping what was not running before. Meant
# for a throwaway machine (CI); about 30 s.
#
#   scripts/check_several_instances.sh
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PAGE="$ROOT/docs/several-instances.md"
MARKER='<!-- check_several_instances.sh runs the next block -->'

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

[ "$(id -u)" = 0 ] || fail "run it as root, on a throwaway machine: it creates a user, a database and nginx's configuration"
for existing in /etc/history /usr/local/bin/history-server /usr/local/bin/history-load /etc/nginx/conf.d/history.conf; do
    [ ! -e "$existing" ] || fail "$existing exists: this machine has a deployment; run the check on a throwaway machine"
done
! id history >/dev/null 2>&1 || fail "an OS user 'history' exists: run the check on a throwaway machine"

BIN="${HISTORY_BIN:-}"
if [ -z "$BIN" ]; then
    for candidate in "$ROOT/.build/release" "$ROOT/.build/debug"; do
        [ -x "$candidate/history-server" ] && [ -x "$candidate/history-load" ] && { BIN="$candidate"; break; }
    done
fi
[ -n "$BIN" ] && [ -x "$BIN/history-server" ] && [ -x "$BIN/history-load" ] \
    || fail "no built history-server and history-load (swift build, or HISTORY_BIN=folder)"
# Absolute: the block runs in a scratch folder, through a link to it.
BIN="$(cd "$BIN" && pwd -P)"

# The block.
BLOCK="$(awk -v marker="$MARKER" '
    $0 == marker { armed = 1; next }
    armed && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
' "$PAGE")"
[ -n "$BLOCK" ] || fail "no fenced block after '$MARKER' in $PAGE"

WORK="$(mktemp -d /tmp/history-several-check.XXXXXX)"
chmod 755 "$WORK"
postgres_was_running=no
nginx_was_running=no
pgrep -x postgres >/dev/null 2>&1 && postgres_was_running=yes
pgrep -x nginx >/dev/null 2>&1 && nginx_was_running=yes
cleanup() {
    set +e
    # The user was created by this run (refused above otherwise): every
    # process it owns is one of the block's instances or their children.
    for pid in $(pgrep -u history 2>/dev/null); do kill "$pid" 2>/dev/null; done
    sleep 1
    for pid in $(pgrep -u history 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    if [ -e /etc/nginx/conf.d/history.conf ]; then
        rm -f /etc/nginx/conf.d/history.conf
        if [ "$nginx_was_running" = yes ]; then service nginx reload >/dev/null 2>&1; else service nginx stop >/dev/null 2>&1; fi
    fi
    runuser -u postgres -- dropdb --if-exists history >/dev/null 2>&1
    runuser -u postgres -- dropuser --if-exists history >/dev/null 2>&1
    [ "$postgres_was_running" = yes ] || service postgresql stop >/dev/null 2>&1
    id history >/dev/null 2>&1 && userdel history >/dev/null 2>&1
    rm -rf /etc/history /usr/local/bin/history-server /usr/local/bin/history-load "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
PY
}
read -r PORT_NGINX PORT_A PORT_B <<<"$(free_ports 3)"
rewrite_ports() { sed -e "s/\b8080\b/$PORT_NGINX/g" -e "s/\b8081\b/$PORT_A/g" -e "s/\b8082\b/$PORT_B/g"; }

# The scratch folder: docs/ (nginx's file with the free ports) and .build/release.
mkdir -p "$WORK/repo/docs" "$WORK/repo/.build"
cp -r "$ROOT/docs/." "$WORK/repo/docs/"
rewrite_ports <"$ROOT/docs/nginx-upstream.conf" >"$WORK/repo/docs/nginx-upstream.conf"
ln -s "$BIN" "$WORK/repo/.build/release"

{
    echo 'set -euo pipefail'
    echo 'sudo() { if [ "$1" = -u ]; then local user="$2"; shift 2; runuser -u "$user" -- "$@"; else "$@"; fi; }'
    printf '%s\n' "$BLOCK" | rewrite_ports | sed -e 's/^\(swift build.*\)$/: skipped, already built: \1/'
} >"$WORK/block.sh"
echo "-- running the block of docs/several-instances.md (ports 8080, 8081, 8082 -> $PORT_NGINX, $PORT_A, $PORT_B; binaries from $BIN)"
grep -n '^: skipped' "$WORK/block.sh" | sed 's/^/   /' || true
(cd "$WORK/repo" && timeout 240 bash -x "$WORK/block.sh") >"$WORK/block.out" 2>"$WORK/block.err" || {
    echo "--- stdout"; cat "$WORK/block.out"; echo "--- stderr (bash -x)"; tail -40 "$WORK/block.err"
    fail "a command of docs/several-instances.md's block failed (the last '+' line above)"
} >&2
pass "every command of the block ran"
sed 's/^/   /' "$WORK/block.out"

# What the block built, checked from outside it.
NGINX_URL="http://127.0.0.1:$PORT_NGINX"
grep -qx 401 "$WORK/block.out" || fail "the request without a token did not answer 401: $(cat "$WORK/block.out")"
status=$(curl -s -o /dev/null -w '%{http_code}' "$NGINX_URL/v1/conversations/general")
[ "$status" = 401 ] || fail "through nginx without a token: $status, not 401 (open mode behind a proxy)"
pass "tokens mode: 401 through nginx without a token"
TOKEN=$(runuser -u history -- /usr/local/bin/history-load token --sub ana --jwt-secret-file /etc/history/keys)
page=$(curl -fsS "$NGINX_URL/v1/conversations/general/messages" -H "Authorization: Bearer $TOKEN") \
    || fail "reading the conversation the block made, through nginx"
python3 -c "
import json, sys
page = json.loads(sys.argv[1])
assert [(m['sender'], m['body']) for m in page['messages']] == [('ana', 'hello through nginx')], page
" "$page" || fail "the conversation through nginx: $page"
pass "the block's post is there, read through nginx with a token"
for port in "$PORT_A" "$PORT_B"; do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || fail "the instance on port $port does not answer"
done
seeded=$(curl -fsS "$NGINX_URL/v1/conversations/load-0000" -H "Authorization: Bearer $(runuser -u history -- \
    /usr/local/bin/history-load token --sub ops --admin --jwt-secret-file /etc/history/keys)" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["message_count"])') || fail "the seeded conversation load-0000"
[ "$seeded" -gt 0 ] || fail "the seed left load-0000 empty"
pass "both instances answer; the seed (run as history) stored load-0000 with $seeded messages"
echo "all checks passed"
