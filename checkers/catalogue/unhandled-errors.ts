import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Checker } from '../types.ts';
import { fmt, isClient, isPlainMap, parseOptions, result } from './common.ts';

/**
 * Jepsen's `unhandled-exceptions`: `info` ops (outcome unknown) grouped by error class, most frequent
 * first, with a count and the first example. Informational: always valid. The class is the first
 * element of a vector error (`[:duplicate-key "…"]` → "duplicate-key"), a `class`/`type`/`name` field of a
 * map, or a string up to its first colon, with digits masked so "timeout after 503ms" groups together.
 */
export const unhandledErrorsOptionsSchema = z.strictObject({});
export type UnhandledErrorsOptions = z.input<typeof unhandledErrorsOptionsSchema>;

export function errorClass(error: unknown): string {
  if (error === null || error === undefined) return '(no error recorded)';
  if (Array.isArray(error)) return errorClass(error[0]);
  if (isPlainMap(error)) {
    for (const f of ['class', 'type', 'name', 'code']) {
      const v = error[f];
      if (typeof v === 'string' || typeof v === 'number') return String(v);
    }
    return JSON.stringify(error).slice(0, 80);
  }
  const s = String(error);
  const head = s.split(':')[0] ?? s;
  return head.replace(/\d+/g, 'N').slice(0, 120);
}

export const unhandledErrorsChecker: Checker<UnhandledErrorsOptions> = {
  name: 'unhandled-errors',
  check(ops: readonly Operation[], rawOptions: UnhandledErrorsOptions) {
    parseOptions('unhandled-errors', unhandledErrorsOptionsSchema, rawOptions);
    const groups = new Map<string, { count: number; example: number; error: unknown; f: Set<string> }>();
    let info = 0;
    let consumed = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      consumed++;
      if (op.type !== 'info') continue;
      info++;
      const cls = errorClass(op.error);
      const g = groups.get(cls);
      if (g === undefined)
        groups.set(cls, { count: 1, example: op.invokeIndex, error: op.error ?? null, f: new Set([op.f]) });
      else {
        g.count++;
        g.f.add(op.f);
      }
    }
    const list = [...groups]
      .map(([cls, g]) => ({
        class: cls,
        count: g.count,
        exampleOp: g.example,
        example: g.error,
        f: [...g.f],
      }))
      .sort((a, b) => b.count - a.count);
    const top = list
      .slice(0, 3)
      .map((g) => `${fmt(g.count)}× ${g.class}`)
      .join(', ');
    return result(
      'unhandled-errors',
      true,
      `unhandled-errors: ${fmt(info)} info ops of ${fmt(consumed)} client ops in ${list.length} error classes${top ? `: ${top}` : ''}`,
      'Informational only: never fails; says nothing about what the indeterminate ops did.',
      [],
      { opsConsumed: consumed, infoCount: info, groups: list.slice(0, 50) },
    );
  },
};
