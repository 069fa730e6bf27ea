import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  fmt,
  getPath,
  isClient,
  isPlainMap,
  MAX_ANOMALIES,
  parseOptions,
  pathGetter,
  pushCapped,
  result,
  valueKey,
} from './common.ts';

/**
 * Session guarantees (oracle patterns 7 and 8), per process = session and per key, in the session's own
 * invocation order:
 *  - monotonic reads: a read's version is never below an earlier read's;
 *  - read-your-writes: a read's version is never below the version of the session's own earlier ok write.
 * Order comes from the SUT's own version (at `versionPath` in ok outputs: `{value, version}` objects or
 * similar), never from recorder clocks. Without versions only one thing can be checked, assuming write
 * values are unique: a session reading back its own write after it acknowledged a newer one (`stale-own-write`).
 *
 * A key is `op.key`, else the first element of a `[k, v]` input, else the single register "".
 */
export const sessionOptionsSchema = z.strictObject({
  writeF: z.array(z.string()).default(['write', 'put', 'set']),
  readF: z.array(z.string()).default(['read', 'get']),
  versionPath: z.string().default('version'),
  valuePath: z.string().default('value'),
});
export type SessionOptions = z.input<typeof sessionOptionsSchema>;

const SCOPE =
  "Per-session order only: cross-session anomalies (causality, real-time) are invisible, a reconnect not marked as a new process is judged as one session, and without SUT versions only stale reads of a session's own overwritten writes are caught.";

function keyOf(op: Operation, isWrite: boolean): string {
  if (op.key !== undefined) return op.key;
  if (Array.isArray(op.input) && (op.input.length === 2 || (!isWrite && op.input.length >= 1)))
    return String(op.input[0]);
  return '';
}

