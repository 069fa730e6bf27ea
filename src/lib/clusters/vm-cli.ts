import { localClusterDown } from './local.ts';
import { isVagrantCluster, vagrantClusterDown } from './vagrant-cluster.ts';
import {
  allVmClusterNames,
  clearStaleImageLock,
  hasVmLeftovers,
  isVmCluster,
  type VmClusterStatus,
  type VmClusterUpReport,
  vmClusterDown,
  vmClusterStatus,
  vmClusterUp,
} from './vm.ts';

/** What `cluster up|down|status --vm` print: the CLI only writes these lines. */

export function vmUpSummary(r: VmClusterUpReport): string[] {
  const c = r.cluster;
  return [
    `VM cluster ${c.name}: ${c.nodes.length} nodes on ${c.subnet}, ${r.accel.accel.toUpperCase()} (${r.accel.reason})`,
    `image ${r.image.key}: ${r.image.built ? 'built now' : 'cached'}, build time ${r.image.buildSeconds} s, ${r.image.packages} packages, kernel ${r.image.kernel}`,
    ...c.nodes.map((n) => {
      const m = r.memory[n.name];
      return `  ${n.name.padEnd(4)} ${n.host.padEnd(15)} boot-to-SSH ${((r.bootToSshMs[n.name] ?? 0) / 1000).toFixed(1)} s  qemu RSS ${m?.qemuRssMiB ?? '?'} MiB  guest used ${m?.guestUsedMiB ?? '?'} MiB`;
    }),
    `up in ${(r.totalMs / 1000).toFixed(1)} s; inventory ${c.inventoryPath}`,
  ];
}

export async function vmUp(o: {
  nodes: number;
  name: string;
  memory?: string;
  subnet?: string;
  rebuildImage?: boolean;
  print: (line: string) => void;
}): Promise<VmClusterUpReport> {
  return vmClusterUp({
    nodes: o.nodes,
    name: o.name,
    print: o.print,
    ...(o.memory && { memory: o.memory }),
    ...(o.subnet && { subnet: o.subnet }),
    ...(o.rebuildImage && { rebuildImage: true }),
  });
}

/** `cluster down` for one name, whichever kind it is; one line of what was removed. */
export async function downAnyCluster(name: string, o: { force?: boolean } = {}): Promise<string> {
  if (isVagrantCluster(name)) {
    const r = await vagrantClusterDown(name, (line) => process.stderr.write(`${line}\n`));
    const destroy = r.destroyError
      ? `vagrant destroy -f FAILED (${r.destroyError})`
      : 'vagrant destroy -f done';
    const proxy = r.stoppedAptProxy ? '; stopped the apt proxy' : '';
    const swept = r.swept.length ? `; removed with virsh: ${r.swept.join(', ')}` : '';
    const left = r.leftovers.length
      ? `; STILL THERE: ${r.leftovers.join(', ')}`
      : '; no domain, volume or network of it left';
    if (r.leftovers.length) process.exitCode = 1;
    return `${name}: ${destroy}${proxy}${swept}${left}`;
  }
  if (isVmCluster(name) || (await hasVmLeftovers(name))) {
    const r = await vmClusterDown(name);
    return r.existed
      ? `${name}: removed ${r.killedQemu.length} qemu processes, ${r.removedLinks.length} links${r.killedProxy ? ', the apt proxy' : ''}`
      : `${name}: nothing to remove`;
  }
  const r = await localClusterDown(name, o);
  return r.existed
    ? `${name}: removed ${r.removedNetns.length} namespaces, ${r.removedLinks.length} links, ${r.killedPids.length} processes`
    : `${name}: nothing to remove`;
}

/** VM cluster names for `down --all`, and the image lock's fate as a line. */
export function vmDownAllExtras(): { names: string[]; lockLine: string | null } {
  const lock = clearStaleImageLock();
  const lockLine = lock.removed
    ? 'removed a stale VM image build lock'
    : lock.liveOwner !== null
      ? `a VM image build is running (pid ${lock.liveOwner}); its lock goes when it ends`
      : null;
  return { names: allVmClusterNames(), lockLine };
}

export { isVmCluster, vmClusterStatus };

export function vmStatusLines(s: VmClusterStatus): string[] {
  return [
    `VM cluster ${s.name}  subnet ${s.subnet}  bridge ${s.bridge?.name} ${s.bridge?.up ? 'up' : 'DOWN'}  apt proxy ${s.aptProxy ? 'up' : 'DOWN'}  ${s.healthy ? 'healthy' : 'UNHEALTHY'}`,
    `accelerator ${s.accel ?? 'unknown'}`,
    `inventory ${s.inventoryPath}`,
    ...s.nodes.map(
      (n) =>
        `  ${n.name.padEnd(4)} ${n.address.padEnd(15)} qemu ${n.qemu ? `up ${n.qemuRssMiB ?? '?'} MiB` : 'DOWN'}  tap ${n.tap ? 'yes' : 'MISSING'}  ssh ${n.ssh ? `ok ${n.sshLatencyMs} ms` : 'FAILED'}${n.kernel ? `  kernel ${n.kernel}` : ''}${n.error ? `  (${n.error})` : ''}`,
    ),
  ];
}
