#!/usr/bin/env bash
# The default suite on a plain clone: the reference corpora (Porcupine, Elle, Jepsen histories) live
# beside this project's CI checkout, never in the repository. Copy the checkout's files to a directory
# with no ../shared, and run there every test file that reads a corpus or stood in for one: they must
# pass, each conformance suite saying once that it was skipped and why. Then the same files with
# FAULTLINE_REQUIRE_FIXTURES=1 must fail (CI can never skip silently). node_modules is linked, not
# reinstalled: what is checked is which files the suite reads, not the install.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/faultline-clone-XXXXXX)
trap 'rm -rf "$work"' EXIT
clone=$work/checkout
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  [ -e "$f" ] || continue
  mkdir -p "$clone/$(dirname "$f")"
  cp -P "$f" "$clone/$f"
done
ln -s "$root/node_modules" "$clone/node_modules"
[ ! -e "$work/shared" ] || { echo "test-clone: $work/shared exists" >&2; exit 1; }

mapfile -t files < <(cd "$clone" && grep -rlE "helpers/(conformance|failing-session|kv-history)\.ts" test --include='*.test.ts' | sort)
suites=$(cd "$clone" && grep -lE "conformance\(" "${files[@]}" | wc -l)
echo "test-clone: ${#files[@]} test files, $suites with a conformance suite, in $clone (no ../shared)"

out=$work/run.tap
set +e
(cd "$clone" && env -u FAULTLINE_FIXTURES -u FAULTLINE_REQUIRE_FIXTURES node scripts/test.mjs "${files[@]}") | tee "$out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || { echo "test-clone: the suite failed without ../shared (exit $rc)" >&2; exit 1; }
skips=$(grep -c '^ok .*conformance suite ".*" skipped: no reference fixtures.* # SKIP' "$out" || true)
[ "$skips" = "$suites" ] || { echo "test-clone: $skips skip lines for $suites conformance suites" >&2; exit 1; }
echo "test-clone: passed without ../shared; $skips conformance suites skipped, each said so once"

# FAULTLINE_REQUIRE_FIXTURES=1: the same absence is a failure (one file is enough to show it).
set +e
(cd "$clone" && env -u FAULTLINE_FIXTURES FAULTLINE_REQUIRE_FIXTURES=1 npx ava --tap test/linearizability/fixtures.test.ts) >"$out" 2>&1
rc=$?
set -e
if [ "$rc" = 0 ] || ! grep -q 'FAULTLINE_REQUIRE_FIXTURES=1' "$out"; then
  cat "$out" >&2
  echo "test-clone: FAULTLINE_REQUIRE_FIXTURES=1 did not turn the skip into a failure" >&2
  exit 1
fi
echo "test-clone: with FAULTLINE_REQUIRE_FIXTURES=1 the missing corpora fail the suite"
