#!/usr/bin/env bash
# The demo: install what the local cluster needs (Debian packages), bring up 5 local nodes, run
# plans/etcd-register.md at smoke tier (S1 smoke, S2 the libfaketime clock scenario, S3 the negative
# control), print the verdict table and the report path, and tear the cluster down whatever happens.
# The plan declares each scenario's expected verdict (S1 PASS-smoke; S2 INCONCLUSIVE-fault-not-proven on
# a shared clock, since libfaketime cannot move a Go binary's clock; S3 FAIL-reproducible, the negative
# control), and `faultline run` exits 0 exactly when every scenario meets its expectation.
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

fl --log-level warn run plans/etcd-register.md --local "$NODES" --cluster-name "$NAME" --tier smoke --seed "$SEED" \
  --yes --max-reduction-runs 2 --deadline 15m --out "$OUT"
rc=$?
if [ "$rc" = 0 ]; then
  echo "demo: every scenario ended as the plan expects"
  exit 0
fi
echo "demo: unexpected result (faultline run exit $rc; the Expected column above says which row)" >&2
exit 1
