#!/usr/bin/env bash
# The demo: install what the local cluster needs (Debian packages), bring up 5 local nodes, run
# plans/etcd-register.md at smoke tier (S1 smoke, S2 the libfaketime clock scenario, S3 the negative
# control), print the verdict table and the report path, and tear the cluster down whatever happens.
# It passes when every scenario ends with the verdict the plan expects:
#   S1 PASS-smoke, S2 INCONCLUSIVE-fault-not-proven (etcd is a Go binary), S3 FAIL-reproducible.
set -uo pipefail
cd "$(dirname "$0")/.."
export FAULTLINE_FROM_SOURCE=1
NAME=${FAULTLINE_DEMO_CLUSTER:-demo}
NODES=${FAULTLINE_DEMO_NODES:-5}
OUT=${FAULTLINE_DEMO_OUT:-./test-sessions}
SEED=${FAULTLINE_DEMO_SEED:-7}
fl() { node bin/faultline.js "$@"; }

if [ "$(id -u)" != 0 ]; then
  echo "demo: the local cluster is built from network namespaces; run as root" >&2
  exit 2
fi
bash scripts/install-deps.sh || exit 2

down() { fl cluster down --name "$NAME" >/dev/null 2>&1 || true; }
trap down EXIT
trap 'echo "demo: interrupted; tearing the cluster down" >&2; down; exit 130' INT TERM
down # a leftover from an earlier, killed demo

table=$(mktemp)
fl --log-level warn run plans/etcd-register.md --local "$NODES" --cluster-name "$NAME" --tier smoke --seed "$SEED" \
  --yes --max-reduction-runs 2 --deadline 15m --out "$OUT" | tee "$table"
rc=${PIPESTATUS[0]}

expect() {
  if grep -Eq "^$1 +$2( |$)" "$table"; then echo "demo: $1 $2 as the plan expects"
  else echo "demo: $1 did not end $2 (see the table above)" >&2; ok=0; fi
}
ok=1
expect S1 PASS-smoke
expect S2 INCONCLUSIVE-fault-not-proven
expect S3 FAIL-reproducible
rm -f "$table"
# The session verdict is FAIL (exit 1) because the negative control S3 must FAIL: that is the expected outcome.
if [ "$ok" = 1 ] && [ "$rc" = 1 ]; then
  echo "demo: every scenario ended as the plan expects"
  exit 0
fi
echo "demo: unexpected result (faultline run exit $rc)" >&2
exit 1
