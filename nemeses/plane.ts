import type { Remote } from '../src/core/control/types.ts';
import {
  DatabaseCapabilityMissingError,
  databaseWith,
  type FaultTarget,
  requireCapability,
} from '../src/core/database/capabilities.ts';
import { Rng } from '../src/core/generator/rng.ts';
import { errorMessage } from '../src/core/util/errors.ts';
import { log } from '../src/core/util/log.ts';
import { retry } from '../src/core/util/retry.ts';
import { appliesTo, type DeclaredSignal, moved, type Reading, readDeclared } from './declared-signal.ts';
import { describeFaultRecord } from './describe.ts';
import { type HealReport, healRecords, sweepNodes } from './heal.ts';
import { FaultLedger, type LedgerReach } from './ledger.ts';
import { classifyFaultOp, nemeses } from './registry.ts';
import { selectTargets, TargetError } from './targets.ts';
import type {
  EvidenceContext,
  EvidenceSignal,
  FaultEvidence,
  FaultOpMeaning,
  FaultRecord,
  FaultSpec,
  Nemesis,
  NemesisCompletion,
  NemesisDriver,
  SpecContext,
} from './types.ts';

/**
 * The fault plane: the one way faults are injected, by `faultline test`, `faultline run` and `faultline
 * heal`. It turns the nemesis thread's ops into fault specs (targets through the one selector, the SUT's
 * pidfiles, leaders, clock wrapper and data directory filled in), and keeps the discipline every fault
 * follows:
 *
 * - ledger before touch: the complete record (everything heal needs) is appended, fsynced, before a
 *   node is touched, and each step after (injected, evidence, heal);
 * - landing evidence: injector and victim signals before and during the fault, the same signals again
 *   after heal;
 * - heal: a stop op heals every window of its class (a kill window ends with the database's own start);
 *   `healAll` heals what is still open, then sweeps every node with every nemesis used (`verifyClean`);
 * - exit healing: `installExitHeal` heals everything on SIGINT, SIGTERM and uncaught errors.
 */
export interface FaultPlaneOptions {
  remote: Remote;
  /** ledger.jsonl of the run. */
  ledgerPath: string;
  /**
   * Written to the ledger, so `faultline heal --ledger` can reconnect and verify host keys; the remote's
   * own host-key files are recorded when this names none.
   */
  reach?: LedgerReach;
  sut?: FaultTarget;
  /** Target choices (a seed fixes them). */
  rng?: Rng;
  /** Nemesis by kind (the registry's by default; tests pass fakes). */
  lookup?: (kind: string) => Promise<Nemesis>;
  /** The landing signals the plan declares (read before, during and after each fault they apply to). */
  declaredSignals?: readonly DeclaredSignal[];
}

interface Active {
  cls: string;
  record: FaultRecord;
  restartsDb: boolean;
}

export class FaultPlane implements NemesisDriver {
  readonly ledger: FaultLedger;
  /** Every record, in injection order, with its evidence and heal time: the run's fault table. */
  readonly records: FaultRecord[] = [];
  private seq = 0;
  private readonly active = new Map<string, Active>();
  private readonly rng: Rng;
  private readonly lookup: (kind: string) => Promise<Nemesis>;
  private readonly kindsUsed = new Set<string>();
  private exitHandlers: Array<[string, (...a: unknown[]) => void]> = [];
  private healing: Promise<HealReport> | null = null;
  /** Declared signals read before each window's inject, by window id. */
  private readonly declaredBefore = new Map<
    string,
    { signal: DeclaredSignal; nodes: string[]; before: Record<string, Reading> }[]
  >();

  constructor(private readonly o: FaultPlaneOptions) {
    this.rng = (o.rng ?? new Rng(1)).fork('fault-targets');
    this.lookup = o.lookup ?? ((kind) => nemeses.require(kind, 'nemesis').load());
    this.ledger = new FaultLedger(o.ledgerPath);
    const knownHostsFiles = o.reach?.knownHostsFiles ?? o.remote.knownHostsFiles?.();
    this.ledger.cluster(o.remote.nodes, { ...o.reach, ...(knownHostsFiles && { knownHostsFiles }) });
  }

  private get nodes(): string[] {
    return this.o.remote.nodes.map((n) => n.name);
  }

