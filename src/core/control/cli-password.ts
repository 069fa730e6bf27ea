import { UserError } from '../util/errors.ts';

/**
 * Where `--password VALUE` puts its value: the command line is rewritten to `--password-env` with this
 * name before anything reads or records it (test.json keeps the argv), so the literal lives only in
 * this process's environment, never in a session, a log or an error message.
 */
export const CLI_PASSWORD_ENV = 'FAULTLINE_CLI_SSH_PASSWORD';

/**
 * `--password VALUE` (or `--password=VALUE`) becomes `--password-env FAULTLINE_CLI_SSH_PASSWORD` with the
 * value moved into this process's environment, before commander parses or anything records the argv.
 * Returns the rewritten argv (the input when there is no `--password`).
 */
export function hideCliPassword(argv: readonly string[]): string[] {
  const out: string[] = [];
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a === '--password' || a.startsWith('--password=')) {
      const value = a === '--password' ? argv[++i] : a.slice('--password='.length);
      if (value === undefined || value === '') throw new UserError('--password needs a value');
      if (found !== undefined) throw new UserError('--password is given twice');
      found = value;
      out.push('--password-env', CLI_PASSWORD_ENV);
    } else out.push(a);
  }
  if (found === undefined) return [...argv];
  if (out.filter((a) => a === '--password-env' || a.startsWith('--password-env=')).length > 1)
    throw new UserError('--password and --password-env exclude each other');
  process.env[CLI_PASSWORD_ENV] = found;
  return out;
}
