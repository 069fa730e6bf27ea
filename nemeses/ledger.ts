import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { refuseCommandField } from '../src/core/control/command-fields.ts';
import type { NodeSpec } from '../src/core/control/types.ts';
import { DEFAULT_MAX_LINE_BYTES, lineTooLong } from '../src/core/history/jsonl.ts';
import { InputError } from '../src/core/util/errors.ts';
import { regularInput } from '../src/core/util/input-file.ts';
import { parseJsonLines } from '../src/core/util/json-file.ts';
import { substitutionSchema } from './substitutes.ts';
import type { FaultEvidence, FaultRecord } from './types.ts';

/**
 * The fault ledger: one JSON object per line, fsynced after every append. A fault is written before it
 * is injected (with everything heal needs) and its heal after it is undone, so whatever kills the run,
 * `faultline heal --ledger FILE` knows exactly what is still in force and how to reach the nodes.
 */

/**
 * A ledger is data someone else may have written: every schema here is strict (an unknown field is a
 * one-line error naming file:line, never carried along), and a node's `proxyCommand` is only used when
 * the operator passes --allow-proxy-command (src/core/control/command-fields.ts).
 */
const hopSchema = z.strictObject({
  alias: z.string().min(1),
  host: z.string().min(1),
  port: z.number().int(),
  user: z.string(),
  identityFile: z.string().optional(),
  proxyCommand: z.string().optional(),
});

