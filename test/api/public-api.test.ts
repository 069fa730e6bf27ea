import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { describePublicApi, entryPoints } from './public-api.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const snapshot = fileURLToPath(new URL('public-api.snapshot.txt', import.meta.url));
const UPDATE = 'FAULTLINE_UPDATE_API_SNAPSHOT=1 npx ava test/api/public-api.test.ts';

let described: string | undefined;
const current = () => (described ??= describePublicApi(root));

test.serial(
  'the public API (faultline and every subpath of package.json exports) matches its snapshot',
  (t) => {
    t.timeout(5 * 60_000, 'the TypeScript program over the public entry points on a loaded machine');
    const now = current();
    if (process.env.FAULTLINE_UPDATE_API_SNAPSHOT === '1') writeFileSync(snapshot, now);
    const committed = existsSync(snapshot) ? readFileSync(snapshot, 'utf8') : '';
    t.true(
      now === committed,
      `the public API changed (test/api/public-api.snapshot.txt). If the change is deliberate, update the snapshot with \`${UPDATE}\`, review its diff and commit it (and say so in docs/plugins.md).`,
    );
    if (now !== committed) t.log(firstDifference(committed, now));
  },
);

test.serial('the root export stays small: at most 40 names', (t) => {
  t.timeout(5 * 60_000);
  const root40 = /^\/\/ ---- faultline \((\d+) names\)$/m.exec(current());
  t.truthy(root40, 'the description lists the root entry point');
  t.true(Number(root40?.[1]) <= 40, `faultline exports ${root40?.[1]} names`);
});

test('every entry point of package.json exports has its source', (t) => {
  for (const e of entryPoints(root)) t.true(existsSync(e.file), `${e.name}: ${e.file}`);
});

function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `line ${i + 1}:\n- ${x[i] ?? '(none)'}\n+ ${y[i] ?? '(none)'}`;
  return '';
}
