#!/usr/bin/env bash
# Debian packages faultline's local cluster, nemeses, SUT adapters and examples (memcached, PostgreSQL,
# MariaDB/Galera, ZooKeeper, NATS, FUSE) need on this host, and Chromium for the page tests (driven by
# playwright-core; no browser download). Idempotent.
set -euo pipefail
pkgs=(iproute2 iptables openssh-server openssh-client procps psmisc util-linux etcd-server etcd-client redis-server redis-tools memcached faketime libfaketime kmod e2fsprogs libxml2-utils chromium postgresql-15 gdb mariadb-server galera-4 rsync fuse3 python3-fusepy zookeeperd nats-server rabbitmq-server sudo openssl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts packaged daemons on install; faultline runs its own per-node instances instead.
for svc in etcd redis-server memcached postgresql mariadb ssh zookeeper nats-server rabbitmq-server; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done
