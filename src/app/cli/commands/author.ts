import type { Command } from 'commander';
import { helpEpilogue } from '../help.ts';

/**
 * `faultline author PLAN [--scenario S3] [--overwrite | --sibling]`: write scenario skeletons to their
 * `Target test file` paths with the provenance header (spec §7 item 6). Never overwrites silently,
 * never commits. Exit 0 when every chosen scenario was written, 2 when some were skipped or refused,
 * 254 (bad input) when a target escapes --root: one hostile target refuses the whole run.
 */
const collect = (v: string, prev: string[]) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function register(program: Command): void {
  program
    .command('author')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline author plans/etcd-register.md',
        'faultline author plans/etcd-register.md --overwrite   # replace skeletons that exist',
      ]),
    )
    .description(
      "write each scenario's skeleton to its Target test file (never overwriting silently); exit 0 when every chosen scenario was written, 2 when one was skipped (its target exists, or it has none) or refused, 254 when a target would land outside --root or the plan cannot be read",
    )
    .argument('<plan>', 'plan file')
    .option('--scenario <id>', 'only this scenario (repeatable)', collect, [])
    .option('--root <dir>', 'directory the Target test file paths are relative to', '.')
    .option('--overwrite', 'replace an existing target')
    .option('--sibling', 'write next to an existing target as <path>.new.<ext>')
    .action(
      async (
        plan: string,
        flags: { scenario: string[]; root: string; overwrite?: boolean; sibling?: boolean },
      ) => {
        const { authorCommand } = await import('./author-action.ts');
        process.exitCode = await authorCommand(plan, flags);
      },
    );
}
