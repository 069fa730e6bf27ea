#!/usr/bin/env bash
# Debian packages Vagrant clusters (`faultline cluster vagrant-box`, `cluster up --vagrant`) need on this
# host: Vagrant with the libvirt provider, libvirt (dnsmasq serves the management network's DHCP), and
# what the box build uses (sfdisk, extlinux and its MBR). Idempotent. libvirtd must be running: systemd
# starts it; on a host without systemd, `virtlogd -d && libvirtd -d`.
set -euo pipefail
bash "$(dirname "$0")/install-vm-deps.sh"
pkgs=(vagrant vagrant-libvirt libvirt-daemon-system libvirt-clients dnsmasq-base fdisk extlinux syslinux-common)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
