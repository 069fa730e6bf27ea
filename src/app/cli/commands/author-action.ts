import { createInterface } from 'node:readline/promises';
import { EXIT, UserError } from '../../../core/util/errors.ts';
import { type AuthorOptions, author } from '../../author/write.ts';

export async function authorCommand(
  plan: string,
  flags: { scenario?: string[]; root?: string; overwrite?: boolean; sibling?: boolean },
): Promise<number> {
  if (flags.overwrite && flags.sibling) throw new UserError('--overwrite and --sibling exclude each other');
  const tty = process.stdin.isTTY === true && process.stderr.isTTY === true;
  const mode: AuthorOptions['mode'] = flags.overwrite
    ? 'overwrite'
    : flags.sibling
      ? 'sibling'
      : tty
        ? 'ask'
        : 'skip';
  const outcomes = await author({
    plan,
    scenarios: flags.scenario ?? [],
    root: flags.root ?? '.',
    mode,
    ask: async (q) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(q);
      } finally {
        rl.close();
      }
    },
  });
  for (const o of outcomes)
    process.stdout.write(
      `${o.scenario}: ${o.action}${o.path ? ` ${o.path}` : o.target ? ` ${o.target}` : ''} — ${o.reason}\n`,
    );
  const written = outcomes.filter((o) => o.path !== null);
  if (written.length > 0)
    process.stdout.write(
      `nothing was committed or staged; review with: git status && git diff (new files: git add -N ${written.map((o) => o.path).join(' ')})\n`,
    );
  return outcomes.every((o) => o.path !== null) ? EXIT.valid : EXIT.unknown;
}
