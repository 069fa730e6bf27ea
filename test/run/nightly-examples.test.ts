import { readFileSync } from 'node:fs';
import test from 'ava';
import { execa } from 'execa';
import { parse } from 'yaml';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const dir = new URL('../../examples/nightly/', import.meta.url).pathname;
const help = async (...cmd: string[]) =>
  (await execa('node', [bin, ...cmd, '--help'], { env: { FAULTLINE_FROM_SOURCE: '1' } })).stdout;

/** Every faultline command line in the CI examples uses flags the commands really have. */
test('the GitHub Actions and systemd examples call faultline with real commands and flags', async (t) => {
  const workflow = parse(readFileSync(`${dir}github-actions.yml`, 'utf8')) as {
    jobs: { nightly: { steps: { run?: string }[] } };
  };
  const lines = [
    ...workflow.jobs.nightly.steps.flatMap((s) => (s.run ? [s.run] : [])),
    ...readFileSync(`${dir}faultline-nightly.service`, 'utf8')
      .split('\n')
      .filter((l) => /^Exec/.test(l)),
  ].filter((l) => /faultline (run|sessions)/.test(l));
  t.true(lines.length >= 4);
  for (const line of lines) {
    const words = line.replace(/\s+/g, ' ').match(/faultline ((?:sessions )?\w+)(.*?)(?:>>|\|\||$)/)!;
    const text = await help(...words[1]!.split(' '));
    for (const flag of words[2]!.match(/--[a-z-]+/g) ?? [])
      t.true(text.includes(flag), `${words[1]} ${flag}`);
  }
});
