import { UserError } from '../../core/util/errors.ts';
import type { OptionSpec } from './spec.ts';

/**
 * `--max-line-bytes`: the longest history line a reader accepts (the default, 64 MiB, lives with the
 * reader: core/history/jsonl.ts). One definition for every command that reads histories.
 */
export const maxLineBytesOption: OptionSpec = {
  flags: '--max-line-bytes <size>',
  description: 'longest history line accepted, in bytes (k, m, g suffixes; default 64m)',
  parse: parseByteSize,
};

const UNITS: Record<string, number> = { '': 1, k: 1 << 10, m: 1 << 20, g: 1 << 30 };

export function parseByteSize(text: string): number {
  const m = /^(\d{1,12})([kmg]?)$/i.exec(text.trim());
  const n = m ? Number(m[1]) * (UNITS[(m[2] as string).toLowerCase()] as number) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UserError(`--max-line-bytes: expected a positive size such as 1048576 or 64m, got "${text}"`);
  return n;
}
