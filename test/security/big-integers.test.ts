import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { bankChecker } from '../../checkers/catalogue/bank.ts';
import { counterChecker } from '../../checkers/catalogue/counter.ts';
import { noLostAckChecker } from '../../checkers/catalogue/no-lost-ack.ts';
import { queueChecker } from '../../checkers/catalogue/queue.ts';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { totalQueueChecker } from '../../checkers/catalogue/total-queue.ts';
import { uniqueIdsChecker } from '../../checkers/catalogue/unique-ids.ts';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import type { CheckResult } from '../../checkers/types.ts';
import { renderReportHtml } from '../../src/app/report/findings-html.ts';
import { renderReport } from '../../src/app/report/findings-markdown.ts';
import { buildReportJson } from '../../src/app/report/report-json.ts';
import { opsByEventIndex, resultHeadline } from '../../src/app/verdict/headline.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { SAMPLE_HEADLINE, sampleSession } from '../report/session-record.ts';

/**
 * Integers beyond 2^53 through the catalogue checkers: 9007199254740993 read back as 9007199254740992
 * (the value a double would hold) is a different value, so a stale or wrong read is never a false VALID,
 * and the evidence names both numbers exactly.
 */
const dir = mkdtempSync(join(tmpdir(), 'fl-sec-big-'));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const A = '9007199254740993';
const B = '9007199254740992';
const MAX63 = '9223372036854775807';
const MAX63_1 = '9223372036854775806';

type Step = [f: string, input: string, output: string, process?: number];

/** Each step is one op: invoke with `input`, then ok with `output`, in turn. */
function history(steps: Step[]): string {
  let i = 0;
  const line = (type: string, f: string, value: string, p: number) =>
    `{"index":${i},"type":"${type}","f":"${f}","value":${value},"process":${p},"time":${i++},"node":null,"faultEpoch":null}`;
  return `${steps.flatMap(([f, input, output, p = 0]) => [line('invoke', f, input, p), line('ok', f, output, p)]).join('\n')}\n`;
}

let n = 0;
async function ops(steps: Step[]) {
  const p = join(dir, `h-${n++}.jsonl`);
  writeFileSync(p, history(steps));
  return pairEvents(await loadHistory(p)).ops;
}

interface Case {
  name: string;
  check: (o: Awaited<ReturnType<typeof ops>>) => CheckResult | Promise<CheckResult>;
  /** A history that is wrong only beyond 2^53, and its twin that is right. */
  bad: (a: string, b: string) => Step[];
  good: (a: string, b: string) => Step[];
}

const CASES: Case[] = [
  {
    name: 'counter: one add read back rounded',
    check: (o) => counterChecker.check(o, {}),
    bad: (a, b) => [
      ['add', a, a],
      ['read', 'null', b, 1],
    ],
    good: (a) => [
      ['add', a, a],
      ['read', 'null', a, 1],
    ],
  },
  {
    name: 'counter: safe adds whose sum passes 2^53',
    check: (o) => counterChecker.check(o, {}),
    bad: () => [
      ['add', '9007199254740991', '9007199254740991'],
      ['add', '2', '2'],
      ['add', '-3', '-3'],
      ['read', 'null', '9007199254740989', 1],
    ],
    good: () => [
      ['add', '9007199254740991', '9007199254740991'],
      ['add', '2', '2'],
      ['add', '-3', '-3'],
      ['read', 'null', '9007199254740990', 1],
    ],
  },
  {
    name: 'set: the final read has the rounded element',
    check: (o) => setChecker.check(o, {}),
    bad: (a, b) => [
      ['add', a, a],
      ['add', '5', '5'],
      ['read', 'null', `{"#set":[${b},5]}`, 1],
    ],
    good: (a) => [
      ['add', a, a],
      ['add', '5', '5'],
      ['read', 'null', `{"#set":[${a},5]}`, 1],
    ],
  },
  {
    name: 'set-full: a read has the rounded element',
    check: (o) => setFullChecker.check(o, {}),
    bad: (a, b) => [
      ['add', a, a],
      ['read', 'null', `[${b}]`, 1],
      ['read', 'null', `[${b}]`, 1],
    ],
    good: (a) => [
      ['add', a, a],
      ['read', 'null', `[${a}]`, 1],
      ['read', 'null', `[${a}]`, 1],
    ],
  },
  {
    name: 'queue: a dequeue returns the rounded value',
    check: (o) => queueChecker.check(o, {}),
    bad: (a, b) => [
      ['enqueue', a, a],
      ['dequeue', 'null', b, 1],
    ],
    good: (a) => [
      ['enqueue', a, a],
      ['dequeue', 'null', a, 1],
    ],
  },
  {
    name: 'total-queue: the drained value is the rounded one',
    check: (o) => totalQueueChecker.check(o, {}),
    bad: (a, b) => [
      ['enqueue', a, a],
      ['dequeue', 'null', b, 1],
    ],
    good: (a) => [
      ['enqueue', a, a],
      ['dequeue', 'null', a, 1],
    ],
  },
  {
    name: 'unique-ids: two ids that a double would merge are distinct, one id twice is not',
    check: (o) => uniqueIdsChecker.check(o, {}),
    bad: (a) => [
      ['generate', 'null', a],
      ['generate', 'null', a, 1],
    ],
    good: (a, b) => [
      ['generate', 'null', a],
      ['generate', 'null', b, 1],
    ],
  },
  {
    name: 'bank: a read whose total differs only beyond 2^53',
    check: (o) => bankChecker.check(o, {}),
    bad: (a, b) => [
      ['read', 'null', `{"x":${a},"y":0}`],
      ['read', 'null', `{"x":${b},"y":0}`, 1],
    ],
    good: (a, b) => [
      ['read', 'null', `{"x":${a},"y":0}`],
      ['read', 'null', `{"x":${b},"y":1}`, 1],
    ],
  },
  {
    name: 'no-lost-ack: the acknowledged write is dumped rounded',
    check: (o) => noLostAckChecker.check(o, {}),
    bad: (a, b) => [
      ['add', a, a],
      ['final-read', 'null', `[${b}]`, 1],
    ],
    good: (a) => [
      ['add', a, a],
      ['final-read', 'null', `[${a}]`, 1],
    ],
  },
];

