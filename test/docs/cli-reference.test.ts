import { readFileSync } from 'node:fs';
import test from 'ava';
import { CLI_REFERENCE_PATH, currentCliReference } from '../../src/app/cli/reference.ts';

/**
 * docs/cli.md is generated from the commander definitions (`npm run docs:cli`). When a command, an option
 * or a help text changes and the file is not regenerated, this fails and says how to fix it.
 */
test('docs/cli.md is what npm run docs:cli writes from the command definitions', async (t) => {
  const committed = readFileSync(CLI_REFERENCE_PATH, 'utf8');
  const current = await currentCliReference();
  if (committed === current) {
    t.pass();
    return;
  }
  const a = committed.split('\n');
  const b = current.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  t.fail(
    `docs/cli.md is stale: run npm run docs:cli and commit it (first difference at line ${line + 1}:\n` +
      `  committed: ${a[line] ?? '(end of file)'}\n  current:   ${b[line] ?? '(end of file)'})`,
  );
});

test('every command and option is in the reference', async (t) => {
  const { buildProgram } = await import('../../src/app/cli/main.ts');
  const program = await buildProgram();
  const reference = await currentCliReference();
  const walk = (cmd: typeof program, path: string): void => {
    for (const sub of cmd.commands) {
      const p = `${path} ${sub.name()}`;
      if (sub.commands.length > 0) walk(sub, p);
      else {
        t.true(reference.includes(`## ${p}\n`), `${p} has a section`);
        for (const o of sub.options)
          if (!o.hidden) t.true(reference.includes(`\`${o.flags}\``), `${p} ${o.flags}`);
      }
    }
  };
  walk(program, 'faultline');
});

test('command-summaries.ts is what npm run docs:cli writes (the top-level help without loading commands)', async (t) => {
  const { currentCommandSummaries } = await import('../../src/app/cli/reference.ts');
  const { COMMAND_SUMMARIES } = await import('../../src/app/cli/command-summaries.ts');
  t.deepEqual(
    [...COMMAND_SUMMARIES],
    await currentCommandSummaries(),
    'src/app/cli/command-summaries.ts is stale: run npm run docs:cli and commit it',
  );
});

test('the top-level help from the summaries is the full program help, byte for byte', async (t) => {
  const { buildProgram } = await import('../../src/app/cli/main.ts');
  const full = await buildProgram([]);
  const listOnly = await buildProgram([], true);
  t.is(listOnly.helpInformation(), full.helpInformation());
});
