/**
 * What runs inside a VM node. The image holds only a small boot unit; everything specific to a node
 * (name, address, host key, authorized key, apt proxy, data device) arrives at each boot through qemu's
 * fw_cfg as files under opt/faultline/, so one cached image serves every cluster and node.
 */

export const FW_CFG_PREFIX = 'opt/faultline';

/** The data device the databases keep their files on: dm-linear over the node's second disk. */
export const DATA_DEVICE = 'faultline-data';
export const DATA_MOUNT = '/var/lib/faultline';

/** Kernel modules loaded at boot: the faults that need a real kernel, and fw_cfg itself. */
export const GUEST_MODULES = ['qemu_fw_cfg', 'sch_netem', 'dm_flakey', 'veth'] as const;

/** Baked into the image: runs the node's init script from fw_cfg before sshd starts. */
export const GUEST_BOOT_SCRIPT = `#!/bin/sh
# faultline VM node: run the per-node configuration the host passed through qemu fw_cfg.
set -eu
modprobe qemu_fw_cfg
d=/sys/firmware/qemu_fw_cfg/by_name/${FW_CFG_PREFIX}
i=0
while [ ! -r "$d/init/raw" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exec /bin/sh "$d/init/raw"
`;

export const GUEST_BOOT_UNIT = `[Unit]
Description=faultline node configuration (from qemu fw_cfg)
DefaultDependencies=no
After=systemd-udevd.service systemd-remount-fs.service
Before=ssh.service network-pre.target sysinit.target
Wants=systemd-udevd.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/faultline-boot
StandardOutput=journal+console

[Install]
WantedBy=sysinit.target
`;

export interface GuestNodeConfig {
  name: string;
  address: string;
  /** Prefix length of the cluster subnet. */
  prefixLength: number;
  /** http://bridge:port/ */
  aptProxy: string;
}

/**
 * The per-node init script (fw_cfg opt/faultline/init). Its siblings hosts, authorized_keys,
 * host_key and host_key.pub are files the host wrote. The data disk gets an ext4 without a journal: a
 * dm-flakey fault then makes writes fail or vanish without aborting a journal, so healing the table
 * leaves a usable filesystem.
 */
export function guestInitScript(c: GuestNodeConfig): string {
  return `#!/bin/sh
set -eu
cfg=/sys/firmware/qemu_fw_cfg/by_name/${FW_CFG_PREFIX}
hostname ${c.name}
echo ${c.name} > /etc/hostname
cat "$cfg/hosts/raw" > /etc/hosts
ip link set lo up
ip addr flush dev eth0
ip addr add ${c.address}/${c.prefixLength} dev eth0
ip link set eth0 up
install -d -m 700 /root/.ssh
cat "$cfg/authorized_keys/raw" > /root/.ssh/authorized_keys
chmod 600 /root/.ssh/authorized_keys
rm -f /etc/ssh/ssh_host_*
cat "$cfg/host_key/raw" > /etc/ssh/ssh_host_ed25519_key
cat "$cfg/host_key.pub/raw" > /etc/ssh/ssh_host_ed25519_key.pub
chmod 600 /etc/ssh/ssh_host_ed25519_key
cat > /etc/ssh/sshd_config.d/faultline.conf <<'EOF'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
PrintMotd no
PrintLastLog no
MaxSessions 10
MaxStartups 64:30:128
EOF
echo 'Acquire::http::Proxy "${c.aptProxy}";' > /etc/apt/apt.conf.d/01faultline-proxy
# Packages never start their daemons here: faultline runs its own instances (etcd on 2379 …).
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
for m in ${GUEST_MODULES.join(' ')}; do modprobe "$m"; done
i=0
while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# --noudevsync: udev is still busy with its coldplug this early; the node is made here instead.
dmsetup create --noudevsync ${DATA_DEVICE} --table "0 $(blockdev --getsz /dev/vdb) linear /dev/vdb 0"
dmsetup mknodes ${DATA_DEVICE}
blkid /dev/mapper/${DATA_DEVICE} >/dev/null 2>&1 || mkfs.ext4 -q -O ^has_journal -L fldata /dev/mapper/${DATA_DEVICE}
mkdir -p ${DATA_MOUNT}
mount /dev/mapper/${DATA_DEVICE} ${DATA_MOUNT}
echo "faultline node ${c.name} configured"
`;
}
