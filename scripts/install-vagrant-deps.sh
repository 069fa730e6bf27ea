#!/usr/bin/env bash
# Debian packages Vagrant clusters (`faultline cluster vagrant-box`, `cluster up --vagrant`) need on this
# host: the VM cluster's (the box is built from its image), Vagrant with the libvirt provider, libvirt
# (dnsmasq serves the management network's DHCP), and what the box build uses (sfdisk, extlinux and its
# MBR). Idempotent. libvirtd must be running: systemd starts it; on a host without systemd,
# `virtlogd -d && libvirtd -d` (after dnsmasq-base is installed).
set -euo pipefail
exec bash "$(dirname "$0")/install-vm-deps.sh" vagrant vagrant-libvirt libvirt-daemon-system libvirt-clients \
  dnsmasq-base fdisk extlinux syslinux-common
