import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * A FIFO or a device given as a plan, inventory, ledger or history is refused before it is opened (a
 * FIFO would block forever, /dev/zero never ends): one line naming the file, exit 254, within seconds.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

test('FIFOs and devices as inputs: one-line error, exit 254, no hang', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-special-'));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const cases: [string[], string][] = [
    [['plan', 'check', fifo], 'plan'],
    [['plan', 'show', fifo], 'plan'],
    [['check', fifo, '--checker', 'stats'], 'history'],
    [['history', 'stats', fifo], 'history'],
    [['history', 'convert', fifo, join(dir, 'out.edn'), '--to', 'edn'], 'history'],
    [['heal', '--ledger', fifo], 'fault ledger'],
    [['doctor', '--inventory', fifo], 'inventory'],
    [['check', '/dev/zero', '--checker', 'stats'], 'history'],
  ];
  for (const [args, what] of cases) {
    const r = await execa('node', [bin, ...args], {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
      timeout: 60_000,
    });
    t.false(r.timedOut ?? false, args.join(' '));
    t.is(r.exitCode, 254, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, new RegExp(`cannot read the ${what}: it is a (FIFO|device), not a regular file$`));
    t.is(r.stderr.trim().split('\n').length, 1);
  }
});