  activeWindows(): string[] | null {
    return this.active.size === 0 ? null : [...this.active.keys()];
  }

  /** The records still in force. */
  activeFaults(): FaultRecord[] {
    return [...this.active.values()].map((a) => a.record);
  }

  /** The faults active now, for the progress line: `n2 | n1 n3 n4 n5`, `kill n3`. */
  describeActive(): string[] {
    return [...this.active.values()].map((a) => describeFaultRecord(a.record).short);
  }

  /** The interpreter's nemesis thread: a start op opens a window, a stop op heals its class. */
  async invoke(op: { f: string; value: unknown }): Promise<NemesisCompletion> {
    const c = classifyFaultOp(op.f, op.value);
    if (!c) return { value: op.value, error: `unknown nemesis op ${op.f}` };
    const value = (op.value ?? {}) as Record<string, unknown>;
    return c.starts ? this.startWindow(c, value) : this.stopClass(c.cls);
  }

  /** Resolve a target selector to node names; `primaries` asks the SUT (retried through an election). */
  async resolveTargets(selector: unknown): Promise<string[]> {
    let primaries: string[] | undefined;
    if (selector === 'primaries') {
      const { db, ctx } = requireCapability(this.o.sut, 'primaries', 'target "primaries"');
      const ask = () => db.primaries(ctx);
      primaries = await retry(
        async () => {
          const p = await ask();
          if (p.length === 0) throw new TargetError('the database reports no primary (an election?)');
          return p;
        },
        { attempts: 5, retryable: (e) => e instanceof TargetError, delayMs: () => 1000 },
      );
    }
    return selectTargets(selector as string | string[] | undefined, this.nodes, this.rng, primaries);
  }

  private specContext(): SpecContext {
    return {
      nodes: this.nodes,
      rng: this.rng,
      ...(this.o.sut && { sut: this.o.sut }),
      resolve: (sel) => this.resolveTargets(sel),
    };
  }

  private async startWindow(c: FaultOpMeaning, value: Record<string, unknown>): Promise<NemesisCompletion> {
    const id = `w${++this.seq}`;
    let spec: FaultSpec = { kind: c.kind, action: c.action };
    let record: FaultRecord;
    try {
      spec = await nemeses.require(c.kind, 'nemesis').toSpec(c.action, value, this.specContext());
      const action = nemeses.get(c.kind)?.actions.find((a) => a.name === c.action);
      await this.readDeclaredBefore(id, spec);
      record = await this.inject(spec, id, { cls: c.cls, restartsDb: action?.restartsDb === true });
      if (action?.startsDbAfterInject) {
        const errors = await this.restartDb();
        if (errors.length > 0) throw new Error(errors.join('; '));
      }
    } catch (err) {
      return this.failed(id, c, spec, err);
    }
    const evidence = await this.evidence(record);
    return {
      value: {
        id,
        fault: c.cls,
        nodes: record.nodes,
        // What the fault did, so the history itself can label its windows (plots, pages, headlines).
        what: describeFaultRecord(record).what,
        landed: evidence.landed,
        ...(evidence.reason && { reason: evidence.reason }),
      },
      extras: { evidence },
    };
  }

  /** An inject that failed: undo what was planned, and keep it in the table as not landed. */
  private async failed(
    id: string,
    c: FaultOpMeaning,
    spec: FaultSpec,
    err: unknown,
  ): Promise<NemesisCompletion> {
    const planned = this.active.get(id);
    if (planned) {
      // Partly applied? Undo what the plan says, so nothing is left in force.
      await this.healOne(planned.record).catch((e) => this.ledger.healFailed(id, errorMessage(e)));
      this.active.delete(id);
    }
    const why =
      err instanceof DatabaseCapabilityMissingError
        ? `capability missing: ${err.message}`
        : `inject failed: ${errorMessage(err)}`;
    const now = new Date().toISOString();
    const nodes = Array.isArray(spec.targets) ? spec.targets : [];
    this.records.push({
      id,
      spec,
      nodes,
      injectedAt: now,
      undo: {},
      evidence: { landed: false, reason: why, signals: [] },
      healedAt: now,
    });
    return { value: { id, fault: c.cls, nodes, landed: false }, error: why };
  }

