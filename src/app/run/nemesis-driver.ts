import { describeFaultRecord } from '../../../nemeses/describe.ts';
import { FaultLedger } from '../../../nemeses/ledger.ts';
import type { FaultEvidence, FaultRecord, FaultSpec, Nemesis } from '../../../nemeses/types.ts';
import type { Remote } from '../../core/control/types.ts';
import type { Rng } from '../../core/generator/rng.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import type { DB, DbContext } from '../../lib/databases/types.ts';
import { classifyFaultOp, type FaultOpMeaning } from './faults.ts';
import type { NemesisCompletion, NemesisDriver } from './interpreter.ts';

/**
 * Carries out the nemesis thread's ops through the nemeses (nemeses/types.ts): resolves target selectors
 * to nodes, injects with a fresh fault-window id (w1, w2 …), asks for landing evidence, and heals on the
 * matching stop op. Every step is appended to the fault ledger (intent before injecting, the record
 * after, the heal after undoing), so `faultline heal --ledger` can finish what a killed run left.
 * Faults are never implemented here: only the DB protocol's own start is used, to bring a killed
 * daemon back when the kill window ends.
 */
export type NemesisLookup = (kind: string) => Promise<Nemesis>;

/** A nemesis op's value: a target selector or node list, an optional partition topology, extra params. */
export interface FaultOpValue {
  targets?: string | string[];
  topology?: string;
  params?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface FaultDriverOptions {
  remote: Remote;
  db: DB;
  dbCtx: DbContext;
  lookup: NemesisLookup;
  rng: Rng;
  /** ledger.jsonl in the run directory. */
  ledgerPath: string;
  /** Extra params for clock faults (faketime mode and the wrapper's name), read at injection time. */
  clockParams?: () => Record<string, unknown>;
}

export class FaultDriver implements NemesisDriver {
  private seq = 0;
  private readonly active = new Map<string, { cls: string; record: FaultRecord }>();
  /** Every record, in injection order, with its evidence and heal time: results.json's fault table. */
  readonly records: FaultRecord[] = [];
  private readonly rng: Rng;

  private readonly ledger: FaultLedger;

  constructor(private readonly o: FaultDriverOptions) {
    this.rng = o.rng.fork('fault-targets');
    this.ledger = new FaultLedger(o.ledgerPath);
    // How to reach the nodes, so `faultline heal --ledger` works without the run.
    this.ledger.cluster(o.remote.nodes);
  }

  activeWindows(): string[] | null {
    return this.active.size === 0 ? null : [...this.active.keys()];
  }

  /** The faults active now, for the progress line: `n2 | n1 n3 n4 n5`, `kill n3`. */
  activeFaults(): string[] {
    return [...this.active.values()].map((a) => describeFaultRecord(a.record).short);
  }

  async invoke(op: { f: string; value: unknown }): Promise<NemesisCompletion> {
    const c = classifyFaultOp(op.f, op.value);
    if (!c) return { value: op.value, error: `unknown nemesis op ${op.f}` };
    const value = (op.value ?? {}) as FaultOpValue;
    if (c.starts) return this.start(c, value);
    return this.stop(c.cls);
  }

  /** Closes the ledger file (after healAll). */
  close(): void {
    this.ledger.close();
  }

  /** Resolves a selector (one, minority, majority, all, primaries) to node names. */
  async resolveTargets(selector: string | string[] | undefined, cls: string): Promise<string[]> {
    const nodes = this.o.dbCtx.nodes;
    if (Array.isArray(selector)) return selector.filter((n) => nodes.includes(n));
    if (selector === undefined) return [...nodes];
    const shuffled = this.rng.shuffle(nodes);
    const minority = Math.max(1, Math.floor((nodes.length - 1) / 2));
    switch (selector) {
      case 'one':
        return shuffled.slice(0, 1);
      case 'minority':
        return shuffled.slice(0, minority);
      // A majority partition isolates a minority: the nodes listed are the isolated side.
      case 'majority':
        return cls === 'partition' ? shuffled.slice(0, minority) : shuffled.slice(0, nodes.length - minority);
      case 'all':
        return [...nodes];
      case 'primaries': {
        const p = await this.o.db.primaries(this.o.dbCtx).catch(() => []);
        return p.length > 0 ? p : shuffled.slice(0, 1);
      }
      default:
        return selector.split('+').filter((n) => nodes.includes(n));
    }
  }

