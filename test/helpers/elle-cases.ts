import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ElleOptions } from '../../checkers/elle/index.ts';
import { fixture, fixturesPresent } from './fixtures.ts';

/**
 * The Elle cases of shared/fixtures/elle/cases.json (options in Elle's own names, see the fixtures
 * README) and their translation into faultline's ElleOptions.
 */
const caseSchema = z.looseObject({
  id: z.string(),
  history: z.string(),
  workload: z.string(),
  checker: z.string(),
  options: z.looseObject({
    'consistency-models': z.array(z.string()).optional(),
    anomalies: z.array(z.string()).optional(),
    'cycle-search-timeout': z.number().optional(),
    'linearizable-keys?': z.boolean().optional(),
    'sequential-keys?': z.boolean().optional(),
    'wfr-keys?': z.boolean().optional(),
  }),
  expectedSource: z.string(),
  valid: z.union([z.boolean(), z.literal('unknown')]),
  anomalyTypes: z.array(z.string()).nullable(),
  not: z.array(z.string()).optional(),
});
export type ElleCase = z.infer<typeof caseSchema>;

/** Every case of cases.json (Elle's and the other checkers'); none when the reference fixtures are absent. */
export function fixtureCases(): ElleCase[] {
  if (!fixturesPresent) return [];
  return z.array(caseSchema).parse(JSON.parse(readFileSync(fixture('elle/cases.json'), 'utf8')));
}

export function elleOptionsOf(c: ElleCase): ElleOptions {
  const o = c.options;
  return {
    workload: c.workload as ElleOptions['workload'],
    ...(o['consistency-models'] ? { consistencyModels: o['consistency-models'] } : {}),
    ...(o.anomalies ? { anomalies: o.anomalies } : {}),
    ...(o['cycle-search-timeout'] ? { cycleSearchTimeoutMs: o['cycle-search-timeout'] } : {}),
    ...(o['linearizable-keys?'] ? { linearizableKeys: true } : {}),
    ...(o['sequential-keys?'] ? { sequentialKeys: true } : {}),
    ...(o['wfr-keys?'] ? { wfrKeys: true } : {}),
  };
}
