#!/usr/bin/env bash
# Checks the Dockerfile's recipe without a container engine (none runs on
# the CI machine): builds history-server with the very `swift build` command
# of the Dockerfile's build stage (in its own .build-container), then checks
# that the binary
#   1. needs no library of the Swift toolchain, only the C libraries the run
#      stage installs (libsqlite3-0, libpq5) and Debian's base ones;
#   2. answers --version, and under the image's environment (HISTORY_HOST
#      0.0.0.0, no key) refuses to start in open mode (exit 2);
#   3. serves with a key on SQLite under the image's environment (on
#      127.0.0.1 here, loopback only): /healthz 200, tokens mode.
# It also checks the Dockerfile's Swift image is this machine's Swift
# (major.minor), so what is built here is what the image builds.
#
#   scripts/check_container_build.sh     # the recipe's release build: 11 minutes on 2 busy cores
#   HISTORY_SERVER=.build/debug/history-server scripts/check_container_build.sh --no-build
#
# The second is what CI runs (the release build would add its 11 minutes;
# the recipe's static link cannot be tried in debug, where the unstripped
# Foundation needs ICU symbols the static link leaves out): the Dockerfile
# read as above, then checks 1 to 3 on the test build's binary, its Swift
# libraries aside (the recipe links them in). A new C library the server
# needs, or a change to what the image's environment does, fails it too.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DOCKERFILE="$ROOT/Dockerfile"
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

image=$(sed -n 's/^FROM swift:\([0-9.]*\)-.* AS build$/\1/p' "$DOCKERFILE")
[ -n "$image" ] || fail "no 'FROM swift:X.Y-... AS build' in $DOCKERFILE"
here=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9]*\.[0-9]*\).*/\1/p' | head -1)
[ "$image" = "$here" ] || fail "the Dockerfile builds with Swift $image, this machine has $here: the check would not build what the image builds"
pass "the image's Swift ($image) is this machine's"

# The build stage's `swift build` (a RUN line, continued with \ and &&).
build=$(awk '/^RUN swift build/ { sub(/^RUN /, ""); line = $0; while (line ~ /\\$/) { getline next_line; line = line "\n" next_line }; print line; exit }' "$DOCKERFILE" \
    | sed -n '1s/ *&&.*//; 1s/ *\\$//p')
case "$build" in "swift build "*) ;; *) fail "no 'RUN swift build ...' in $DOCKERFILE" ;; esac
grep -q -- '--static-swift-stdlib' <<<"$build" || fail "the recipe's build does not link Swift's libraries statically: $build"
for library in libsqlite3-0 libpq5; do
    grep -q "install .*$library" "$DOCKERFILE" || fail "the Dockerfile's run stage does not install $library"
done
if [ "${1:-}" = --no-build ]; then
    bin="${HISTORY_SERVER:-$ROOT/.build/debug/history-server}"
    [ -x "$bin" ] || fail "no binary at $bin (HISTORY_SERVER=path)"
    static=no
    pass "not building ($build): checking $bin, its Swift libraries aside"
else
    SCRATCH="$ROOT/.build-container"
    echo "-- $build --scratch-path $SCRATCH"
    (cd "$ROOT" && eval "$build --scratch-path '$SCRATCH'") || fail "the Dockerfile's build command failed"
    bin="$(cd "$ROOT" && eval "${build/--product history-server/} --scratch-path '$SCRATCH' --show-bin-path")/history-server"
    [ -x "$bin" ] || fail "no binary at $bin"
    static=yes
    pass "built $bin"
fi

# 1. Its libraries: the run stage's and Debian's base ones, nothing of Swift's.
allowed='^(libsqlite3\.so\.0|libpq\.so\.5|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libutil\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
# Not linked statically here: the Swift runtime, Foundation and their own
# libraries, which the recipe's --static-swift-stdlib links in.
[ "$static" = yes ] || needed=$(grep -Ev '^(libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|libicu)' <<<"$needed")
unexpected=$(grep -Ev "$allowed" <<<"$needed" || true)
[ -z "$unexpected" ] || fail "the binary needs libraries the run stage lacks: $(echo $unexpected)"
[ "$static" = no ] || ! ldd "$bin" | grep -Eiq 'swift|foundation|dispatch|icu' || fail "the binary loads the Swift toolchain's libraries: $(ldd "$bin" | grep -Ei 'swift|foundation|dispatch|icu')"
pass "needs only $(echo $needed)"

# 2. --version; the image's environment without a key refuses open mode.
[ "$("$bin" --version)" = "$(sed -n 's/.*static let version = "\(.*\)"/\1/p' "$ROOT/Sources/HistoryWiring/HistoryApplication.swift")" ] \
    || fail "--version: $("$bin" --version)"
WORK="$(mktemp -d /tmp/history-container-check.XXXXXX)"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
image_env=(env -i PATH=/usr/bin:/bin HISTORY_HOST=0.0.0.0 HISTORY_PORT=8080 HISTORY_DATABASE="$WORK/data/history.sqlite")
status=0
"${image_env[@]}" "$bin" >"$WORK/open.out" 2>"$WORK/open.err" || status=$?
[ "$status" = 2 ] && grep -q "no token key" "$WORK/open.err" \
    || fail "without a key on 0.0.0.0 it should exit 2: status $status, $(cat "$WORK/open.err")"
pass "--version; the image's environment without a key exits 2 ($(cat "$WORK/open.err"))"

# 3. With a key, on SQLite, as the image runs it (loopback here).
printf 'dev %s\n' "$(openssl rand -hex 32)" >"$WORK/keys"
chmod 600 "$WORK/keys"
"${image_env[@]}" HISTORY_JWT_HS256_SECRET_FILE="$WORK/keys" "$bin" --host 127.0.0.1 --port 0 >"$WORK/out" 2>"$WORK/err" &
pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
line=$(head -1 "$WORK/out")
port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' <<<"$line")
[ -n "$port" ] || fail "no start-up line: $(cat "$WORK/out" "$WORK/err")"
grep -q "in tokens mode" <<<"$line" || fail "not in tokens mode: $line"
[ "$(curl -fsS "http://127.0.0.1:$port/healthz")" = '{"status":"ok"}' ] || fail "/healthz"
[ -f "$WORK/data/history.sqlite" ] || fail "the SQLite file was not created under the data folder"
pass "serves on SQLite in tokens mode: $line"
echo "all checks passed"
