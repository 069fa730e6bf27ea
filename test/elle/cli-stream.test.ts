import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { execa } from 'execa';
import { runCheckers, runCheckersOnStream } from '../../checkers/compose.ts';
import { simulate, toEvents } from '../../checkers/elle/simulate.ts';
import type { CheckResult } from '../../checkers/types.ts';
import { eventLine } from '../../src/core/history/jsonl.ts';
import { pairEventStream, pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory, readEventBatches } from '../../src/core/history/read.ts';
import { conformance } from '../helpers/conformance.ts';
import { elleOptionsOf, fixtureCases } from '../helpers/elle-cases.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('Elle reference cases: streamed and array checks');

/**
 * `faultline check --checker elle FILE` streams the file into the checker (no event or Operation array).
 * Its results and artifacts must be exactly those of the array path (the whole history loaded, paired,
 * and given to the checker), on every Elle fixture case and on generated JSONL and gzipped files.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

const cases = fixtureCases().filter((c) => c.checker === 'elle');

/** A result without its timings, artifact paths relative to their directory. */
function comparable(r: CheckResult, outDir: string): unknown {
  const copy = JSON.parse(JSON.stringify(r)) as CheckResult;
  delete copy.stats.seconds;
  delete copy.stats.phaseSeconds;
  if (copy.artifacts) copy.artifacts = copy.artifacts.map((a) => relative(outDir, a));
  const m = copy.stats.minimalHistory as { file?: string; recheck?: string } | undefined;
  if (m?.file) m.file = relative(outDir, m.file);
  if (m?.recheck) m.recheck = m.recheck.replace(outDir, 'OUT');
  return copy;
}

/** Every file under dir, by relative path, with its contents. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** The array path: the whole history loaded, paired, and given to the checker. */
async function arrayPath(file: string, options: Record<string, unknown>, outDir: string) {
  const { ops } = pairEvents(await loadHistory(file));
  const run = await runCheckers([{ name: 'elle', options }], ops, { outDir }, { badOptions: 'throw' });
  return { ops: ops.length, result: run.results[0]! };
}

fixtureTest(
  'the streaming runner equals the array path on every Elle fixture case, artifacts byte for byte',
  async (t) => {
    t.is(cases.length, 13);
    for (const c of cases) {
      const file = fixture(`elle/${c.history}`);
      const options = elleOptionsOf(c);
      const dir = mkdtempSync(join(tmpdir(), 'elle-stream-'));
      const streamedOut = join(dir, 'streamed');
      const arrayOut = join(dir, 'array');
      // What `faultline check FILE --checker elle` runs.
      const streamed = await runCheckersOnStream(
        [{ name: 'elle', options }],
        (add) => pairEventStream(readEventBatches(file), add),
        { outDir: streamedOut },
        { badOptions: 'throw' },
      );
      if (!streamed) return t.fail('elle has a stream form');
      const array = await arrayPath(file, options, arrayOut);
      t.is(streamed.ops, array.ops, c.id);
      t.deepEqual(comparable(streamed.results[0]!, streamedOut), comparable(array.result, arrayOut), c.id);
      t.deepEqual(files(streamedOut), files(arrayOut), c.id);
    }
  },
);

/** The CLI (streamed) against the array path in this process, on one history file. */
async function sameAsArrayPath(
  t: import('ava').ExecutionContext,
  file: string,
  options: Record<string, unknown>,
) {
  const dir = mkdtempSync(join(tmpdir(), 'elle-stream-'));
  const optionsFile = join(dir, 'options.json');
  writeFileSync(optionsFile, JSON.stringify({ elle: options }));
  const streamedOut = join(dir, 'streamed');
  const cli = await execa(
    'node',
    [bin, 'check', file, '--checker', 'elle', '--options', optionsFile, '--out', streamedOut, '--json'],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    },
  );
  t.true([0, 1, 2].includes(cli.exitCode ?? -1), cli.stderr);
  const streamed = JSON.parse(cli.stdout) as { ops: number; results: { elle: CheckResult } };
  const arrayOut = join(dir, 'array');
  const array = await arrayPath(file, options, arrayOut);
  t.is(streamed.ops, array.ops);
  t.deepEqual(comparable(streamed.results.elle, streamedOut), comparable(array.result, arrayOut));
  t.deepEqual(files(streamedOut), files(arrayOut));
  return streamed.results.elle;
}

test('a generated JSONL history and its gzipped copy: streamed results equal the array path', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'elle-stream-gen-'));
  const file = join(dir, 'history.jsonl');
  const events = toEvents(
    simulate({ isolation: 'snapshot-isolation', txns: 5_000, concurrency: 10, seed: 11, infoRate: 0.02 }),
  );
  const text = `${events.map(eventLine).join('\n')}\n`;
  writeFileSync(file, text);
  writeFileSync(`${file}.gz`, gzipSync(text));
  const options = { workload: 'list-append', consistencyModels: ['strict-serializable'] };
  const plain = await sameAsArrayPath(t, file, options);
  t.is(plain.valid, false);
  t.true((plain.stats.txns as number) > 4_900);
  const gz = await sameAsArrayPath(t, `${file}.gz`, options);
  // The two were written to different directories: compare without paths.
  const noPaths = (r: CheckResult) => {
    const c = comparable(r, '') as CheckResult;
    const m = c.stats.minimalHistory as Record<string, unknown> | undefined;
    if (m) {
      delete m.file;
      delete m.recheck;
    }
    return { ...c, artifacts: [] };
  };
  t.deepEqual(noPaths(gz), noPaths(plain));
});
