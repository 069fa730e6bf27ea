#!/usr/bin/env bash
# CI's Vagrant step, sized for the time CI has left beside the VM step: `vagrant validate` on the shipped
# Vagrantfile, and `faultline cluster vagrant-box` builds a box (reusing the VM step's node image) whose
# tar holds a qcow2 box.img, libvirt metadata and a Vagrantfile. Booting Vagrant VMs under software
# emulation takes longer than CI's budget: the full suite (box, `cluster up --vagrant`, sudo, a partition
# on the private network, kill -9 and heal, `cluster down`) runs by hand with `npm run test:vagrant`.
set -uo pipefail
cd "$(dirname "$0")/.."
export FAULTLINE_FROM_SOURCE=1
skip() { echo "test:vagrant-ci: SKIPPED: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "the box build needs root (loop devices, chroot)"
bash scripts/install-vagrant-deps.sh || skip "the vagrant/libvirt/extlinux packages cannot be installed"
fail() { echo "test:vagrant-ci: FAILED: $*" >&2; exit 1; }
start=$(date +%s)
(cd vagrant && vagrant validate) || fail "vagrant validate rejects vagrant/Vagrantfile"
(cd vagrant && FAULTLINE_LIBVIRT_DRIVER=qemu FAULTLINE_BOX=faultline/bookworm FAULTLINE_NODES=2 vagrant validate) \
  || fail "vagrant validate rejects vagrant/Vagrantfile with the settings cluster up --vagrant uses"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node bin/faultline.js cluster vagrant-box --out "$work/faultline.box" || fail "cluster vagrant-box failed"
[ "$(tar -tf "$work/faultline.box" | sort | tr '\n' ' ')" = "Vagrantfile box.img metadata.json " ] \
  || fail "the box does not hold exactly Vagrantfile, box.img, metadata.json"
tar -xOf "$work/faultline.box" metadata.json | grep -q '"provider":"libvirt"' || fail "metadata.json names no libvirt provider"
tar -xf "$work/faultline.box" -C "$work" box.img
qemu-img info "$work/box.img" | grep -q '^file format: qcow2' || fail "box.img is not qcow2"
echo "test:vagrant-ci: vagrant validate ok; box $(du -m "$work/faultline.box" | cut -f1) MiB built and checked in $(($(date +%s) - start)) s"
