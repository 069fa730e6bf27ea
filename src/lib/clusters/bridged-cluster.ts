import { mkdirSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { bridgeName } from './local-names.ts';
import { clusterDir, clustersDir } from './state-dir.ts';
import { claimSubnet } from './subnet.ts';

/** What every cluster on a bridge of its own (network namespaces, VMs) records in its state file. */
export const bridgedClusterFields = {
  name: z.string(),
  subnet: z.string(),
  prefix: z.string(),
  bridge: z.string(),
  bridgeAddress: z.string(),
  createdAt: z.string(),
};
export type BridgedCluster = z.infer<z.ZodObject<typeof bridgedClusterFields>>;

/**
 * A new bridged cluster: its state directory (private to root) made and a /24 claimed; the directory is
 * removed again when no subnet can be claimed, so a failed `cluster up` leaves nothing behind. Node i
 * (from 0) gets `<prefix>.<11 + i>`, the bridge `<prefix>.1`.
 */
export async function newBridgedCluster(name: string, requestedSubnet?: string): Promise<BridgedCluster> {
  const dir = clusterDir(name);
  mkdirSync(clustersDir(), { recursive: true, mode: 0o755 });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let subnet: Awaited<ReturnType<typeof claimSubnet>>;
  try {
    subnet = await claimSubnet(name, requestedSubnet);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name,
    subnet: subnet.cidr,
    prefix: subnet.prefix,
    bridge: bridgeName(name),
    bridgeAddress: `${subnet.prefix}.1`,
    createdAt: new Date().toISOString(),
  };
}
