import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelOptions } from '../../checkers/linearizability/models/index.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { fixturesDir, fixturesPresent } from '../helpers/fixtures.ts';

/**
 * Porcupine's reference histories (shared/fixtures/porcupine) and their known verdicts. The etcd logs
 * are one cas-register starting at nil, checked with Porcupine's etcd model semantics (a nil read saw the
 * key absent, a failed cas saw another value); the kv files are the partitioned kv model.
 */
export const porcupineDir = join(fixturesDir, 'porcupine');

export interface PorcupineFixture {
  /** Path relative to the porcupine fixture directory, as in expected.json. */
  path: string;
  file: string;
  model: 'cas-register' | 'kv';
  /** The model options that give Porcupine's semantics. */
  options: ModelOptions;
  format: 'porcupine-etcd' | 'porcupine-kv';
  linearizable: boolean;
}

/** Porcupine's etcd model: a read of nil means the key did not exist; a failed cas saw another value. */
export const PORCUPINE_ETCD: ModelOptions = { nilRead: 'value', failedCas: 'mismatch' };

/** Every Porcupine fixture with its verdict; none when the reference fixtures are absent. */
export function porcupineFixtures(): PorcupineFixture[] {
  if (!fixturesPresent) return [];
  const expected = JSON.parse(readFileSync(join(porcupineDir, 'expected.json'), 'utf8')) as Record<
    string,
    { model: string; linearizable: boolean }
  >;
  const present = [
    ...readdirSync(join(porcupineDir, 'jepsen')).map((f) => `jepsen/${f}`),
    ...readdirSync(join(porcupineDir, 'kv')).map((f) => `kv/${f}`),
  ].sort();
  return present.map((path) => {
    const entry = expected[path];
    if (!entry) throw new Error(`${path}: no verdict in expected.json`);
    const kv = entry.model === 'kv';
    return {
      path,
      file: join(porcupineDir, path),
      model: kv ? 'kv' : 'cas-register',
      options: kv ? {} : PORCUPINE_ETCD,
      format: kv ? 'porcupine-kv' : 'porcupine-etcd',
      linearizable: entry.linearizable,
    };
  });
}

export async function loadFixtureOps(fixture: PorcupineFixture): Promise<Operation[]> {
  const events = await loadHistory(fixture.file, { format: fixture.format });
  return pairEvents(events).ops;
}