for (const c of CASES) {
  for (const [a, b] of [
    [A, B],
    [MAX63, MAX63_1],
  ] as const) {
    test(`${c.name} (${a} vs ${b}): INVALID, and its exact twin VALID`, async (t) => {
      const bad = await c.check(await ops(c.bad(a, b)));
      t.is(bad.valid, false, bad.evidence);
      const text = `${bad.evidence}\n${bad.anomalies.map((x) => x.explanation).join('\n')}`;
      // The evidence never prints a rounded neighbour of the values in the history.
      for (const digits of text.match(/\d{16,}/g) ?? [])
        t.true(
          [a, b, '9007199254740991', '9007199254740990', '9007199254740989'].includes(digits) ||
            BigInt(digits) < 2n ** 53n,
          `evidence prints ${digits}: ${text}`,
        );
      t.notThrows(() => JSON.stringify(bad), 'the result serialises to report.json');
      const good = await c.check(await ops(c.good(a, b)));
      t.is(good.valid, true, good.evidence);
      t.notThrows(() => JSON.stringify(good));
    });
  }
}

test('the CLI check of a counter read wrong only beyond 2^53 exits 1 and prints both numbers exactly', async (t) => {
  const p = join(dir, 'cli-counter.jsonl');
  writeFileSync(
    p,
    history([
      ['add', A, A],
      ['read', 'null', B, 1],
    ]),
  );
  const r = await execa('node', [bin, 'check', p, '--checker', 'counter'], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 1, r.stderr || r.stdout);
  t.regex(r.stdout, new RegExp(B));
  t.regex(r.stdout, new RegExp(A));
});

/** Replace every string equal to `from` anywhere in `v` (the sample session's S2 oracle and verdict). */
function replaceStrings(v: unknown, from: string, to: string): unknown {
  if (typeof v === 'string') return v === from ? to : v;
  if (Array.isArray(v)) return v.map((x) => replaceStrings(x, from, to));
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) (v as Record<string, unknown>)[k] = replaceStrings(x, from, to);
  }
  return v;
}

for (const c of [
  {
    name: 'counter',
    check: (o: Awaited<ReturnType<typeof ops>>) => counterChecker.check(o, {}),
    bad: CASES[0],
  },
  {
    name: 'linearizable register',
    check: (o: Awaited<ReturnType<typeof ops>>) => linearizabilityChecker.check(o, { model: 'register' }),
    bad: {
      bad: (a: string, b: string): Step[] => [
        ['write', a, a],
        ['read', 'null', b, 1],
      ],
    },
  },
]) {
  test(`report.md, report.json and report.html carry the ${c.name} finding's numbers exactly`, async (t) => {
    const history = await ops(c.bad?.bad(A, B) ?? []);
    const result = await c.check(history);
    t.is(result.valid, false);
    const headline = resultHeadline(result.anomalies, { ops: opsByEventIndex(history), faults: new Map() });
    t.truthy(headline);
    t.regex(headline ?? '', new RegExp(B), 'the headline names the value read');
    const rec = await sampleSession(mkdtempSync(join(tmpdir(), 'fl-sec-big-report-')));
    replaceStrings(rec, SAMPLE_HEADLINE, headline as string);
    replaceStrings(rec, 'no-lost-ack: 5,000 acked adds, 3 lost', result.evidence);
    const texts = {
      'report.md': renderReport(rec),
      'report.json': JSON.stringify(buildReportJson(rec)),
      'report.html': renderReportHtml(rec),
    };
    for (const [file, text] of Object.entries(texts)) {
      t.true(text.includes(B), `${file} names ${B}`);
      t.true(text.includes(A) || !(headline ?? '').includes(A), `${file} names ${A} where the headline does`);
      for (const digits of text.match(/\d{16,}/g) ?? [])
        t.true([A, B].includes(digits), `${file} prints ${digits}, a rounded neighbour`);
    }
  });
}
