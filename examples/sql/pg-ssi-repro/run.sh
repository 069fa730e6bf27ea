#!/usr/bin/env bash
# PostgreSQL SERIALIZABLE under faultline's list-append workload, without faultline: a scratch server on
# 127.0.0.1 in a temporary data directory (faultline's server settings), pgbench running txn.pgbench
# from CLIENTS connections for SECONDS, then cycles.ts over the log of committed transactions and the
# final table. The server is stopped and its data directory removed at the end (also on error or
# Ctrl-C); the dumps, pgbench's output and the analysis stay in OUT.
#
# Usage (root, or a user that can run initdb):
#   examples/sql/pg-ssi-repro/run.sh SECONDS [CLIENTS] [RATE] [MODE] [PORT] [OUT]
#     CLIENTS  connections (default 10, as plans/postgres-isolation.md S2)
#     RATE     transactions per second over all clients, 0 = as fast as possible (default 0)
#     MODE     begin-serializable (BEGIN ISOLATION LEVEL SERIALIZABLE, as faultline's client; default),
#              default-serializable (plain BEGIN, the server's default_transaction_isolation=serializable),
#              begin-repeatable-read (the control: snapshot isolation, which allows G2-item)
#     PORT     default 55432; OUT default /tmp/pg-ssi-repro
#   KEYS=1..3 (active keys, default 3) and MOPS=1..4 (most micro-ops per transaction, default 4) in the
#   environment narrow the workload below faultline's.
# Exit: 0 no cycle, 1 a cycle or an inconsistency was found, 2 the run itself failed.
set -euo pipefail
seconds=${1:?usage: run.sh SECONDS [CLIENTS] [RATE] [MODE] [PORT] [OUT]}
clients=${2:-10} rate=${3:-0} mode=${4:-begin-serializable} port=${5:-55432} out=${6:-/tmp/pg-ssi-repro}
here=$(cd "$(dirname "$0")" && pwd)
for n in "$seconds" "$clients" "$rate" "$port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "not a number: $n" >&2; exit 2; }
done
keys=${KEYS:-3} mops=${MOPS:-4}
[[ "$keys" =~ ^[1-3]$ && "$mops" =~ ^[1-4]$ ]] || { echo "KEYS must be 1..3, MOPS 1..4" >&2; exit 2; }
case "$mode" in
  begin-serializable) begin='BEGIN ISOLATION LEVEL SERIALIZABLE;' server_iso=() ;;
  default-serializable) begin='BEGIN;' server_iso=(-c default_transaction_isolation=serializable) ;;
  begin-repeatable-read) begin='BEGIN ISOLATION LEVEL REPEATABLE READ;' server_iso=() ;;
  *) echo "unknown mode: $mode" >&2; exit 2 ;;
esac
mkdir -p "$out"
# shellcheck source=scratch-server.sh
source "$here/scratch-server.sh"
start_scratch_server "$port" "${server_iso[@]}"
"${psql[@]}" -f "$here/schema.sql"
sed "s/^BEGIN ISOLATION LEVEL SERIALIZABLE;\$/$begin/" "$here/txn.pgbench" >"$work/txn.pgbench"
grep -qxF "$begin" "$work/txn.pgbench"

throttle=()
[[ "$rate" -gt 0 ]] && throttle=(-R "$rate")
echo "$version; $mode, $clients clients, ${seconds}s, rate $rate (0: unthrottled), $keys keys, 1-$mops micro-ops"
# pgbench ends a transaction at a serialization failure or deadlock (counted as failed, not retried:
# --max-tries 1) and goes on with the next; any other error aborts that client, which the summary shows.
pgbench -h 127.0.0.1 -p "$port" -U postgres -n -M extended -c "$clients" -j 2 -T "$seconds" -P 60 -D keys="$keys" -D mops="$mops" \
  "${throttle[@]}" -f "$work/txn.pgbench" postgres >"$out/pgbench.out" 2>&1 || true
grep -E '^(number of (transactions actually processed|failed transactions)|tps|latency average)|aborted' "$out/pgbench.out" || true
if grep -q 'aborted in command' "$out/pgbench.out"; then
  grep -m3 'aborted in command' "$out/pgbench.out"
fi
"${psql[@]}" -c "\\copy txlog TO '$out/txlog.tsv'" -c "\\copy lists TO '$out/lists.tsv'"
echo "$version" >"$out/version.txt"
cd "$here/.."
npx tsx pg-ssi-repro/cycles.ts "$out/txlog.tsv" "$out/lists.tsv" | tee "$out/cycles.txt"
exit "${PIPESTATUS[0]}"