  /**
   * Inject one fault spec (targets already resolved): the record reaches the ledger, and the plane's
   * open windows, before the node is touched, so a partly applied fault can still be healed. Returns the
   * record; landing evidence is taken separately (gate on it, never sleep).
   */
  async inject(
    spec: FaultSpec,
    id = `w${++this.seq}`,
    window: { cls?: string; restartsDb?: boolean } = {},
  ): Promise<FaultRecord> {
    const nemesis = await this.lookup(spec.kind);
    this.kindsUsed.add(spec.kind);
    const open = (r: FaultRecord) =>
      this.active.set(r.id, {
        cls: window.cls ?? spec.kind,
        record: r,
        restartsDb: window.restartsDb === true,
      });
    let planned = false;
    const start = this.startProcess();
    const record = await nemesis.inject(this.o.remote, spec, id, {
      beforeApply: (r) => {
        planned = true;
        this.ledger.beforeInject(r);
        open(r);
      },
      ...(start && { startProcess: start }),
      ...(this.o.sut && { sut: this.o.sut }),
    });
    if (!planned) this.ledger.beforeInject(record);
    this.ledger.afterInject(id, record.undo);
    open(record);
    this.records.push(record);
    return record;
  }

  /** Landing evidence (injector and victim), recorded on the record and in the ledger. */
  async evidence(record: FaultRecord): Promise<FaultEvidence> {
    let ev: FaultEvidence;
    try {
      ev = await (await this.lookup(record.spec.kind)).evidence(
        this.o.remote,
        record,
        this.evidenceContext(),
      );
    } catch (err) {
      ev = { landed: false, reason: `evidence failed: ${errorMessage(err)}`, signals: [] };
    }
    ev = await this.withDeclared(record, ev);
    record.evidence = ev;
    this.ledger.evidence(record.id, ev);
    return ev;
  }

  private evidenceContext() {
    return this.o.sut ? { sut: this.o.sut } : {};
  }

  /** The context of an after-heal measurement: the other windows still open (never waited out). */
  private afterHealContext(record: FaultRecord): EvidenceContext {
    const others = [...this.active.values()]
      .filter((a) => a.record.id !== record.id && !a.record.healedAt)
      .map((a) => `${a.record.id} ${a.record.spec.kind}`);
    return { ...this.evidenceContext(), ...(others.length > 0 && { othersInForce: others }) };
  }

  /** Heal one fault (the database started again if it stopped it), then measure its signals again. */
  async heal(record: FaultRecord): Promise<void> {
    await this.healOne(record);
    const a = this.active.get(record.id);
    this.active.delete(record.id);
    if (a?.restartsDb) await this.restartDb();
    await this.measureAfterHeal(record);
  }

  private async healOne(record: FaultRecord): Promise<void> {
    const nemesis = await this.lookup(record.spec.kind);
    await nemesis.heal(this.o.remote, record);
    record.healedAt = new Date().toISOString();
    this.ledger.healed(record.id);
  }

  /**
   * The landing signals measured again once the fault is undone (and a stopped database started again),
   * so each reads before → during → after. A kind with nothing to re-measure says so in the record.
   */
  private async measureAfterHeal(record: FaultRecord): Promise<void> {
    const nemesis = await this.lookup(record.spec.kind);
    const after: FaultEvidence = nemesis.evidenceAfterHeal
      ? await nemesis.evidenceAfterHeal(this.o.remote, record, this.afterHealContext(record)).catch(
          (err): FaultEvidence => ({
            landed: false,
            reason: `after-heal evidence failed: ${errorMessage(err)}`,
            signals: [],
          }),
        )
      : { landed: true, reason: `${record.spec.kind}: no after-heal measurement`, signals: [] };
    const declared = this.declaredBefore.get(record.id) ?? [];
    this.declaredBefore.delete(record.id);
    for (const d of declared) {
      const now = await readDeclared(this.o.remote, d.signal, d.nodes, this.o.sut);
      after.signals.push({ ...declaredSignalOf(d.signal, d.before, {}), after: perNode(now), landed: true });
    }
    record.afterHeal = after;
    mergeAfter(record, after);
    this.ledger.afterHeal(record.id, after);
  }

