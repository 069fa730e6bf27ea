import { EXIT } from '../../core/util/errors.ts';

/**
 * The end of every command's `--help`: a few examples, then the one exit-code table all commands share
 * (`.addHelpText('after', helpEpilogue([...]))` in each command's definition).
 */
export const EXIT_CODE_TABLE = [
  'Exit codes:',
  `  ${EXIT.valid}    valid / done / clean`,
  `  ${EXIT.invalid}    invalid: a FAIL, a history that breaks its model, a node left unclean`,
  `  ${EXIT.unknown}    unknown or inconclusive: the checker or the evidence could not decide`,
  `  ${EXIT.planMustNotRun}    the plan must not run (run)`,
  `  ${EXIT.badInput}  bad input: one line naming the file:line, flag or node`,
  `  ${EXIT.internal}  internal error: a bug in faultline`,
].join('\n');

/** `examples`: command lines, each optionally followed by `  # what it does`. */
export function helpEpilogue(examples: readonly string[]): string {
  return `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n\n${EXIT_CODE_TABLE}\n`;
}

/** One line of the top-level help's command list: the command's usage term and its description. */
export interface CommandSummary {
  readonly name: string;
  readonly term: string;
  readonly description: string;
}
