import type { Remote } from '../src/core/control/types.ts';
import { errorMessage } from '../src/core/util/errors.ts';
import type { FaultLedger } from './ledger.ts';
import { nemeses } from './registry.ts';
import type { FaultRecord, Nemesis } from './types.ts';

/**
 * Heal-all: undo every fault the ledger still has in force (newest first), then sweep every node with
 * every nemesis's verifyClean, which also catches what no ledger recorded (a run killed between the
 * command and the append, another run's leftovers).
 */
export interface HealOutcome {
  id: string;
  kind: string;
  healed: boolean;
  error?: string;
}

export interface SweepOutcome {
  node: string;
  kind: string;
  clean: boolean;
  found: string[];
  fixed: string[];
  error?: string;
}

export interface HealReport {
  faults: HealOutcome[];
  sweep: SweepOutcome[];
  clean: boolean;
}

const fromRegistry = (kind: string): Promise<Nemesis> => nemeses.require(kind, 'nemesis').load();

export async function healRecords(
  remote: Remote,
  records: readonly FaultRecord[],
  ledger?: FaultLedger,
  lookup: (kind: string) => Promise<Nemesis> = fromRegistry,
): Promise<HealOutcome[]> {
  const out: HealOutcome[] = [];
  // Newest first: a later fault may depend on an earlier one (e.g. a pause inside a partition).
  for (const r of [...records].reverse()) {
    try {
      const nemesis = await lookup(r.spec.kind);
      await nemesis.heal(remote, r);
      ledger?.healed(r.id);
      out.push({ id: r.id, kind: r.spec.kind, healed: true });
    } catch (err) {
      ledger?.healFailed(r.id, errorMessage(err));
      out.push({ id: r.id, kind: r.spec.kind, healed: false, error: errorMessage(err) });
    }
  }
  return out;
}

/**
 * Run verifyClean on every node (nodes in parallel, kinds in turn per node): of the given nemesis kinds,
 * or of every registered nemesis.
 */
export async function sweepNodes(
  remote: Remote,
  nodes: readonly string[],
  kinds?: readonly string[],
): Promise<SweepOutcome[]> {
  const defs = kinds ? kinds.map((k) => nemeses.require(k, 'nemesis')) : nemeses.values();
  const loaded = await Promise.all(defs.map((d) => d.load()));
  const perNode = await Promise.all(
    nodes.map(async (node) => {
      const out: SweepOutcome[] = [];
      for (const n of loaded) {
        try {
          const r = await n.verifyClean(remote, node);
          out.push({ node, kind: n.kind, ...r });
        } catch (err) {
          out.push({ node, kind: n.kind, clean: false, found: [], fixed: [], error: errorMessage(err) });
        }
      }
      return out;
    }),
  );
  return perNode.flat();
}

export async function healAll(
  remote: Remote,
  records: readonly FaultRecord[],
  ledger?: FaultLedger,
): Promise<HealReport> {
  const faults = await healRecords(remote, records, ledger);
  const sweep = await sweepNodes(
    remote,
    remote.nodes.map((n) => n.name),
  );
  return { faults, sweep, clean: faults.every((f) => f.healed) && sweep.every((s) => s.clean) };
}

/** Human-readable lines: what was healed, and per node what was found and fixed. */
export function formatHealReport(report: HealReport): string {
  const lines: string[] = [];
  for (const f of report.faults)
    lines.push(f.healed ? `healed ${f.id} (${f.kind})` : `FAILED to heal ${f.id} (${f.kind}): ${f.error}`);
  if (report.faults.length === 0) lines.push('ledger: no fault left in force');
  const byNode = new Map<string, SweepOutcome[]>();
  for (const s of report.sweep) byNode.set(s.node, [...(byNode.get(s.node) ?? []), s]);
  for (const [node, outs] of byNode) {
    const found = outs.flatMap((o) => o.found.map((f) => `${o.kind}: ${f}`));
    const fixed = outs.flatMap((o) => o.fixed.map((f) => `${o.kind}: ${f}`));
    const errors = outs.filter((o) => o.error).map((o) => `${o.kind}: ${o.error}`);
    const clean = outs.every((o) => o.clean);
    lines.push(
      `${node}: ${clean ? 'clean' : 'NOT CLEAN'}${found.length === 0 && errors.length === 0 ? ' (nothing found)' : ''}`,
    );
    for (const f of found) lines.push(`  found ${f}`);
    for (const f of fixed) lines.push(`  fixed ${f}`);
    for (const e of errors) lines.push(`  error ${e}`);
  }
  lines.push(report.clean ? 'all nodes clean' : 'NOT all nodes clean');
  return lines.join('\n');
}

/** What a run found on its nodes before it began: faults an earlier run left in force, and whether any remain. */
export interface LeftoverSweep {
  clean: boolean;
  /** `n1 lazyfs: lazy filesystem on … (fault w1); undone: unmounted …`, one per node and kind that had any. */
  undone: string[];
  /** What is still there (or could not be checked), one per node and kind. */
  left: string[];
}

/**
 * The sweep of every node with every nemesis, before a run sets anything up. A run killed outright, or
 * stopped by a second Ctrl-C, heals nothing; what it left (a partition, a mount under the data directory,
 * a stopped process) would make the next run on those nodes fail to set up or judge a system under a
 * fault it never scheduled. A run starts from clean nodes, or says why it cannot.
 */
export async function sweepLeftovers(remote: Remote, nodes: readonly string[]): Promise<LeftoverSweep> {
  const sweep = await sweepNodes(remote, nodes);
  const undone = sweep
    .filter((s) => s.found.length > 0 && s.clean)
    .map(
      (s) => `${s.node} ${s.kind}: ${s.found.join(', ')}; undone: ${s.fixed.join(', ') || 'nothing to do'}`,
    );
  const left = sweep
    .filter((s) => !s.clean)
    .map((s) => `${s.node} ${s.kind}: ${s.error ? `the sweep failed (${s.error})` : s.found.join(', ')}`);
  return { clean: left.length === 0, undone, left };
}
