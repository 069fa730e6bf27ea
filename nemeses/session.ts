import type { Remote } from '../src/core/control/types.ts';
import { errorMessage } from '../src/core/util/errors.ts';
import { log } from '../src/core/util/log.ts';
import { type HealReport, healAll } from './heal.ts';
import { FaultLedger } from './ledger.ts';
import { nemesisOfKind } from './registry.ts';
import type { FaultEvidence, FaultRecord, FaultSpec } from './types.ts';

/**
 * A fault session: the one way to inject faults with the ledger discipline. Every fault is appended
 * (fsynced) before the node is touched and its heal after it is undone; `installExitHeal()` makes
 * SIGINT, SIGTERM and uncaught errors heal everything before the process exits.
 */
export class FaultSession {
  readonly ledger: FaultLedger;
  private seq = 0;
  private readonly active = new Map<string, FaultRecord>();
  private exitHandlers: Array<[string, (...a: unknown[]) => void]> = [];
  private healing: Promise<HealReport> | null = null;

  /** `reach` is written to the ledger so `faultline heal --ledger` can reconnect and verify host keys. */
  constructor(
    readonly remote: Remote,
    ledgerPath: string,
    reach: { knownHostsFiles?: string[]; inventory?: string } = {},
  ) {
    this.ledger = new FaultLedger(ledgerPath);
    this.ledger.cluster(remote.nodes, reach);
  }

  activeFaults(): FaultRecord[] {
    return [...this.active.values()];
  }

  /** Inject and return the record; evidence is taken separately (gate on it, never sleep). */
  async inject(spec: FaultSpec, id = `w${++this.seq}`): Promise<FaultRecord> {
    const nemesis = await nemesisOfKind(spec.kind);
    let planned: FaultRecord | undefined;
    try {
      const record = await nemesis.inject(this.remote, spec, id, {
        beforeApply: (r) => {
          planned = r;
          this.ledger.beforeInject(r);
          this.active.set(r.id, r);
        },
      });
      this.active.set(id, record);
      this.ledger.afterInject(id, record.undo);
      return record;
    } catch (err) {
      // Partly applied? The ledger has it (beforeApply ran), heal stays possible; say so and rethrow.
      if (planned) log().error({ id, err: errorMessage(err) }, 'inject failed after the fault was planned');
      throw err;
    }
  }

  async evidence(record: FaultRecord): Promise<FaultEvidence> {
    const nemesis = await nemesisOfKind(record.spec.kind);
    const ev = await nemesis.evidence(this.remote, record);
    record.evidence = ev;
    this.ledger.evidence(record.id, ev);
    return ev;
  }

  async heal(record: FaultRecord): Promise<void> {
    const nemesis = await nemesisOfKind(record.spec.kind);
    await nemesis.heal(this.remote, record);
    record.healedAt = new Date().toISOString();
    this.active.delete(record.id);
    this.ledger.healed(record.id);
  }

  /** Heal every active fault and sweep every node. Concurrent calls share one run. */
  healAll(): Promise<HealReport> {
    this.healing ??= healAll(this.remote, this.activeFaults(), this.ledger).finally(() => {
      for (const r of this.activeFaults()) this.active.delete(r.id);
      this.healing = null;
    });
    return this.healing;
  }

  /**
   * SIGINT / SIGTERM / uncaughtException / unhandledRejection: heal everything, then exit (130, 143,
   * 255). Returns a function that removes the handlers.
   */
  installExitHeal(): () => void {
    const onSignal = (signal: string, code: number) => () => {
      process.stderr.write(`faultline: ${signal}: healing ${this.active.size} active fault(s) before exit\n`);
      void this.healAll()
        .catch((err) => process.stderr.write(`faultline: heal failed: ${errorMessage(err)}\n`))
        .finally(() => process.exit(code));
    };
    const onError = (err: unknown) => {
      process.stderr.write(`faultline: uncaught error: ${errorMessage(err)}; healing before exit\n`);
      void this.healAll()
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
