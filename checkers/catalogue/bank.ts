import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import {
  addDecimals,
  addIntegers,
  compareDecimals,
  decimalText,
  decimalValue,
  type ExactDecimal,
  exactDecimal,
  exactInteger,
} from '../../src/core/history/values.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, isPlainMap, MAX_ANOMALIES, parseOptions, pushCapped, result } from './common.ts';

/**
 * Jepsen's `bank`: transfers between accounts and reads of every balance. Each ok read must show only
 * known accounts, no nil balance, the constant total, and (unless allowed) no negative balance.
 * Transfers themselves are not checked, as in Jepsen.
 *
 * When `accounts` / `totalAmount` are not given (elle-cli's defaults), they are taken from the first ok
 * read and the evidence says so: a first read that is already wrong then hides itself, which is why the
 * plan should state both.
 */
export const bankOptionsSchema = z.strictObject({
  readF: z.string().default('read'),
  accounts: z.array(z.union([z.string(), z.number()])).nullish(),
  totalAmount: z.number().nullish(),
  negativeBalances: z.boolean().default(false),
});
export type BankOptions = z.input<typeof bankOptionsSchema>;

const SCOPE =
  'Checks each read in isolation: lost or duplicated transfers that keep the total, and reads that are consistent but stale, are invisible; transfers are not checked.';

type ErrorKind = 'unexpected-key' | 'nil-balance' | 'wrong-total' | 'negative-value';

/**
 * Sums are exact: integers at any size (a balance past 2^53 is a bigint, never a rounded double), and
 * decimal balances as exact decimals, so 0.1 + 0.2 is the total 0.3 and a correct bank that keeps
 * cents is not read as creating or losing money.
 */
type Amount = number | bigint | ExactDecimal;

function asDecimal(a: Amount): ExactDecimal {
  if (typeof a === 'object') return a;
  return exactDecimal(a) as ExactDecimal;
}

function compareAmounts(a: Amount, b: Amount): number {
  if (typeof a === 'object' || typeof b === 'object' || !Number.isInteger(a) || !Number.isInteger(b))
    return compareDecimals(asDecimal(a), asDecimal(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

function amountText(a: Amount): string {
  return typeof a === 'object' ? decimalText(a) : String(a);
}

export const bankChecker: Checker<BankOptions> = {
  name: 'bank',
  check(ops: readonly Operation[], rawOptions: BankOptions) {
    const o = parseOptions('bank', bankOptionsSchema, rawOptions);
    let accounts: Set<string> | null = o.accounts ? new Set(o.accounts.map(String)) : null;
    let total: Amount | null = o.totalAmount ?? null;
    const inferred: string[] = [];
    let reads = 0;
    let consumed = 0;
    const counts: Record<ErrorKind, number> = {
      'unexpected-key': 0,
      'nil-balance': 0,
      'wrong-total': 0,
      'negative-value': 0,
    };
    const anomalies: Anomaly[] = [];
    let erroneousReads = 0;
    let lowestTotal: Amount | null = null;
    let highestTotal: Amount | null = null;
    // Ops come in invocation order, so "the first ok read" is the first one invoked.
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f !== o.readF) {
        if (op.f === 'transfer') consumed++;
        continue;
      }
      consumed++;
      if (op.type !== 'ok') continue;
      const bal = op.output;
      if (!isPlainMap(bal))
        throw new Error(
          `bank: read op ${op.invokeIndex} returned ${JSON.stringify(bal)}, not a map of balances`,
        );
      reads++;
      const keys = Object.keys(bal);
      if (accounts === null) {
        accounts = new Set(keys);
        inferred.push(`accounts from read op ${op.invokeIndex}`);
      }
      // Integer balances add as numbers (bigints past 2^53); decimal ones, if any, exactly beside them.
      let whole: number | bigint = 0;
      let decimal: ExactDecimal | null = null;
      let nil = false;
      const problems: ErrorKind[] = [];
      for (const k of keys) {
        const v = bal[k];
        if (!accounts.has(k)) problems.push('unexpected-key');
        if (v === null || v === undefined) {
          nil = true;
          continue;
        }
        const integer = exactInteger(v);
        let negative: boolean;
        if (integer !== null) {
          whole = addIntegers(whole, integer);
          negative = integer < 0;
        } else {
          const d = exactDecimal(v);
          if (d === null)
            throw new Error(`bank: read op ${op.invokeIndex}: balance of ${k} is ${JSON.stringify(v)}`);
          decimal = decimal === null ? d : addDecimals(decimal, d);
          negative = d.units < 0n;
        }
        if (negative && !o.negativeBalances) problems.push('negative-value');
      }
      const sum: Amount = decimal === null ? whole : addDecimals(decimal, asDecimal(whole));
      if (nil) problems.push('nil-balance');
      if (total === null && !nil) {
        total = sum;
        inferred.push(`total ${amountText(sum)} from read op ${op.invokeIndex}`);
      }
      if (!nil && total !== null && compareAmounts(sum, total) !== 0) {
        problems.push('wrong-total');
        if (lowestTotal === null || compareAmounts(sum, lowestTotal) < 0) lowestTotal = sum;
        if (highestTotal === null || compareAmounts(sum, highestTotal) > 0) highestTotal = sum;
      }
      const distinct = [...new Set(problems)];
      if (distinct.length > 0) erroneousReads++;
      for (const kind of distinct) {
        counts[kind]++;
        if (anomalies.length < MAX_ANOMALIES)
          pushCapped(anomalies, {
            type: kind,
            explanation:
              kind === 'wrong-total'
                ? `read op ${op.invokeIndex} sums to ${amountText(sum)}, but every read must show the total ${total === null ? '' : amountText(total)}`
                : kind === 'negative-value'
                  ? `read op ${op.invokeIndex} shows a negative balance: ${JSON.stringify(bal)}`
                  : kind === 'nil-balance'
                    ? `read op ${op.invokeIndex} has an account with no balance`
                    : `read op ${op.invokeIndex} shows accounts outside ${JSON.stringify([...accounts])}`,
            ops: [op.invokeIndex],
            balances: bal,
          });
      }
    }
    const valid = erroneousReads > 0 ? false : reads === 0 ? 'unknown' : true;
    const breakdown = (Object.keys(counts) as ErrorKind[])
      .filter((k) => counts[k] > 0)
      .map((k) => `${fmt(counts[k])} ${k}`)
      .join(', ');
    return result(
      'bank',
      valid,
      `bank: ${fmt(reads)} ok reads of ${accounts?.size ?? 0} accounts, total ${total === null ? 'unknown' : amountText(total)}${inferred.length ? ` (inferred: ${inferred.join(', ')})` : ''}: ${fmt(erroneousReads)} bad reads${breakdown ? ` (${breakdown})` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        readCount: reads,
        errorCount: erroneousReads,
        errors: counts,
        totalAmount: total === null ? null : decimalValue(asDecimal(total)),
        accounts: accounts ? [...accounts] : null,
        inferred,
        ...(counts['wrong-total'] > 0 && lowestTotal !== null && highestTotal !== null
          ? {
              lowestTotal: decimalValue(asDecimal(lowestTotal)),
              highestTotal: decimalValue(asDecimal(highestTotal)),
            }
          : {}),
      },
    );
  },
};
