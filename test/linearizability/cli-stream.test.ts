import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCheckers, runCheckersOnStream } from '../../checkers/compose.ts';
import type { CheckResult } from '../../checkers/types.ts';
import { pairEventStream, pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory, readEventBatches } from '../../src/core/history/read.ts';
import { conformance } from '../helpers/conformance.ts';
import { porcupineFixtures } from './porcupine-fixtures.ts';

const fixtureTest = conformance('Porcupine histories: streamed and array checks');

/**
 * `faultline check FILE --checker linearizable` streams the file into the checker: ops are encoded into
 * their partitions' columns as they close, and no event or Operation array is kept. The result must be
 * the array path's (whole history loaded, paired, then checked) on every Porcupine fixture, and so must
 * the HTML visualisation, for which the stream form keeps the ops itself.
 */

/** A result without its timings. */
function comparable(r: CheckResult): unknown {
  const copy = JSON.parse(JSON.stringify(r)) as CheckResult;
  delete copy.stats.seconds;
  delete copy.stats.searchMs;
  delete copy.stats.elapsedMs;
  return copy;
}

fixtureTest('the streaming runner equals the array path on every Porcupine fixture', async (t) => {
  const fixtures = porcupineFixtures();
  t.is(fixtures.length, 109);
  for (const f of fixtures) {
    const options = { model: f.model, ...f.options, workers: 0 };
    const requests = [{ name: 'linearizable', options }];
    const { ops } = pairEvents(await loadHistory(f.file, { format: f.format }));
    const array = await runCheckers(requests, ops, {}, { badOptions: 'throw' });
    const streamed = await runCheckersOnStream(
      requests,
      (add) => pairEventStream(readEventBatches(f.file, { format: f.format }), add),
      {},
      { badOptions: 'throw' },
    );
    t.truthy(streamed, 'the linearizability checker has a stream form');
    t.is(streamed?.ops, ops.length, f.path);
    t.is(streamed?.valid, array.valid, f.path);
    t.deepEqual(comparable(streamed!.results[0]!), comparable(array.results[0]!), f.path);
  }
});

fixtureTest('streamed with --html: the same visualisation as the array path', async (t) => {
  const f = porcupineFixtures().find((x) => !x.linearizable && x.model === 'cas-register')!;
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-stream-'));
  const html = (name: string) => ({ model: f.model, ...f.options, workers: 0, htmlPath: join(dir, name) });
  const { ops } = pairEvents(await loadHistory(f.file, { format: f.format }));
  await runCheckers(
    [{ name: 'linearizable', options: html('array.html') }],
    ops,
    {},
    { badOptions: 'throw' },
  );
  const streamed = await runCheckersOnStream(
    [{ name: 'linearizable', options: html('stream.html') }],
    (add) => pairEventStream(readEventBatches(f.file, { format: f.format }), add),
    {},
    { badOptions: 'throw' },
  );
  t.deepEqual(streamed?.results[0]?.artifacts, [join(dir, 'stream.html')]);
  const page = (name: string) => readFileSync(join(dir, name), 'utf8');
  t.true(page('stream.html').length > 10_000);
  t.is(page('stream.html'), page('array.html'));
});
