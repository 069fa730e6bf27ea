#!/usr/bin/env bash
# Debian packages VM clusters (`faultline cluster up --vm`) need on this host, plus any packages given
# as arguments (scripts/install-vagrant-deps.sh adds Vagrant's). Idempotent.
set -euo pipefail
pkgs=(qemu-system-x86 qemu-utils debootstrap e2fsprogs iproute2 openssh-client "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
