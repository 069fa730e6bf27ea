import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { colorWanted, configureLogger, log, nodeSet } from '../../src/core/util/log.ts';

/**
 * The terminal reads as text: human log lines on stderr whether or not it is a terminal, colour only
 * where wanted (never with NO_COLOR), JSON only when asked, and one line for the same warning about
 * every node.
 */

function capture(opts: { color?: boolean; json?: boolean; level?: string } = {}) {
  const lines: string[] = [];
  configureLogger({ ...opts, color: opts.color ?? false, out: { write: (s: string) => lines.push(s) } });
  return lines;
}

test.afterEach.always(() => {
  configureLogger({ color: false });
});

test('node sets: runs of three or more become ranges', (t) => {
  t.is(nodeSet(['n3', 'n1', 'n2', 'n5', 'n4']), 'n1–n5');
  t.is(nodeSet(['n1', 'n2', 'n3', 'n5']), 'n1–n3 n5');
  t.is(nodeSet(['n1', 'n2']), 'n1 n2');
  t.is(nodeSet(['db-a', 'n2', 'n1']), 'db-a n1 n2');
});

test('the same warning about each node is one line: on n1–n5: …', async (t) => {
  const lines = capture();
  for (const node of ['n2', 'n1', 'n4', 'n3', 'n5'])
    log().warn({ node, binary: '/usr/bin/etcd' }, 'libfaketime cannot move this binary’s clock');
  log().warn({ node: 'n2', err: 'timeout' }, 'could not collect log');
  log().info({ nodes: 5 }, 'local cluster up');
  t.is(lines.length, 3);
  t.regex(
    lines[0] ?? '',
    /^\[\d\d:\d\d:\d\d\] WARN: on n1–n5: libfaketime cannot move this binary’s clock \{"binary":"\/usr\/bin\/etcd"\}\n$/,
  );
  t.regex(lines[1] ?? '', /WARN: could not collect log \{"node":"n2","err":"timeout"\}/);
  t.regex(lines[2] ?? '', /INFO: local cluster up \{"nodes":5\}/);
  // A lone warning is printed once its moment to group has passed.
  log().warn({ node: 'n4' }, 'disk almost full');
  await new Promise((r) => setTimeout(r, 400));
  t.is(lines.length, 4);
  t.regex(lines[3] ?? '', /WARN: disk almost full \{"node":"n4"\}/);
});

test('colour: on a terminal unless NO_COLOR; FORCE_COLOR forces it; escape codes only when on', (t) => {
  t.true(colorWanted({}, true));
  t.false(colorWanted({}, false));
  t.false(colorWanted({ NO_COLOR: '1' }, true));
  t.true(colorWanted({ NO_COLOR: '' }, true), 'an empty NO_COLOR does not count');
  t.true(colorWanted({ FORCE_COLOR: '1' }, false));
  const plain = capture({ color: false });
  log().info('plain');
  t.false(plain.join('').includes('\u001b['));
  const coloured = capture({ color: true });
  log().info('coloured');
  t.true(coloured.join('').includes('\u001b['));
});

test('JSON lines only when asked; FAULTLINE_LOG_LEVEL sets the level', (t) => {
  const saved = process.env.FAULTLINE_LOG_LEVEL;
  try {
    process.env.FAULTLINE_LOG_LEVEL = 'warn';
    const lines = capture();
    log().info('hidden');
    log().warn('shown');
    t.is(lines.length, 1);
    t.regex(lines[0] ?? '', /WARN: shown/);
  } finally {
    if (saved === undefined) delete process.env.FAULTLINE_LOG_LEVEL;
    else process.env.FAULTLINE_LOG_LEVEL = saved;
  }
});

test('the CLI logs human lines on a piped stderr, JSON only with --log-json', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-log-'));
  try {
    const input = join(dir, 'torn.jsonl');
    await writeFile(
      input,
      '{"index":0,"type":"invoke","f":"read","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}\n{"index":1,"ty',
    );
    const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
    const args = ['history', 'convert', input, join(dir, 'out.jsonl'), '--allow-torn-tail'];
    const env = { FAULTLINE_FROM_SOURCE: '1', NO_COLOR: '1' };
    const human = await execa('node', [bin, ...args], { reject: false, env });
    t.is(human.exitCode, 0, human.stderr);
    t.regex(human.stderr, /^\[\d\d:\d\d:\d\d\] WARN: .*torn\.jsonl:2: torn last line dropped/m);
    t.regex(human.stderr, /INFO: converted 1 events/);
    t.false(/^\{/m.test(human.stderr), 'no JSON line');
    t.false(human.stderr.includes('\u001b['), 'no colour on a pipe with NO_COLOR');
    const json = await execa('node', [bin, '--log-json', ...args], { reject: false, env });
    const records = json.stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    t.true(records.some((r) => r.level === 40 && /torn last line dropped/.test(r.msg)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
