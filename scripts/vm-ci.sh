#!/usr/bin/env bash
# CI's VM step: the VM smoke (`npm run test:vm:smoke`: a 3-VM cluster, etcd through the apt proxy, one
# netem fault, a settime clock fault, dm-flakey, cluster down) runs only when this host can boot a VM node
# within budget; otherwise it prints why it skips and exits 0. A smoke that runs and fails fails CI. The
# budget (15 minutes by default) keeps CI under an hour: on a clean host the image build alone takes 9–17
# minutes, so there the boot probe (image build, one VM to a verified SSH login) is the smoke. The whole
# suite (Redis, every netem behaviour, the demo's clock scenario) runs with `npm run test:vm`.
#   1. root, /dev/net/tun, and the qemu/debootstrap packages installable;
#   2. the boot probe: build (or reuse) the node image and boot one VM to a verified SSH login within
#      FAULTLINE_VM_PROBE_LIMIT_S (image build included), boot-to-SSH within FAULTLINE_VM_BOOT_LIMIT_S;
#   3. the suite, if at least FAULTLINE_VM_SUITE_MIN_S of FAULTLINE_VM_BUDGET_S remain, under a timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET_S=${FAULTLINE_VM_BUDGET_S:-900}
PROBE_LIMIT_S=${FAULTLINE_VM_PROBE_LIMIT_S:-840}
# A quiet host boots a TCG node to SSH in ~30 s; at 90 s the host is too loaded for the smoke's budget
# (three boots, an apt install and four faults over SSH to emulated CPUs).
BOOT_LIMIT_S=${FAULTLINE_VM_BOOT_LIMIT_S:-90}
SUITE_MIN_S=${FAULTLINE_VM_SUITE_MIN_S:-420}
export FAULTLINE_FROM_SOURCE=1
start=$(date +%s)
skip() { echo "test:vm: SKIPPED: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "VM clusters need root (tap devices, a bridge, debootstrap)"
[ -e /dev/net/tun ] || skip "/dev/net/tun is missing: no tap devices on this host"
bash scripts/install-vm-deps.sh || skip "qemu-system-x86, qemu-utils or debootstrap cannot be installed"

probe_state=$(mktemp -d)
probe_down() { FAULTLINE_STATE_DIR=$probe_state node bin/faultline.js cluster down --name vm-ci-probe >/dev/null 2>&1; rm -rf "$probe_state"; }
trap probe_down EXIT
echo "test:vm: boot probe (one VM node; image build included; limit ${PROBE_LIMIT_S}s)"
if ! out=$(FAULTLINE_STATE_DIR=$probe_state timeout "$PROBE_LIMIT_S" node bin/faultline.js cluster up --vm --nodes 1 --name vm-ci-probe 2>&1); then
  skip "the boot probe did not bring a VM up within ${PROBE_LIMIT_S}s: $(echo "$out" | tail -2 | tr '\n' ' ')"
fi
echo "$out" | grep -E 'accelerator|image|boot-to-SSH'
boot=$(echo "$out" | sed -n 's/.*boot-to-SSH \([0-9.]*\) s.*/\1/p' | head -1)
probe_down
trap - EXIT
[ -n "$boot" ] || skip "the boot probe printed no boot-to-SSH time"
if awk -v b="$boot" -v l="$BOOT_LIMIT_S" 'BEGIN { exit !(b > l) }'; then
  skip "a VM node needs ${boot}s to boot to SSH here (limit ${BOOT_LIMIT_S}s): too slow for the suite's budget"
fi
left=$((BUDGET_S - ($(date +%s) - start)))
[ "$left" -ge "$SUITE_MIN_S" ] || skip "only ${left}s of the ${BUDGET_S}s VM budget left after the probe (the smoke needs ${SUITE_MIN_S}s)"
echo "test:vm: a VM boots to SSH in ${boot}s; running the VM smoke (limit ${left}s)"
timeout --kill-after=30 "$left" npm run test:vm:smoke
rc=$?
# A killed suite cannot run its teardown: remove its VMs (found by their qemu marker and tap names).
node bin/faultline.js cluster down --name vm-suite >/dev/null 2>&1 || true
[ "$rc" = 124 ] && echo "test:vm: the VM smoke overran its ${left}s budget" >&2
exit "$rc"