const nodeSpecSchema = z.strictObject({
  name: z.string().min(1),
  host: z.string().min(1),
  port: z.number().int(),
  address: z.string().min(1).optional(),
  clusterSshPort: z.number().int().optional(),
  user: z.string(),
  identityFile: z.string().optional(),
  passwordEnv: z.string().optional(),
  sudoPasswordEnv: z.string().optional(),
  proxyJump: z.string().optional(),
  jumpHosts: z.array(hopSchema).optional(),
  proxyCommand: z.string().optional(),
  sharedKernelClock: z.boolean().optional(),
  connectTimeoutS: z.number().int().min(1).max(600).optional(),
  packageFamily: z.enum(['apt', 'dnf', 'yum', 'apk', 'zypper', 'none']).optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

const evidenceSchema = z.looseObject({
  landed: z.boolean(),
  reason: z.string().optional(),
  signals: z.array(z.looseObject({ side: z.enum(['injector', 'victim']), node: z.string() })),
});

const recordSchema = z.strictObject({
  id: z.string().min(1),
  spec: z.strictObject({
    kind: z.string(),
    action: z.string(),
    targets: z.union([z.string(), z.array(z.string())]).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  }),
  nodes: z.array(z.string()),
  injectedAt: z.string(),
  undo: z.record(z.string(), z.unknown()),
  evidence: evidenceSchema.optional(),
  substitutions: z.array(substitutionSchema).optional(),
  afterHeal: evidenceSchema.optional(),
  healedAt: z.string().optional(),
});

export const ledgerEntrySchema = z.discriminatedUnion('t', [
  z.strictObject({
    t: z.literal('cluster'),
    at: z.string(),
    pid: z.number().int(),
    nodes: z.array(nodeSpecSchema),
    /** How to verify the nodes' host keys again at heal time. */
    knownHostsFiles: z.array(z.string()).optional(),
    inventory: z.string().optional(),
    /** A client-only run (`--no-ssh`): the nodes are endpoints, heal opens no SSH connection. */
    clientOnly: z.boolean().optional(),
  }),
  z.strictObject({ t: z.literal('inject'), at: z.string(), record: recordSchema }),
  z.strictObject({
    t: z.literal('injected'),
    at: z.string(),
    id: z.string(),
    undo: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({ t: z.literal('evidence'), at: z.string(), id: z.string(), evidence: evidenceSchema }),
  z.strictObject({ t: z.literal('heal'), at: z.string(), id: z.string() }),
  /** The landing signals measured again after heal. */
  z.strictObject({ t: z.literal('after-heal'), at: z.string(), id: z.string(), evidence: evidenceSchema }),
  z.strictObject({ t: z.literal('heal-failed'), at: z.string(), id: z.string(), error: z.string() }),
]);
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

/** How `faultline heal --ledger` reaches the nodes again. */
export interface LedgerReach {
  knownHostsFiles?: string[];
  inventory?: string;
  clientOnly?: boolean;
}

export class FaultLedger {
  private fd: number;
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  /** Append one entry and fsync before returning: the caller may inject the moment this returns. */
  append(entry: LedgerEntry): void {
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
  }

  cluster(nodes: readonly NodeSpec[], reach: LedgerReach = {}): void {
    this.append({
      t: 'cluster',
      at: now(),
      pid: process.pid,
      nodes: nodes.map((n) => ({ ...n })),
      ...(reach.knownHostsFiles && { knownHostsFiles: reach.knownHostsFiles }),
      ...(reach.inventory && { inventory: reach.inventory }),
      ...(reach.clientOnly && { clientOnly: true }),
    });
  }
  beforeInject(record: FaultRecord): void {
    this.append({ t: 'inject', at: now(), record: record as z.infer<typeof recordSchema> });
  }
  afterInject(id: string, undo: Record<string, unknown>): void {
    this.append({ t: 'injected', at: now(), id, undo });
  }
  evidence(id: string, evidence: FaultEvidence): void {
    this.append({
      t: 'evidence',
      at: now(),
      id,
      evidence: evidence as unknown as z.infer<typeof evidenceSchema>,
    });
  }
  healed(id: string): void {
    this.append({ t: 'heal', at: now(), id });
  }
  afterHeal(id: string, evidence: FaultEvidence): void {
    this.append({
      t: 'after-heal',
      at: now(),
      id,
      evidence: evidence as unknown as z.infer<typeof evidenceSchema>,
    });
  }
  healFailed(id: string, error: string): void {
    this.append({ t: 'heal-failed', at: now(), id, error });
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

function now(): string {
  return new Date().toISOString();
}

export interface LedgerState {
  /** Nodes from the newest `cluster` entry (how to reach them), or [] when the ledger names none. */
  nodes: NodeSpec[];
  knownHostsFiles?: string[];
  inventory?: string;
  clientOnly?: boolean;
  /** Every fault ever recorded, newest undo merged in, in injection order. */
  records: FaultRecord[];
  /** Faults with no `heal` entry: still (possibly) in force. */
  unhealed: FaultRecord[];
  /** When each fault's entries were appended: its windows on the wall clock, for the run's evidence. */
  times: LedgerTimes;
}

/** Wall time (ISO) of the newest `inject` (planned, before any node is touched), `injected`, `evidence` and `heal` entry, per fault id. */
export interface LedgerTimes {
  planned: Map<string, string>;
  injected: Map<string, string>;
  evidence: Map<string, string>;
  healed: Map<string, string>;
}

/**
 * Read a ledger back. A torn last line (the writer was killed mid-write) is ignored; any other bad line
 * is a one-line InputError naming file:line.
 */
export function readLedger(path: string): LedgerState {
  regularInput(path, 'fault ledger');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(path, null, null, `cannot read the fault ledger (${(err as Error).message})`);
  }
  let nodes: NodeSpec[] = [];
  let reach: LedgerReach = {};
  const byId = new Map<string, FaultRecord>();
  const healed = new Set<string>();
  const times: LedgerTimes = {
    planned: new Map(),
    injected: new Map(),
    evidence: new Map(),
    healed: new Map(),
  };
  const lines = parseJsonLines(text, path, {
    reject: 'not a JSON object',
    // The same cap as history lines: a ledger line is a few hundred bytes.
    check: (line, n) => {
      if (line.length * 3 > DEFAULT_MAX_LINE_BYTES && Buffer.byteLength(line) > DEFAULT_MAX_LINE_BYTES)
        throw lineTooLong(path, n, DEFAULT_MAX_LINE_BYTES, 'the cap for one ledger line');
    },
  });
  for (const { line: at, value: raw } of lines) {
    if (raw !== null && typeof raw === 'object' && 'event' in raw) {
      applyDriverEntry(raw as Record<string, unknown>, byId, healed, path, at);
      continue;
    }
    const parsed = ledgerEntrySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InputError(path, at, issue?.path.join('.') || 't', issue?.message ?? 'invalid entry');
    }
    const e = parsed.data;
    switch (e.t) {
      case 'cluster':
        for (const n of e.nodes) {
          if (n.proxyCommand) refuseCommandField(path, at, `nodes.${n.name}.proxyCommand`);
          const hop = n.jumpHosts?.find((h) => h.proxyCommand);
          if (hop) refuseCommandField(path, at, `nodes.${n.name}.jumpHosts.${hop.alias}.proxyCommand`);
        }
        nodes = e.nodes as NodeSpec[];
        reach = {
          ...(e.knownHostsFiles && { knownHostsFiles: e.knownHostsFiles }),
          ...(e.inventory && { inventory: e.inventory }),
          ...(e.clientOnly && { clientOnly: true }),
        };
        break;
      case 'inject':
        times.planned.set(e.record.id, e.at);
        byId.set(e.record.id, structuredClone(e.record) as FaultRecord);
        healed.delete(e.record.id);
        break;
      case 'injected': {
        times.injected.set(e.id, e.at);
        const r = byId.get(e.id);
        if (r) r.undo = { ...r.undo, ...e.undo };
        break;
      }
      case 'evidence': {
        times.evidence.set(e.id, e.at);
        const r = byId.get(e.id);
        if (r) r.evidence = e.evidence as unknown as FaultEvidence;
        break;
      }
      case 'heal': {
        times.healed.set(e.id, e.at);
        healed.add(e.id);
        const r = byId.get(e.id);
        if (r) r.healedAt = e.at;
        break;
      }
      case 'after-heal': {
        const r = byId.get(e.id);
        if (r) r.afterHeal = e.evidence as unknown as FaultEvidence;
        break;
      }
      case 'heal-failed':
        break;
    }
  }
  const records = [...byId.values()];
  return { nodes, ...reach, records, unhealed: records.filter((r) => !healed.has(r.id)), times };
}

/**
 * The run driver's ledger lines (`{at, event: intent|injected|inject-failed|evidence|healed, id, …}`):
 * read into the same state, so `faultline heal --ledger` finishes a killed `faultline test` run too.
 * An intent with no record yet still counts as unhealed: heal by fault id needs nothing more.
 */
const driverEntrySchema = z.strictObject({
  at: z.string().optional(),
  event: z.enum(['intent', 'injected', 'inject-failed', 'evidence', 'healed']),
  id: z.string().min(1),
  spec: recordSchema.shape.spec.optional(),
  record: recordSchema.optional(),
  evidence: evidenceSchema.optional(),
  error: z.string().optional(),
});

function applyDriverEntry(
  raw: Record<string, unknown>,
  byId: Map<string, FaultRecord>,
  healed: Set<string>,
  path: string,
  line: number,
): void {
  const parsed = driverEntrySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(path, line, issue?.path.join('.') || 'event', issue?.message ?? 'invalid entry');
  }
  const e = parsed.data;
  const at = e.at ?? new Date(0).toISOString();
  switch (e.event) {
    case 'intent':
      if (!e.spec) throw new InputError(path, line, 'spec', 'an intent needs the fault spec');
      byId.set(e.id, { id: e.id, spec: e.spec, nodes: [], injectedAt: at, undo: {} } as FaultRecord);
      healed.delete(e.id);
      break;
    case 'injected':
      if (e.record) byId.set(e.id, structuredClone(e.record) as FaultRecord);
      break;
    case 'inject-failed':
      // It may have been applied on some nodes before failing: leave it unhealed (heal is idempotent).
      break;
    case 'evidence': {
      const r = byId.get(e.id);
      if (r && e.evidence) r.evidence = e.evidence as unknown as FaultEvidence;
      break;
    }
    case 'healed': {
      healed.add(e.id);
      const r = byId.get(e.id);
      if (r) r.healedAt = at;
      break;
    }
  }
}
