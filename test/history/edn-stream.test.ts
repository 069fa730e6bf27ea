import { readFileSync } from 'node:fs';
import test from 'ava';
import { EdnSyntaxError, ednHistoryValues } from '../../src/core/history/edn.ts';
import { streamEdnHistory } from '../../src/core/history/edn-stream.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('reference histories: EDN streaming');

async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function streamed(text: string, size: number) {
  const out: { value: unknown; line: number }[] = [];
  for await (const batch of streamEdnHistory(chunksOf(text, size))) out.push(...batch);
  return out;
}

const whole = (text: string) => [...ednHistoryValues(text)].map((x) => x.value);

fixtureTest(
  'streaming gives the same values as parsing the whole text, whatever the chunk boundaries',
  async (t) => {
    const cases: [string, number[]][] = [
      ['elle/histories/jepsen/bank.edn', [7, 64, 4096]], // bare maps, symbols and nested maps
      ['elle/histories/jepsen/set.edn', [1, 3, 50]], // one vector, with comments
      ['elle/histories/jepsen/long-fork.edn', [1, 5]],
      ['elle/histories/custom/comments.edn', [2, 11]], // a set spread over lines
      ['porcupine/kv/c10-ok.txt', [13]],
    ];
    for (const [rel, sizes] of cases) {
      const text = readFileSync(fixture(rel), 'utf8');
      const expected = whole(text);
      t.true(expected.length > 0);
      for (const size of sizes) {
        const got = await streamed(text, size);
        t.deepEqual(
          got.map((x) => x.value),
          expected,
          `${rel} in chunks of ${size}`,
        );
      }
    }
  },
);

test('streamed values carry the line they start on', async (t) => {
  const text = '; header\n[{:a 1}\n ; c\n {:a 2\n  :b "x\ny"}\n {:a 3}]\n';
  const got = await streamed(text, 4);
  t.deepEqual(
    got.map((x) => x.line),
    [2, 4, 7], // the string holds a line break: line 6 is `y"}`
  );
  t.deepEqual((got[1]!.value as { b: string }).b, 'x\ny');
});

test('a truncated file is an error naming the line, not a silent short history', async (t) => {
  const text = '{:type :invoke, :f :read}\n{:type :ok,\n :f :read, :value [1 2';
  for (const size of [5, 1000]) {
    const err = await t.throwsAsync(streamed(text, size), { instanceOf: EdnSyntaxError });
    t.is(err!.line, 3, `chunks of ${size}`);
    t.regex(err!.reason, /unterminated/);
  }
  await t.throwsAsync(streamed('[{:a 1}\n{:a 2}\n', 4), {
    message: /line 1: unterminated vector holding the history/,
  });
  await t.throwsAsync(streamed('[{:a 1}]\n{:a 2}\n', 3), { message: /text after the history vector/ });
  await t.throwsAsync(streamed('{:a 1}\n{:b ]}\n', 3), { message: /^line 2: map has a key with no value/ });
});
