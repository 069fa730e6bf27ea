import { type Command, Option } from 'commander';
import { helpEpilogue } from './help.ts';
import type { CommandSpec, OptionSpec } from './spec.ts';

/** commander's Option for a declared option (choices listed in help, `parse` as its parser). */
export function optionOf(spec: OptionSpec): Option {
  const option = new Option(spec.flags, spec.description);
  // choices() installs commander's own check; a `parse` given too replaces it and checks the value itself.
  if (spec.choices) option.choices(spec.choices);
  if (spec.parse) option.argParser(spec.parse);
  if (spec.default !== undefined) option.default(spec.default);
  if (spec.env !== undefined) option.env(spec.env);
  return option;
}

/** Adds a declared command (and its subcommands) to `parent`. */
export function addCommand(parent: Command, spec: CommandSpec): Command {
  const cmd = parent
    .command(spec.name)
    .addHelpText('after', helpEpilogue(spec.examples))
    .description(spec.description);
  for (const [name, description] of spec.arguments ?? []) cmd.argument(name, description);
  for (const option of spec.options ?? []) cmd.addOption(optionOf(option));
  const { action } = spec;
  const arity = spec.arguments?.length ?? 0;
  if (action) {
    cmd.action(async (...values: unknown[]) => {
      await action(
        values.slice(0, arity) as (string | undefined)[],
        values[arity] as Record<string, unknown>,
      );
    });
  }
  for (const sub of spec.subcommands ?? []) addCommand(cmd, sub);
  return cmd;
}
