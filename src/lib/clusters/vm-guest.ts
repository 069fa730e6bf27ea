/**
 * What runs inside a VM node. The image holds only a small boot script, run as PID 1
 * (init=/usr/local/sbin/faultline-boot: no systemd, which under software emulation costs minutes per
 * boot); everything specific to a node (name, address, host key, authorized key, apt proxy, data
 * device) and the init itself arrive at each boot through qemu's fw_cfg as files under opt/faultline/,
 * so one cached image serves every cluster and node.
 */
import { sshdSettings } from './sshd-config.ts';

export const FW_CFG_PREFIX = 'opt/faultline';

/** The data device the databases keep their files on: dm-linear over the node's second disk. */
export const DATA_DEVICE = 'faultline-data';
export const DATA_MOUNT = '/var/lib/faultline';

/**
 * Kernel modules loaded at boot (no udev loads drivers here): the NIC and entropy source, the faults
 * that need a real kernel, and veth (the packet nemesis probes qdiscs on a throwaway veth pair).
 */
export const GUEST_MODULES = ['virtio_net', 'virtio_rng', 'sch_netem', 'dm_flakey', 'veth'] as const;

export const GUEST_INIT_PATH = '/usr/local/sbin/faultline-boot';

/**
 * Baked into the image. The initramfs has mounted /proc, /sys and /dev already; this loads fw_cfg and
 * becomes the node's init from it.
 */
export const GUEST_BOOT_SCRIPT = `#!/bin/sh
# faultline VM node, PID 1: run the node init the host passed through qemu fw_cfg.
modprobe qemu_fw_cfg
d=/sys/firmware/qemu_fw_cfg/by_name/${FW_CFG_PREFIX}
i=0
while [ ! -r "$d/init/raw" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exec /bin/sh "$d/init/raw"
`;

export interface GuestNodeConfig {
  name: string;
  address: string;
  /** Prefix length of the cluster subnet. */
  prefixLength: number;
  /** http://bridge:port/ */
  aptProxy: string;
}

const SSHD_CONFIG = sshdSettings({ hostKey: '/etc/ssh/ssh_host_ed25519_key' });

/**
 * The node's init (fw_cfg opt/faultline/init), running as PID 1. Its siblings hosts, authorized_keys,
 * host_key and host_key.pub are files the host wrote. The data disk gets an ext4 without a journal: a
 * dm-flakey fault then makes writes fail or vanish without aborting a journal, so healing the table
 * leaves a usable filesystem. Packages never start their daemons (policy-rc.d): faultline runs its own
 * instances. Last, sshd starts and PID 1 stays in a loop whose waits reap orphans.
 */
export function guestInitScript(c: GuestNodeConfig): string {
  const lines = [
    '#!/bin/sh',
    'set -eu',
    'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `cfg=/sys/firmware/qemu_fw_cfg/by_name/${FW_CFG_PREFIX}`,
    'mountpoint -q /proc || mount -t proc proc /proc',
    'mountpoint -q /sys || mount -t sysfs sysfs /sys',
    'mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev',
    'mkdir -p /dev/pts /dev/shm',
    'mount -t devpts -o gid=5,mode=620 devpts /dev/pts',
    'mount -t tmpfs -o mode=1777 tmpfs /dev/shm',
    'mount -t tmpfs -o mode=755 tmpfs /run',
    'mkdir -p /run/lock /run/sshd',
    'mount -o remount,rw /',
    `for m in ${GUEST_MODULES.join(' ')}; do modprobe "$m"; done`,
    `hostname ${c.name}`,
    `echo ${c.name} > /etc/hostname`,
    'cat "$cfg/hosts/raw" > /etc/hosts',
    'ip link set lo up',
    'i=0',
    'while ! ip link show eth0 >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done',
    `ip addr add ${c.address}/${c.prefixLength} dev eth0`,
    'ip link set eth0 up',
    'install -d -m 700 /root/.ssh',
    'cat "$cfg/authorized_keys/raw" > /root/.ssh/authorized_keys',
    'chmod 600 /root/.ssh/authorized_keys',
    'rm -f /etc/ssh/ssh_host_*',
    'cat "$cfg/host_key/raw" > /etc/ssh/ssh_host_ed25519_key',
    'cat "$cfg/host_key.pub/raw" > /etc/ssh/ssh_host_ed25519_key.pub',
    'chmod 600 /etc/ssh/ssh_host_ed25519_key',
    `printf '%s\\n' ${SSHD_CONFIG.map((l) => `'${l}'`).join(' ')} > /etc/ssh/sshd_config.d/faultline.conf`,
    `echo 'Acquire::http::Proxy "${c.aptProxy}";' > /etc/apt/apt.conf.d/01faultline-proxy`,
    `printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d`,
    'chmod 755 /usr/sbin/policy-rc.d',
    // Test nodes: dpkg skips its fsyncs, which an emulated disk makes slow (packages install faster).
    'echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/faultline-unsafe-io',
    'i=0',
    'while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done',
    `dmsetup create ${DATA_DEVICE} --table "0 $(blockdev --getsz /dev/vdb) linear /dev/vdb 0"`,
    `dmsetup mknodes ${DATA_DEVICE}`,
    `blkid /dev/mapper/${DATA_DEVICE} >/dev/null 2>&1 || mkfs.ext4 -q -O ^has_journal -L fldata /dev/mapper/${DATA_DEVICE}`,
    `mkdir -p ${DATA_MOUNT}`,
    `mount /dev/mapper/${DATA_DEVICE} ${DATA_MOUNT}`,
    '/usr/sbin/sshd -E /run/sshd.log',
    `echo "faultline node ${c.name} up"`,
    'set +e',
    "trap '' TERM INT HUP",
    '# PID 1: orphans are reparented here; waiting for each sleep also reaps them.',
    'while :; do sleep 5; done',
  ];
  return `${lines.join('\n')}\n`;
}
