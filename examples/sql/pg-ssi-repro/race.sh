#!/usr/bin/env bash
# The PostgreSQL 15 SERIALIZABLE G2-item made deterministic (race.ts) on a scratch server on 127.0.0.1:
# the race (T3's COMMIT held by gdb on entry to ReleasePredicateLocks while T1 takes its snapshot and T2
# commits) and its two controls (no breakpoint; T3 held but T2 committing after it), ROUNDS times each.
# Needs root (gdb attaches to a backend) and gdb. The server is stopped and removed at the end.
#
# Usage: examples/sql/pg-ssi-repro/race.sh [ROUNDS] [PORT]
# Exit: 0 the race committed the cycle every round and no control did; 1 otherwise; 2 setup failed.
set -euo pipefail
rounds=${1:-3} port=${2:-55433}
[[ "$rounds" =~ ^[0-9]+$ && "$port" =~ ^[0-9]+$ ]] || { echo 'usage: race.sh [ROUNDS] [PORT]' >&2; exit 2; }
command -v gdb >/dev/null || { echo 'race.sh needs gdb (apt-get install gdb)' >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo 'race.sh needs root (gdb attaches to a PostgreSQL backend)' >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scratch-server.sh
source "$here/scratch-server.sh"
start_scratch_server "$port"
echo "$version"
cd "$here/.."
expected=0 unexpected=0
for ((i = 1; i <= rounds; i++)); do
  for mode in race --control --pivot-after; do
    flag=()
    [[ "$mode" != race ]] && flag=("$mode")
    rc=0
    npx tsx pg-ssi-repro/race.ts 127.0.0.1 "$port" "${flag[@]}" | sed "s/^/[$i $mode] /" || rc=${PIPESTATUS[0]}
    [[ "$rc" -eq 2 ]] && exit 2
    if [[ ("$mode" == race && "$rc" -eq 0) || ("$mode" != race && "$rc" -eq 1) ]]; then
      expected=$((expected + 1))
    else
      unexpected=$((unexpected + 1))
    fi
  done
done
echo "rounds: $rounds; outcomes as expected (race: cycle committed; controls: T1 aborted): $expected of $((3 * rounds))"
[[ "$unexpected" -eq 0 ]]
