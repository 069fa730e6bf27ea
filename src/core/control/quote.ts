/**
 * The one shell-escaping function for every remote command line. POSIX single quotes make every byte
 * literal except the single quote itself, which is written as '\'' (close, escaped quote, reopen).
 * NUL cannot be passed through argv or a shell at all, so it is refused instead of silently truncated.
 */

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

export class ShellQuoteError extends Error {
  override readonly name = 'ShellQuoteError';
}

/** Quote one argument so a POSIX shell reads it back as exactly these characters. */
export function shellQuote(arg: string | number): string {
  const s = String(arg);
  if (s.includes('\0')) throw new ShellQuoteError('cannot pass a NUL byte in a shell argument');
  if (s === '') return "''";
  if (SAFE.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Quote each argument and join with spaces: `shellJoin(['echo', x])` runs `echo` with x as one argument. */
export function shellJoin(args: readonly (string | number)[]): string {
  return args.map(shellQuote).join(' ');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `export K='v' K2='v2'; ` prefix; names are validated because they cannot be quoted. */
export function envPrefix(env: Record<string, string> | undefined): string {
  if (!env) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k))
      throw new ShellQuoteError(`invalid environment variable name ${JSON.stringify(k)}`);
    parts.push(`${k}=${shellQuote(v)}`);
  }
  return parts.length ? `export ${parts.join(' ')}; ` : '';
}