  /** The plan's declared signals that apply to this fault, read on its nodes before it is injected. */
  private async readDeclaredBefore(id: string, spec: FaultSpec): Promise<void> {
    const applicable = (this.o.declaredSignals ?? []).filter((s) => appliesTo(s, { spec }));
    if (applicable.length === 0) return;
    const nodes = Array.isArray(spec.targets) && spec.targets.length > 0 ? spec.targets : this.nodes;
    const sut = this.o.sut;
    this.declaredBefore.set(
      id,
      await Promise.all(
        applicable.map(async (signal) => ({
          signal,
          nodes,
          before: await readDeclared(this.o.remote, signal, nodes, sut),
        })),
      ),
    );
  }

  /**
   * The declared signals read again while the fault holds: each one must move on some node of the
   * fault, or the fault is not proven (the plan said what landing looks like).
   */
  private async withDeclared(record: FaultRecord, ev: FaultEvidence): Promise<FaultEvidence> {
    const declared = this.declaredBefore.get(record.id) ?? [];
    if (declared.length === 0) return ev;
    const signals = await Promise.all(
      declared.map(async (d) =>
        declaredSignalOf(
          d.signal,
          d.before,
          await readDeclared(this.o.remote, d.signal, d.nodes, this.o.sut),
        ),
      ),
    );
    const still = signals.flatMap((s, i) => {
      if (s.landed) return [];
      const d = (declared[i] as (typeof declared)[number]).signal;
      return d.type === 'command' && d.refused !== undefined
        ? [`the plan's declared landing command was not run (${d.refused}): ${s.signal}`]
        : [`the plan's declared landing signal did not move: ${s.signal}`];
    });
    return {
      ...ev,
      signals: [...ev.signals, ...signals],
      landed: ev.landed && still.length === 0,
      ...(still.length > 0 && { reason: [ev.reason, ...still].filter(Boolean).join('; ') }),
    };
  }

  /** The database's own start on a node, when it declares process control. */
  private startProcess(): ((node: string) => Promise<void>) | undefined {
    const sut = databaseWith(this.o.sut, 'process');
    return sut && ((node) => sut.db.process.start(sut.ctx, node));
  }

  /** A killed database comes back through its own start (idempotent when it is running). */
  private async restartDb(): Promise<string[]> {
    const start = this.startProcess();
    if (!start) return [];
    const errors: string[] = [];
    const results = await Promise.allSettled(this.nodes.map((n) => start(n)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') errors.push(`start ${this.nodes[i]}: ${errorMessage(r.reason)}`);
    });
    return errors;
  }

  /** A stop op: heal every open window of the class, start the database if it was stopped, re-measure. */
  async stopClass(cls: string): Promise<NemesisCompletion> {
    const healed: string[] = [];
    const errors: string[] = [];
    let restart = false;
    for (const [id, a] of [...this.active]) {
      if (a.cls !== cls) continue;
      try {
        await this.healOne(a.record);
        healed.push(id);
        restart ||= a.restartsDb;
      } catch (err) {
        errors.push(`${id}: ${errorMessage(err)}`);
        this.ledger.healFailed(id, errorMessage(err));
      }
    }
    // The window's end brings the database back even when its kill did not land (it may be half down).
    if (restart || this.classRestartsDb(cls)) errors.push(...(await this.restartDb()));
    // After the database is back: what heal left, as the same signals (a killed member serving again).
    for (const id of healed) {
      const a = this.active.get(id);
      if (a) await this.measureAfterHeal(a.record);
    }
    // The windows stay open (ops keep their fault epoch) until the database is back.
    for (const id of healed) this.active.delete(id);
    return { value: { fault: cls, healed }, ...(errors.length > 0 && { error: errors.join('; ') }) };
  }

  private classRestartsDb(cls: string): boolean {
    return nemeses.values().some((d) => d.actions.some((a) => a.cls === cls && a.restartsDb));
  }

  /**
   * Heal everything still open (class by class, as the stop ops do, so a killed database starts again),
   * then sweep the nodes with `verifyClean`: of the nemeses this plane used (`used`), of every
   * registered nemesis (`all`), or none. Concurrent calls share one run; never throws.
   */
  healAll(sweep: 'used' | 'all' | 'none' = 'used'): Promise<HealReport> {
    this.healing ??= this.healEverything(sweep).finally(() => {
      this.healing = null;
    });
    return this.healing;
  }

