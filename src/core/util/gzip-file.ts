import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { regularInput } from './input-file.ts';

/**
 * Files `faultline sessions compress` gzipped stay readable by every command: a reader asks for
 * `history.jsonl`, and when only `history.jsonl.gz` exists (or it was given the `.gz` name) it gets the
 * path of a decompressed copy in a temporary directory, removed when the process exits.
 */
const copies = new Map<string, string>();
let tmp: string | null = null;

export function readablePath(file: string): string {
  regularInput(file, 'history');
  const gz = file.endsWith('.gz')
    ? file
    : !existsSync(file) && existsSync(`${file}.gz`)
      ? `${file}.gz`
      : null;
  if (gz === null || !existsSync(gz)) return file;
  const known = copies.get(gz);
  if (known && existsSync(known)) return known;
  if (tmp === null) {
    // node:os only here: an ES module's import of a builtin builds its facade, which start-up pays.
    tmp = mkdtempSync(join(process.getBuiltinModule('node:os').tmpdir(), 'faultline-gunzip-'));
    const dir = tmp;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const out = join(tmp, `${copies.size}-${basename(gz, '.gz')}`);
  // zlib is loaded only for a gzipped file: every history read passes here, and it costs start-up.
  const { gunzipSync } = process.getBuiltinModule('node:zlib');
  writeFileSync(out, gunzipSync(readFileSync(gz)));
  copies.set(gz, out);
  return out;
}
