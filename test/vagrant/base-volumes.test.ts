import { execFileSync } from 'node:child_process';
import test from 'ava';
import { removeUnusedBaseVolumes } from '../../src/lib/clusters/vagrant-box.ts';

/**
 * A re-added box leaves its earlier base volumes in libvirt's default pool (vagrant-libvirt uploads the
 * new box under a new name): `addVagrantBox` removes those no volume is backed by and keeps one a
 * cluster's disk rests on. Real libvirt volumes of a throwaway box name (a few KiB each); needs a running
 * libvirtd with its default pool, skipped with the reason otherwise.
 */
const BOX = `fltest${process.pid}/box`;
const prefix = `fltest${process.pid}-VAGRANTSLASH-box_vagrant_box_image_0_`;
const virsh = (...args: string[]) =>
  execFileSync('virsh', ['-c', 'qemu:///system', ...args], { encoding: 'utf8', stdio: 'pipe' });

let reason: string | null = null;
try {
  virsh('pool-info', 'default');
} catch {
  reason = "libvirt's default pool is not reachable (libvirtd not running, or not root)";
}
const ltest = reason ? test.skip : test;
const names = {
  unused: `${prefix}1_box.img`,
  inUse: `${prefix}2_box.img`,
  disk: `fltest${process.pid}_n1.img`,
};

test.after.always(() => {
  if (reason) return;
  for (const v of [names.disk, names.unused, names.inUse])
    try {
      virsh('vol-delete', v, '--pool', 'default');
    } catch {}
});

ltest(
  `a re-added box's unused base volumes are removed, one a disk rests on stays${reason ? ` (skipped: ${reason})` : ''}`,
  async (t) => {
    virsh('vol-create-as', 'default', names.unused, '1M', '--format', 'qcow2');
    virsh('vol-create-as', 'default', names.inUse, '1M', '--format', 'qcow2');
    const base = virsh('vol-path', '--pool', 'default', names.inUse).trim();
    virsh(
      'vol-create-as',
      'default',
      names.disk,
      '1M',
      '--format',
      'qcow2',
      '--backing-vol',
      base,
      '--backing-vol-format',
      'qcow2',
    );
    const removed = await removeUnusedBaseVolumes(BOX);
    t.deepEqual(removed, [names.unused]);
    const left = virsh('vol-list', 'default');
    t.false(left.includes(names.unused));
    t.true(left.includes(names.inUse), 'the base volume a disk rests on stays');
    t.true(left.includes(names.disk));
  },
);