  private async start(c: FaultOpMeaning, value: FaultOpValue): Promise<NemesisCompletion> {
    const nodes = await this.resolveTargets(value.targets, c.cls);
    const id = `w${++this.seq}`;
    const { kind, action } = c;
    const params: Record<string, unknown> = { ...value.params };
    if (typeof value.targets === 'string') params.selector = value.targets;
    if (kind === 'process') {
      params.pidFiles = Object.fromEntries(nodes.map((n) => [n, this.o.db.pidFile(this.o.dbCtx, n)]));
      params.process = this.o.db.name;
    }
    if (kind === 'partition') {
      params.allNodes = [...this.o.dbCtx.nodes];
      params.topology = value.topology ?? (typeof value.targets === 'string' ? value.targets : 'grudge');
    }
    if (value.deltaMs !== undefined) params.deltaMs = value.deltaMs;
    if (kind === 'clock') Object.assign(params, this.o.clockParams?.() ?? {});
    const spec: FaultSpec = { kind, action, targets: nodes, params };
    let record: FaultRecord;
    // The complete record (everything heal needs) reaches the ledger before the node is touched.
    let planned: FaultRecord | undefined;
    try {
      const nemesis = await this.o.lookup(kind);
      record = await nemesis.inject(this.o.remote, spec, id, {
        beforeApply: (r) => {
          planned = r;
          this.ledger.beforeInject(r);
        },
      });
    } catch (err) {
      // Partly applied? Undo what the plan says, so nothing is left in force.
      if (planned) await this.heal(id, planned).catch((e) => this.ledger.healFailed(id, errorMessage(e)));
      // Kept in the fault table as not landed, so the run's verdict cannot pass over it.
      const now = new Date().toISOString();
      this.records.push({
        id,
        spec,
        nodes,
        injectedAt: now,
        undo: {},
        evidence: { landed: false, reason: `inject failed: ${errorMessage(err)}`, signals: [] },
        healedAt: now,
      });
      return {
        value: { id, fault: c.cls, nodes, landed: false },
        error: `inject failed: ${errorMessage(err)}`,
      };
    }
    this.active.set(id, { cls: c.cls, record });
    this.records.push(record);
    if (!planned) this.ledger.beforeInject(record);
    this.ledger.afterInject(id, record.undo);
    let evidence: FaultEvidence;
    try {
      evidence = await (await this.o.lookup(kind)).evidence(this.o.remote, record);
    } catch (err) {
      evidence = { landed: false, reason: `evidence failed: ${errorMessage(err)}`, signals: [] };
    }
    record.evidence = evidence;
    this.ledger.evidence(id, evidence);
    return {
      value: {
        id,
        fault: c.cls,
        nodes,
        // What the fault did, so the history itself can label its windows (plots, pages, headlines).
        what: describeFaultRecord(record).what,
        landed: evidence.landed,
        ...(evidence.reason && { reason: evidence.reason }),
      },
      extras: { evidence },
    };
  }

  private async stop(cls: string): Promise<NemesisCompletion> {
    const healed: string[] = [];
    const errors: string[] = [];
    for (const [id, a] of [...this.active]) {
      if (a.cls !== cls) continue;
      try {
        await this.heal(id, a.record);
        healed.push(id);
      } catch (err) {
        errors.push(`${id}: ${errorMessage(err)}`);
        this.ledger.healFailed(id, errorMessage(err));
      }
    }
    if (cls === 'kill') {
      // A killed daemon comes back through the DB protocol's own start (idempotent when running).
      const nodes = this.o.dbCtx.nodes;
      const results = await Promise.allSettled(nodes.map((n) => this.o.db.start(this.o.dbCtx, n)));
      results.forEach((r, i) => {
        if (r.status === 'rejected') errors.push(`start ${nodes[i]}: ${errorMessage(r.reason)}`);
      });
    }
    return { value: { fault: cls, healed }, ...(errors.length > 0 && { error: errors.join('; ') }) };
  }

  private async heal(id: string, record: FaultRecord): Promise<void> {
    const nemesis = await this.o.lookup(record.spec.kind);
    await nemesis.heal(this.o.remote, record);
    record.healedAt = new Date().toISOString();
    this.active.delete(id);
    this.ledger.healed(id);
  }

  /**
   * Heal everything still active (the run's finally), class by class as the stop ops do, so a killed
   * daemon is started again too. Never throws; returns what failed.
   */
  async healAll(): Promise<string[]> {
    const failed: string[] = [];
    for (const cls of new Set([...this.active.values()].map((a) => a.cls))) {
      const r = await this.stop(cls);
      if (r.error !== undefined) {
        failed.push(String(r.error));
        log().error({ cls, err: r.error }, 'heal failed');
      }
    }
    return failed;
  }
}
