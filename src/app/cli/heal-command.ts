import { formatHealReport, healAll } from '../../../nemeses/heal.ts';
import { FaultLedger, readLedger } from '../../../nemeses/ledger.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import { hostKeyPolicyFrom, remoteOptionsFor, type SshCliOptions } from '../../core/control/connect.ts';
import { type Inventory, loadInventory } from '../../core/control/inventory.ts';
import { connectRemote, type RemoteOptions } from '../../core/control/ssh-remote.ts';
import type { NodeSpec } from '../../core/control/types.ts';
import { UserError } from '../../core/util/errors.ts';

/** The `faultline heal` action: returns the exit code (0 every node clean, 1 not clean). */
export async function runHeal(
  opts: {
    ledger?: string;
    inventory?: string;
    json?: boolean;
  } & SshCliOptions,
): Promise<number> {
  if (!opts.ledger && !opts.inventory)
    throw new UserError('heal: give --ledger FILE and/or --inventory FILE');
  let nodes: NodeSpec[] = [];
  let knownHostsFiles: string[] | undefined;
  let inventory: Inventory | undefined;
  let records: FaultRecord[] = [];
  if (opts.ledger) {
    const state = readLedger(opts.ledger);
    records = state.unhealed;
    nodes = state.nodes;
    knownHostsFiles = state.knownHostsFiles;
    if (!opts.inventory && nodes.length === 0 && state.inventory) opts.inventory = state.inventory;
  }
  if (opts.inventory) {
    inventory = loadInventory(opts.inventory);
    nodes = inventory.nodes;
    knownHostsFiles = inventory.knownHostsFiles;
  }
  if (nodes.length === 0)
    throw new UserError(`${opts.ledger}: the ledger names no nodes; pass --inventory FILE to reach them`);
  // Host keys: the inventory's policy and the CLI flags, as for every command that reaches nodes.
  const remoteOptions: RemoteOptions = inventory
    ? remoteOptionsFor(inventory, opts)
    : { hostKeyPolicy: hostKeyPolicyFrom(opts), ...(knownHostsFiles && { knownHostsFiles }) };
  const remote = await connectRemote(nodes, remoteOptions);
  const ledger = opts.ledger ? new FaultLedger(opts.ledger) : undefined;
  try {
    const report = await healAll(remote, records, ledger);
    process.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : `${formatHealReport(report)}\n`);
    return report.clean ? 0 : 1;
  } finally {
    ledger?.close();
    await remote.close();
  }
}
