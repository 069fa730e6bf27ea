#!/usr/bin/env bash
# The published package, used as a user would: `npm pack` this checkout, install the tarball (and tsx,
# which TypeScript plugins need at run time) into an empty project, with nothing else: dependencies come
# from the npm registry or its cache. There, `faultline plan check` every shipped plan (plans/*.md and
# the example plans in examples/*/) must exit 0, given the plugins their `module:` lines name (the example
# plugins ship in the package, their packages are faultline's optional dependencies). As root, the memcached example plan then runs from the
# installed package on a 3-node local cluster (examples/memcached/run.sh with FAULTLINE_EXAMPLE_PROJECT),
# every scenario ending as the plan expects. FAULTLINE_PACKAGE_NO_RUN=1 stops after the plan checks.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/faultline-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
npm pack --silent --pack-destination "$work" >"$work/pack.out"
tarball="$work/$(tail -n1 "$work/pack.out")"
t1=$(date +%s)
echo "package-ci: packed $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB) in $((t1 - t0))s"

project="$work/project"
mkdir "$project"
echo '{"name":"faultline-user","private":true,"type":"module"}' >"$project/package.json"
(cd "$project" && npm install --prefer-offline --no-audit --no-fund --silent "$tarball" tsx)
t2=$(date +%s)
fl() { (cd "$project" && npx --no-install faultline "$@"); }
echo "package-ci: installed into an empty project in $((t2 - t1))s: faultline $(fl --version)"

pkg="$project/node_modules/faultline"
failed=0
checked=0
for plan in "$pkg"/plans/*.md "$pkg"/examples/*/*.md; do
  [ -e "$plan" ] || continue
  checked=$((checked + 1))
  rel=${plan#"$project"/}
  # A plan is data: its `module:` bindings are imported only when the command line names them too, as
  # plan check's own error says (--plugin FILE, relative to the plan).
  plugins=()
  while read -r mod; do
    [ -n "$mod" ] && plugins+=(--plugin "$(dirname "$rel")/$mod")
  done < <(sed -n 's/^module: *\([^ #]*\).*/\1/p' "$plan" | sort -u)
  if out=$(fl plan check "${plugins[@]}" "$rel" 2>&1); then
    echo "package-ci: plan check $rel: exit 0"
  else
    rc=$?
    failed=$((failed + 1))
    echo "package-ci: plan check $rel: exit $rc" >&2
    echo "$out" | sed 's/^/  /' >&2
  fi
done
echo "package-ci: $checked shipped plans checked, $failed failed ($(($(date +%s) - t2))s)"
[ "$checked" -ge 9 ] || { echo "package-ci: expected at least 9 shipped plans, found $checked" >&2; exit 1; }
[ "$failed" = 0 ] || exit 1

if [ "${FAULTLINE_PACKAGE_NO_RUN:-}" = 1 ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "package-ci: the memcached plan needs a local cluster (network namespaces): not root, not run"
  exit 0
fi
t3=$(date +%s)
FAULTLINE_EXAMPLE_PROJECT=$project FAULTLINE_EXAMPLE_CLUSTER=${FAULTLINE_PACKAGE_CLUSTER:-package-memcached} \
  bash "$pkg/examples/memcached/run.sh"
echo "package-ci: the memcached plan ran from the installed package in $(($(date +%s) - t3))s"
