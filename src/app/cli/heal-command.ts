import { formatHealReport, healAll } from '../../../nemeses/heal.ts';
import { FaultLedger, readLedger } from '../../../nemeses/ledger.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import type { SshCliOptions } from '../../core/control/connect.ts';
import { UserError } from '../../core/util/errors.ts';
import { type ClusterSource, connectCluster } from '../../lib/clusters/connect.ts';

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
  let records: FaultRecord[] = [];
  const source: ClusterSource = {};
  if (opts.ledger) {
    const state = readLedger(opts.ledger);
    records = state.unhealed;
    source.nodes = {
      specs: state.nodes,
      ...(state.knownHostsFiles && { knownHostsFiles: state.knownHostsFiles }),
    };
    if (!opts.inventory && state.nodes.length === 0 && state.inventory) source.inventory = state.inventory;
  }
  if (opts.inventory) source.inventory = opts.inventory;
  if (!source.inventory && (source.nodes?.specs.length ?? 0) === 0)
    throw new UserError(`${opts.ledger}: the ledger names no nodes; pass --inventory FILE to reach them`);
  const cluster = await connectCluster(source, { ssh: opts });
  const ledger = opts.ledger ? new FaultLedger(opts.ledger) : undefined;
  try {
    const report = await healAll(cluster.remote, records, ledger);
    process.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : `${formatHealReport(report)}\n`);
    return report.clean ? 0 : 1;
  } finally {
    ledger?.close();
    await cluster.close();
  }
}