function versionOf(output: unknown, get: (v: unknown) => unknown): number | null {
  if (!isPlainMap(output)) return null;
  const v = get(output);
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function writeValueOf(op: Operation): unknown {
  if (op.key === undefined && Array.isArray(op.input) && op.input.length === 2) return op.input[1];
  return op.input;
}

function readValueOf(op: Operation, valuePath: string): unknown {
  let out = op.output;
  if (isPlainMap(out) && valuePath in out) out = getPath(out, valuePath);
  if (op.key === undefined && Array.isArray(out) && out.length === 2 && Array.isArray(op.input)) out = out[1];
  return out;
}

interface SessionKeyState {
  lastReadVersion: number;
  lastReadOp: number;
  ownWriteVersion: number;
  ownWriteOp: number;
  /** Fallback without versions: own written value → its sequence number in this session. */
  ownWrites: Map<unknown, number> | null;
  ownSeq: number;
}

export const sessionChecker: Checker<SessionOptions> = {
  name: 'session',
  check(ops: readonly Operation[], rawOptions: SessionOptions) {
    const o = parseOptions('session', sessionOptionsSchema, rawOptions);
    const writeF = new Set(o.writeF);
    const readF = new Set(o.readF);
    // How many ops wrote each (key, value): the version-less fallback only trusts unique values.
    // Built on first use, since versioned histories never need it.
    let writersCache: Map<unknown, number> | null = null;
    const writers = (): Map<unknown, number> => {
      if (writersCache !== null) return writersCache;
      const m = new Map<unknown, number>();
      for (const op of ops) {
        if (!isClient(op) || !writeF.has(op.f) || op.type === 'fail') continue;
        const k = valueKey([keyOf(op, true), writeValueOf(op)]);
        m.set(k, (m.get(k) ?? 0) + 1);
      }
      writersCache = m;
      return m;
    };
    let versioned = 0;
    const getVersion = pathGetter(o.versionPath);
    // process → key → state: nested maps avoid building a composite string key per op.
    const state = new Map<unknown, Map<string, SessionKeyState>>();

    const anomalies: Anomaly[] = [];
    let reads = 0;
    let writes = 0;
    let monotonic = 0;
    let ryw = 0;
    let staleOwn = 0;
    for (const op of ops) {
      if (!isClient(op) || op.type !== 'ok') continue;
      const isWrite = writeF.has(op.f);
      const isRead = !isWrite && readF.has(op.f);
      if (!isWrite && !isRead) continue;
      const key = keyOf(op, isWrite);
      let perProcess = state.get(op.process);
      if (perProcess === undefined) {
        perProcess = new Map();
        state.set(op.process, perProcess);
      }
      let s = perProcess.get(key);
      if (s === undefined) {
        s = {
          lastReadVersion: Number.NEGATIVE_INFINITY,
          lastReadOp: -1,
          ownWriteVersion: Number.NEGATIVE_INFINITY,
          ownWriteOp: -1,
          ownWrites: null,
          ownSeq: 0,
        };
        perProcess.set(key, s);
      }
      const version = versionOf(op.output, getVersion);
      if (version !== null) versioned++;
      if (isWrite) {
        writes++;
        if (version !== null && version > s.ownWriteVersion) {
          s.ownWriteVersion = version;
          s.ownWriteOp = op.invokeIndex;
        }
        // The version-less fallback needs the session's own write order; versioned writes do not.
        if (version === null) {
          if (s.ownWrites === null) s.ownWrites = new Map();
          s.ownWrites.set(valueKey(writeValueOf(op)), ++s.ownSeq);
        }
        continue;
      }
      reads++;
      if (version !== null) {
        if (version < s.lastReadVersion) {
          monotonic++;
          if (anomalies.length < MAX_ANOMALIES)
            pushCapped(anomalies, {
              type: 'non-monotonic-read',
              explanation: `process ${String(op.process)} read key ${JSON.stringify(key)} at version ${version} (op ${op.invokeIndex}) after reading version ${s.lastReadVersion} (op ${s.lastReadOp})`,
              ops: [op.invokeIndex, s.lastReadOp],
              key,
            });
        }
        if (version < s.ownWriteVersion) {
          ryw++;
          if (anomalies.length < MAX_ANOMALIES)
            pushCapped(anomalies, {
              type: 'read-your-writes',
              explanation: `process ${String(op.process)} read key ${JSON.stringify(key)} at version ${version} (op ${op.invokeIndex}), older than its own write at version ${s.ownWriteVersion} (op ${s.ownWriteOp})`,
              ops: [op.invokeIndex, s.ownWriteOp],
              key,
            });
        }
        if (version > s.lastReadVersion) {
          s.lastReadVersion = version;
          s.lastReadOp = op.invokeIndex;
        }
        continue;
      }
      if (s.ownWrites === null) continue;
      const value = readValueOf(op, o.valuePath);
      const seq = s.ownWrites.get(valueKey(value));
      if (seq !== undefined && seq < s.ownSeq && writers().get(valueKey([key, value])) === 1) {
        staleOwn++;
        if (anomalies.length < MAX_ANOMALIES)
          pushCapped(anomalies, {
            type: 'stale-own-write',
            explanation: `process ${String(op.process)} read ${JSON.stringify(value)} for key ${JSON.stringify(key)} (op ${op.invokeIndex}), its own write that it had already overwritten`,
            ops: [op.invokeIndex],
            key,
          });
      }
    }
    const bad = monotonic + ryw + staleOwn;
    const valid = bad > 0 ? false : reads === 0 ? 'unknown' : true;
    return result(
      'session',
      valid,
      `session: ${fmt(state.size)} sessions, ${fmt(reads)} ok reads, ${fmt(writes)} ok writes, ${fmt(versioned)} with SUT versions: ${fmt(monotonic)} non-monotonic reads, ${fmt(ryw)} read-your-writes violations, ${fmt(staleOwn)} stale own writes`,
      SCOPE,
      anomalies,
      {
        opsConsumed: reads + writes,
        sessions: state.size,
        reads,
        writes,
        versioned,
        nonMonotonicReads: monotonic,
        readYourWritesViolations: ryw,
        staleOwnWrites: staleOwn,
      },
    );
  },
};
