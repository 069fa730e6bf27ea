#!/usr/bin/env bash
# memcached end to end, through faultline's public API only: build faultline (the example imports the
# package, which is its compiled dist/; the checkout's `npm ci` links it, every examples/* package being
# an npm workspace), run the plan on a 3-node
# local cluster at smoke tier, and check every scenario ends as the plan expects:
#   S1 PASS-smoke, S2 FAIL-reproducible (a crash loses acknowledged writes), S3 FAIL-reproducible
#   (servers do not replicate). Root on Debian 12 (the local cluster is network namespaces).
# FAULTLINE_EXAMPLE_PROJECT=DIR runs it from a project where the faultline package is installed
# (npm install faultline tsx): the plan and plugin shipped in node_modules/faultline/examples/memcached.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NAME=${FAULTLINE_EXAMPLE_CLUSTER:-example-memcached}
if [ -n "${FAULTLINE_EXAMPLE_PROJECT:-}" ]; then
  cd "$FAULTLINE_EXAMPLE_PROJECT" || exit 2
  PLAN=node_modules/faultline/examples/memcached/memcached-register.md
  [ -e "$PLAN" ] || { echo "example: $PLAN missing: npm install faultline in $PWD" >&2; exit 2; }
else
  cd "$here"
  PLAN=memcached-register.md
  # Always rebuild: a dist/ left from older sources would run the example against stale code.
  (cd ../.. && npm run build >/dev/null) || exit 2
  [ -e ../../node_modules/faultline ] || { echo "example: run npm ci at the checkout root first" >&2; exit 2; }
fi
OUT=${FAULTLINE_EXAMPLE_OUT:-./test-sessions}
fl() { npx --no-install faultline "$@"; }
down() { fl cluster down --name "$NAME" >/dev/null 2>&1 || true; }
trap down EXIT
trap 'down; exit 130' INT TERM

started=$(date +%s)
table=$(mktemp)
fl --log-level warn run "$PLAN" --plugin "$(dirname "$PLAN")/plugin.ts" --local 3 --cluster-name "$NAME" --tier smoke --seed 7 \
  --yes --max-reduction-runs 2 --deadline 10m --out "$OUT" | tee "$table"
rc=${PIPESTATUS[0]}
ok=1
expect() {
  if grep -Eq "^$1 +$2( |$)" "$table"; then echo "example: $1 $2 as the plan expects"
  else echo "example: $1 did not end $2 (see the table above)" >&2; ok=0; fi
}
expect S1 PASS-smoke
expect S2 FAIL-reproducible
expect S3 FAIL-reproducible
rm -f "$table"
echo "example: $(( $(date +%s) - started ))s"
# S2 and S3 are negative controls, expected to FAIL: when every scenario meets its expectation the
# session is DONE (exit 0).
if [ "$ok" = 1 ] && [ "$rc" = 0 ]; then echo "example: every scenario ended as the plan expects"; exit 0; fi
echo "example: unexpected result (faultline run exit $rc)" >&2
exit 1
