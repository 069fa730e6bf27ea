import type { Command } from 'commander';
import { collectPlugin, PLUGIN_HELP } from '../../plugin/args.ts';
import { helpEpilogue } from '../help.ts';

/**
 * `faultline plan check PLAN [--json]`: load a Markdown or YAML/JSON plan and list every problem with
 * scenario id, field and reason. Exit 3 when the plan must not run (any error), 0 otherwise (warnings
 * only); 254 when the file cannot be read or parsed at all.
 * `faultline plan show PLAN`: the plan as faultline resolved it (scenarios, arms, tiers as numbers,
 * bindings) as JSON, for scripts and for checking how a budget string was read.
 */
export function register(program: Command): void {
  const plan = program
    .command('plan')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline plan check plans/etcd-register.md',
        'faultline plan show plans/etcd-register.md',
      ]),
    )
    .description('read and validate test plans (the format: docs/plans.md)');
  plan
    .command('check')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline plan check plans/etcd-register.md',
        'faultline plan check plans/etcd-register.md --json',
      ]),
    )
    .description('validate a plan: exit 3 if it must not run, 0 otherwise')
    .argument('<plan>', 'plan file: Markdown (.md) or native YAML/JSON (.yaml, .yml, .json)')
    .option('--json', 'print one JSON object instead of text')
    .option('--plugin <path>', PLUGIN_HELP, collectPlugin, [])
    .action(async (path: string, flags: { json?: boolean }) => {
      const { runPlanCheck } = await import('./plan-action.ts');
      process.exitCode = await runPlanCheck(path, flags.json ?? false);
    });
  plan
    .command('show')
    .addHelpText('after', helpEpilogue(['faultline plan show plans/etcd-register.md']))
    .description('print the resolved plan as JSON')
    .argument('<plan>', 'plan file')
    .option('--plugin <path>', PLUGIN_HELP, collectPlugin, [])
    .action(async (path: string) => {
      const { runPlanShow } = await import('./plan-action.ts');
      process.exitCode = await runPlanShow(path);
    });
}
