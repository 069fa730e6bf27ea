import { UserError } from './errors.ts';

/** A byte size from the command line: `256K`, `10M`, `1.5G`, `512MiB`, `4096` (bytes). */
export function parseSize(text: string, flag: string): number {
  const m = text.trim().match(/^(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?$/i);
  if (!m) throw new UserError(`${flag}: a size such as 256K or 10M (got ${text})`);
  const unit = (m[2] ?? 'B').toUpperCase()[0] as string;
  return Math.round(Number(m[1]) * ({ B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[unit] ?? 1));
}
