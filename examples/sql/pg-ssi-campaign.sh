#!/usr/bin/env bash
# A bounded campaign against PostgreSQL SERIALIZABLE: RUNS `faultline test` runs of list-append on a
# one-node local cluster, each SECONDS long, with the server logging every statement it completes
# (FAULTLINE_PG_LOG_STATEMENTS=1). Per run it prints the verdict, the transactions (ok / fail / info),
# and the server's own view: how many committed transactions the server says ran at SERIALIZABLE
# (extras.txn.isolation), how many BEGINs the server logged against the ops invoked (one BEGIN per op:
# no transaction runs outside the client's control), and the server's warnings of a BEGIN inside an open
# transaction (none: no connection mixed two ops' statements). A run that is not valid keeps its session
# (history, server log) and has the reported cycle checked against the server's snapshots
# (pg-cycle-snapshots.ts); a valid run's session is deleted (the server log is ~30 MB a minute).
#
# Usage (root, from the checkout root):
#   examples/sql/pg-ssi-campaign.sh RUNS SECONDS CONCURRENCY RATE FIRST_SEED [CLUSTER] [OUT]
# e.g. examples/sql/pg-ssi-campaign.sh 10 90 20 1000 4001 sql-ssi /tmp/ssi
# The cluster stays up for the next campaign: faultline cluster down --name CLUSTER.
set -euo pipefail
runs=${1:?runs} seconds=${2:?seconds} conc=${3:?concurrency} rate=${4:?rate} seed0=${5:?first seed}
cluster=${6:-sql-ssi} out=${7:-/tmp/pg-ssi-campaign}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
total_ok=0 total_txns=0 failed=0
for ((i = 0; i < runs; i++)); do
  seed=$((seed0 + i))
  FAULTLINE_PG_LOG_STATEMENTS=1 "$root/bin/faultline.js" test --db postgres --plugin "$root/examples/sql/plugin.ts" \
    -w list-append --local 1 --cluster-name "$cluster" --time-limit "${seconds}s" --rate "$rate" \
    --concurrency "$conc" --seed "$seed" --out "$out/sessions" >"$out/run-$seed.log" 2>&1 && rc=0 || rc=$?
  dir=$(sed -n 's/^run directory: //p' "$out/run-$seed.log")
  if [[ -z "$dir" ]]; then
    echo "seed $seed: no run directory (exit $rc); see $out/run-$seed.log"
    failed=$((failed + 1))
    continue
  fi
  # ok / fail / info, committed transactions by the server's isolation level, and ops invoked.
  counts=$(jq -r -s '
    [.[] | select(.type != "invoke")] as $c
    | ([.[] | select(.type == "invoke")] | length) as $inv
    | ($c | map(select(.type == "ok")) | length) as $ok
    | ($c | map(select(.type == "fail")) | length) as $fail
    | ($c | map(select(.type == "info")) | length) as $info
    | ($c | map(select(.type == "ok" and .txn.isolation == "serializable")) | length) as $ser
    | "\($inv) \($ok) \($fail) \($info) \($ser)"' "$dir/history.jsonl")
  read -r inv ok fail info ser <<<"$counts"
  begins=$(grep -c 'statement: BEGIN ISOLATION LEVEL SERIALIZABLE$' "$dir/n1/postgres.log" || true)
  others=$(grep -E 'statement: (BEGIN|START TRANSACTION)' "$dir/n1/postgres.log" | grep -vc 'BEGIN ISOLATION LEVEL SERIALIZABLE$' || true)
  # A BEGIN inside an open transaction: a connection running two ops' statements. ("there is no
  # transaction in progress" is expected: the client's ROLLBACK after a COMMIT refused with 40001.)
  nested=$(grep -cE 'WARNING: +there is already a transaction in progress' "$dir/n1/postgres.log" || true)
  verdict=$(sed -n 's/^verdict: //p' "$out/run-$seed.log")
  total_ok=$((total_ok + ok))
  total_txns=$((total_txns + inv))
  echo "seed $seed: $verdict (exit $rc); txns $inv (ok $ok / fail $fail / info $info); server: $ser of $ok committed at serializable, $begins BEGIN SERIALIZABLE for $inv ops, $others other BEGIN, $nested BEGIN inside a transaction"
  if [[ "$verdict" != valid ]]; then
    failed=$((failed + 1))
    grep -E '^elle' "$out/run-$seed.log" || true
    continue
  fi
  rm -rf "$dir"
done
echo "campaign: $runs runs, $total_txns transactions, $total_ok committed, $failed not valid"
