import { spawnSync } from 'node:child_process';
import test from 'ava';
import fc from 'fast-check';
import { envPrefix, ShellQuoteError, shellJoin, shellQuote } from '../../src/core/control/quote.ts';

/** Have a real POSIX shell print each argument followed by NUL; return what it printed. */
function shellRoundTrip(args: readonly string[]): string[] {
  const script = `printf '%s\\0' ${args.map(shellQuote).join(' ')}`;
  const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sh failed: ${r.stderr}`);
  const parts = r.stdout.split('\0');
  parts.pop();
  return parts;
}

const adversarial = [
  '',
  ' ',
  "'",
  "''",
  '"',
  '$(touch /tmp/faultline-quote-pwned)',
  '`touch /tmp/faultline-quote-pwned`',
  '$HOME',
  ['$', '{IFS}'].join(''),
  'a\nb',
  '\n',
  'x; rm -rf /nonexistent-faultline',
  "it's",
  '\\',
  "\\'",
  '*',
  '~',
  '-n',
  '--',
  '!!',
  'é∂ƒ😀中文',
  '\t\r\v\f',
  '|&<>()#',
];

test('adversarial strings come back from a real shell byte for byte', (t) => {
  t.deepEqual(shellRoundTrip(adversarial), adversarial);
});

test('property: any NUL-free string (full Unicode) survives sh -c', (t) => {
  fc.assert(
    fc.property(
      fc.array(
        fc.string({ unit: 'binary' }).filter((s) => !s.includes('\0')),
        { minLength: 1, maxLength: 8 },
      ),
      (args) => {
        // Lone surrogates cannot be encoded as UTF-8; compare what UTF-8 can carry.
        const normal = args.map((a) => Buffer.from(a, 'utf8').toString('utf8'));
        t.deepEqual(shellRoundTrip(normal), normal);
      },
    ),
    { numRuns: 60 },
  );
});

test('property: quoting is idempotent in meaning (quote of a quote is one argument)', (t) => {
  fc.assert(
    fc.property(
      fc.string().filter((s) => !s.includes('\0')),
      (s) => {
        const once = shellQuote(s);
        t.deepEqual(shellRoundTrip([once]), [once]);
      },
    ),
    { numRuns: 40 },
  );
});

test('NUL is refused, not truncated', (t) => {
  t.throws(() => shellQuote('a\0b'), { instanceOf: ShellQuoteError });
  t.throws(() => shellJoin(['ok', '\0']), { instanceOf: ShellQuoteError });
});

test('plain words stay unquoted, numbers are accepted', (t) => {
  t.is(shellQuote('etcd-3.5_x/y:z'), 'etcd-3.5_x/y:z');
  t.is(shellQuote(42), '42');
  t.is(shellJoin(['echo', 'a b']), "echo 'a b'");
});

test('envPrefix quotes values and rejects names that cannot be quoted', (t) => {
  const prefix = envPrefix({ A: 'x y', B_2: "it's" });
  const r = spawnSync('/bin/sh', ['-c', `${prefix}printf '%s|%s' "$A" "$B_2"`], { encoding: 'utf8' });
  t.is(r.stdout, "x y|it's");
  t.throws(() => envPrefix({ 'A;rm': 'x' }), { instanceOf: ShellQuoteError });
  t.is(envPrefix(undefined), '');
});
