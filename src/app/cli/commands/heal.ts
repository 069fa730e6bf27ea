import type { Command } from 'commander';
import { helpEpilogue } from '../help.ts';
import { addSshOptions } from '../ssh-flags.ts';

/**
 * `faultline heal --ledger FILE | --inventory FILE`: undo what a killed run left behind and sweep every
 * node (FAULTLINE chains, faultline qdiscs, paused pids, faketime offsets, junk files), then verify.
 */
export function register(program: Command): void {
  const cmd = program
    .command('heal')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline heal --ledger store/etcd-register/20260101T120000/ledger.jsonl',
        'faultline heal --inventory nodes.yaml   # sweep every node',
      ]),
    )
    .description(
      'heal every fault a fault ledger still has in force, then sweep every node and verify it is clean (exit 0 clean, 1 not clean)',
    )
    .option('--ledger <file>', 'fault ledger (ledger.jsonl) of a run')
    .option('--inventory <file>', "inventory of the nodes to sweep (also used to reach a ledger's nodes)")
    .option('--json', 'print the report as one JSON object');
  addSshOptions(cmd).action(
    async (opts: { ledger?: string; inventory?: string; json?: boolean; acceptNewHostKeys?: boolean }) => {
      const { runHeal } = await import('./heal-action.ts');
      process.exitCode = await runHeal(opts);
    },
  );
}
