import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { compose } from '../../checkers/compose.ts';
import { findChecker } from '../../checkers/registry.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture, fixturesPresent } from '../helpers/fixtures.ts';

/**
 * The `checker: "jepsen"` cases of the shared Elle fixtures: each history must get the verdict Jepsen
 * (via elle-cli's test.sh) gave it. Options are translated from Jepsen's names.
 */
const caseSchema = z.looseObject({
  id: z.string(),
  history: z.string(),
  format: z.string(),
  workload: z.string(),
  checker: z.string(),
  options: z.record(z.string(), z.unknown()),
  valid: z.union([z.boolean(), z.literal('unknown')]),
});
const test = conformance("Jepsen checkers on Elle's reference cases");
const cases = fixturesPresent
  ? z.array(caseSchema).parse(JSON.parse(readFileSync(fixture('elle/cases.json'), 'utf8')))
  : [];
const jepsenCases = cases.filter((c) => c.checker === 'jepsen');

function optionsFor(workload: string, o: Record<string, unknown>): Record<string, unknown> {
  if (workload === 'bank') {
    return {
      negativeBalances: o['negative-balances?'] === true,
      ...(typeof o['total-amount'] === 'number' ? { totalAmount: o['total-amount'] } : {}),
    };
  }
  if (workload === 'long-fork') return { groupSize: o['group-size'] };
  return {};
}

test('there are Jepsen cases for counter, set, set-full, bank and long-fork', (t) => {
  t.deepEqual([...new Set(jepsenCases.map((c) => c.workload))].sort(), [
    'bank',
    'counter',
    'long-fork',
    'set',
    'set-full',
  ]);
});

for (const c of jepsenCases) {
  test(`${c.id}: ${c.workload} gives ${String(c.valid)}`, async (t) => {
    const entry = findChecker(c.workload);
    if (!entry) return t.fail(`no checker ${c.workload}`);
    const { checker } = await entry.load();
    const events = await loadHistory(fixture(`elle/${c.history}`));
    const { ops } = pairEvents(events);
    const { valid, results } = await compose(
      { [c.workload]: { checker, options: optionsFor(c.workload, c.options) } },
      ops,
    );
    const r = results[c.workload];
    t.is(valid, c.valid, r?.evidence);
    t.truthy(r?.evidence.startsWith(`${c.workload}:`));
    t.true((r?.scope.length ?? 0) > 20);
    if (c.valid === false) t.true((r?.anomalies.length ?? 0) > 0);
  });
}
