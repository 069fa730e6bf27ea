#!/usr/bin/env bash
# The performance regression guard (docs/performance.md, "Ratios to the floor, and the regression
# guard"): the short version of each guarded bench, every figure a ratio to a floor measured
# alternately in the same run, then bench/guard.ts fails if a ratio is more than 30 % worse than
# bench/baseline.json. About 3 minutes on the 2-core development host at load 15-25.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(mktemp -d -t faultline-bench-ci-XXXXXX)
trap 'rm -rf "$results"' EXIT
export FAULTLINE_BENCH_RESULTS="$results"
# The benches measure the built package (what an installed faultline runs).
[ -f dist/src/app/cli/main.js ] || npm run build
npx tsx bench/startup.ts --ci
npx tsx bench/cli.ts --ci
# --go: Go Porcupine beside it where Go and FAULTLINE_PORCUPINE_SRC are present; otherwise skipped with the reason.
npx tsx bench/linearizability.ts --ci --no-hard --go
npx tsx bench/report.ts
npx tsx bench/guard.ts
