import { formatHealReport, healAll, healRecords, sweepNodes } from '../../../../nemeses/heal.ts';
import { FaultLedger, readLedger } from '../../../../nemeses/ledger.ts';
import type { FaultRecord } from '../../../../nemeses/types.ts';
import type { SshCliOptions } from '../../../core/control/ssh-cli-options.ts';
import type { NodeSpec } from '../../../core/control/types.ts';
import { UserError } from '../../../core/util/errors.ts';
import { ClientOnlyRemote } from '../../../lib/clusters/client-only.ts';
import { type ClusterSource, connectCluster } from '../../../lib/clusters/connect-cluster.ts';

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
    if (state.clientOnly && !opts.inventory)
      return healClientOnly(opts.ledger, state.nodes, records, opts.json);
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

/**
 * A client-only run's ledger: no SSH. Its faults lived on the control node (the proxy) and are healed
 * there; the sweep covers only the kinds the ledger used, since a node-side sweep would need the nodes.
 */
async function healClientOnly(
  path: string,
  nodes: readonly NodeSpec[],
  records: FaultRecord[],
  json: boolean | undefined,
): Promise<number> {
  const remote = new ClientOnlyRemote(
    Object.fromEntries(nodes.map((n) => [n.name, { host: n.host, port: 0 }])),
  );
  const ledger = new FaultLedger(path);
  try {
    const faults = await healRecords(remote, records, ledger);
    const kinds = [...new Set(readLedger(path).records.map((r) => r.spec.kind))];
    const sweep = await sweepNodes(
      remote,
      nodes.map((n) => n.name),
      kinds,
    );
    const report = { faults, sweep, clean: faults.every((f) => f.healed) && sweep.every((s) => s.clean) };
    process.stdout.write(
      json ? `${JSON.stringify(report)}\n` : `client-only run (no SSH)\n${formatHealReport(report)}\n`,
    );
    return report.clean ? 0 : 1;
  } finally {
    ledger.close();
  }
}
