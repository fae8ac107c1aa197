#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time; fails when
# any target crashes, breaks one of its properties, times out on an input
# or runs out of memory.
#
#   scripts/fuzz.sh [seconds-per-target] [target ...]
#
# Targets: request-parser chunked-body-decoder json-reader query-parameters
# token-verifier (all by default). Seconds default to 60.
#
# Environment:
#   FUZZ_CONFIG        SwiftPM configuration, release (default) or debug: release
#                      runs four to five times as many inputs a second
#                      (docs/fuzzing.md, Results); with FUZZ_SCRATCH=.build, debug
#                      shares the test build's dependencies
#   FUZZ_SCRATCH       SwiftPM scratch path for the instrumented build (.build-fuzz)
#   FUZZ_RSS_LIMIT_MB  memory limit per target (2048)
#
# Inputs the fuzzers find interesting accumulate in $FUZZ_SCRATCH/corpus/<target>
# (the seeds in fuzz/corpus/<target> are only read); a failing input is saved
# in $FUZZ_SCRATCH/artifacts/<target>/ and the script prints how to replay it.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all_targets=(request-parser chunked-body-decoder json-reader query-parameters token-verifier)
targets=("${@:-${all_targets[@]}}")
scratch="${FUZZ_SCRATCH:-.build-fuzz}"
config="${FUZZ_CONFIG:-release}"
rss_limit="${FUZZ_RSS_LIMIT_MB:-2048}"

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
    echo "usage: scripts/fuzz.sh [seconds-per-target] [target ...]" >&2
    exit 2
fi
if [ "$config" != release ] && [ "$config" != debug ]; then
    echo "FUZZ_CONFIG must be release or debug, not $config" >&2
    exit 2
fi

product_of() {
    case "$1" in
        request-parser) echo FuzzRequestParser ;;
        chunked-body-decoder) echo FuzzChunkedBodyDecoder ;;
        json-reader) echo FuzzJSONReader ;;
        query-parameters) echo FuzzQueryParameters ;;
        token-verifier) echo FuzzTokenVerifier ;;
        *) echo "unknown fuzz target: $1 (known: ${all_targets[*]})" >&2; return 1 ;;
    esac
}

# The fuzz targets exist only in this mode of Package.swift.
export CHAT_HISTORY_FUZZ=1
for target in "${targets[@]}"; do
    product="$(product_of "$target")"
    echo "== building $product ($config)"
    swift build -c "$config" --product "$product" --scratch-path "$scratch"
done
bin="$(swift build -c "$config" --scratch-path "$scratch" --show-bin-path)"

failed=()
summary=()
for target in "${targets[@]}"; do
    product="$(product_of "$target")"
    corpus="$scratch/corpus/$target"
    artifacts="$scratch/artifacts/$target"
    log="$scratch/logs/$target.log"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    echo "== fuzzing $target for ${seconds}s"
    status=0
    # -timeout: one input taking 10 s is a hang. The outer timeout only
    # guards against the fuzzer itself not stopping.
    timeout --signal=KILL "$((seconds + 120))" \
        "$bin/$product" "$corpus" "fuzz/corpus/$target" \
        -max_total_time="$seconds" -rss_limit_mb="$rss_limit" -malloc_limit_mb="$rss_limit" \
        -timeout=10 -max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" \
        > "$log" 2>&1 || status=$?
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{ sum += $2 } END { print sum + 0 }')"
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
        summary+=("$target: FAILED (exit $status) after $runs inputs; log $log")
        tail -n 40 "$log"
        grep -o 'Test unit written to .*' "$log" | sed "s|Test unit written to |replay: $bin/$product |" || true
    else
        summary+=("$target: $runs inputs in ${seconds}s, no failure")
    fi
done

echo "== fuzzing summary ($(date -u +%Y-%m-%dT%H:%MZ))"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzzing found failures in: ${failed[*]}" >&2
    exit 1
fi
