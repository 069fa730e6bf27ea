#!/usr/bin/env bash
# RabbitMQ end to end, through faultline's public API only: build faultline (the checkout's `npm ci` links this example, an npm workspace), run the
# plan on a 3-node local cluster at smoke tier (the brokers form one cluster, a quorum queue takes a broker
# kill) and check S1 ends PASS-smoke. Root on Debian 12 with rabbitmq-server (scripts/install-deps.sh).
set -uo pipefail
cd "$(dirname "$0")"
NAME=${FAULTLINE_EXAMPLE_CLUSTER:-example-rabbitmq}
OUT=${FAULTLINE_EXAMPLE_OUT:-./test-sessions}

(cd ../.. && npm run build >/dev/null) || exit 2
[ -e ../../node_modules/faultline ] || { echo "example: run npm ci at the checkout root first" >&2; exit 2; }
npx --no-install tsc -p tsconfig.json || exit 2
fl() { npx --no-install faultline "$@"; }
down() { fl cluster down --name "$NAME" >/dev/null 2>&1 || true; }
trap down EXIT
trap 'down; exit 130' INT TERM

started=$(date +%s)
table=$(mktemp)
fl --log-level warn run rabbitmq-queue.md --plugin ./plugin.ts --local 3 --cluster-name "$NAME" --tier smoke --seed 3 \
  --yes --max-reduction-runs 1 --deadline 8m --out "$OUT" | tee "$table"
rc=${PIPESTATUS[0]}
echo "example: $(( $(date +%s) - started ))s"
if grep -Eq '^S1 +PASS-smoke( |$)' "$table" && [ "$rc" = 0 ]; then
  rm -f "$table"; echo "example: S1 PASS-smoke as the plan expects"; exit 0
fi
rm -f "$table"
echo "example: S1 did not end PASS-smoke (faultline run exit $rc; see the table above)" >&2
exit 1
