import test from 'ava';
import { execa } from 'execa';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

test('faultline --help lists the program and exits 0', async (t) => {
  const r = await execa('node', [bin, '--help'], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
  t.is(r.exitCode, 0);
  t.regex(r.stdout, /Usage: faultline/);
});

test('an unknown command is a usage error with exit 254', async (t) => {
  const r = await execa('node', [bin, 'no-such-command'], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /error: (unknown command|too many arguments)/);
});