  private async healEverything(sweep: 'used' | 'all' | 'none'): Promise<HealReport> {
    const faults: HealReport['faults'] = [];
    for (const cls of new Set([...this.active.values()].map((a) => a.cls))) {
      const ids = [...this.active]
        .filter(([, a]) => a.cls === cls)
        .map(([id, a]) => [id, a.record.spec.kind]);
      const r = await this.stopClass(cls);
      const healed = new Set((r.value as { healed: string[] }).healed);
      for (const [id, kind] of ids)
        faults.push({ id: id as string, kind: kind as string, healed: healed.has(id as string) });
      if (r.error !== undefined) log().error({ cls, err: r.error }, 'heal failed');
    }
    // Whatever a stop could not heal (its class unknown to the plane) goes through the nemeses directly.
    faults.push(...(await healRecords(this.o.remote, this.activeFaults(), this.ledger, this.lookup)));
    this.active.clear();
    const kinds = sweep === 'none' ? [] : sweep === 'used' ? [...this.kindsUsed] : undefined;
    const swept = kinds?.length === 0 ? [] : await sweepNodes(this.o.remote, this.nodes, kinds);
    return {
      faults,
      sweep: swept,
      clean: faults.every((f) => f.healed) && swept.every((s) => s.clean),
    };
  }

  /**
   * SIGINT / SIGTERM / uncaughtException / unhandledRejection: heal everything, then exit (130, 143,
   * 255). Returns a function that removes the handlers.
   */
  installExitHeal(): () => void {
    const onSignal = (signal: string, code: number) => () => {
      process.stderr.write(`faultline: ${signal}: healing ${this.active.size} active fault(s) before exit\n`);
      void this.healAll('all')
        .catch((err) => process.stderr.write(`faultline: heal failed: ${errorMessage(err)}\n`))
        .finally(() => process.exit(code));
    };
    const onError = (err: unknown) => {
      process.stderr.write(`faultline: uncaught error: ${errorMessage(err)}; healing before exit\n`);
      void this.healAll('all')
        .catch((e) => process.stderr.write(`faultline: heal failed: ${errorMessage(e)}\n`))
        .finally(() => process.exit(255));
    };
    const handlers: Array<[string, (...a: unknown[]) => void]> = [
      ['SIGINT', onSignal('SIGINT', 130)],
      ['SIGTERM', onSignal('SIGTERM', 143)],
      ['uncaughtException', onError],
      ['unhandledRejection', onError],
    ];
    for (const [ev, fn] of handlers) process.on(ev as NodeJS.Signals, fn);
    this.exitHandlers.push(...handlers);
    return () => this.removeExitHeal();
  }

  removeExitHeal(): void {
    for (const [ev, fn] of this.exitHandlers) process.off(ev as NodeJS.Signals, fn);
    this.exitHandlers = [];
  }

  close(): void {
    this.removeExitHeal();
    this.ledger.close();
  }
}

/** Readings per node as one value when there is one node, else `{node: reading}`. */
function perNode(r: Record<string, Reading>): unknown {
  const values = Object.values(r);
  return values.length === 1 ? values[0] : r;
}

/** One declared signal over the fault's nodes: landed when it moved on at least one of them. */
function declaredSignalOf(
  s: DeclaredSignal,
  before: Record<string, Reading>,
  during: Record<string, Reading>,
): EvidenceSignal {
  const nodes = Object.keys(before);
  return {
    side: 'victim',
    node: nodes.join(' '),
    signal: `declared: ${s.text}`,
    before: perNode(before),
    ...(Object.keys(during).length > 0 && { during: perNode(during) }),
    landed: nodes.some((n) => moved(s, before[n], during[n])),
    note: 'the landing signal the plan declares',
  };
}

/** After-heal measurements joined to the landing signals they repeat, so each reads before → during → after. */
function mergeAfter(record: FaultRecord, after: FaultEvidence): void {
  const signals = record.evidence?.signals;
  if (!signals) return;
  for (const a of after.signals) {
    const same = signals.find((s) => s.node === a.node && s.signal === a.signal && s.side === a.side);
    if (same) same.after = a.after ?? a.during;
  }
}
