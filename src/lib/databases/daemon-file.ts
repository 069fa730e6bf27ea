import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../../core/util/errors.ts';
import { type DaemonDescription, parseDaemonDescription } from './daemon-db.ts';

/** Read a daemon description from a YAML file; an unreadable or invalid file is `file: reason` bad input. */
export function readDaemonDescription(file: string): DaemonDescription {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new InputError(
      file,
      null,
      null,
      `cannot read the daemon description: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return parseDaemonDescription(raw, file);
}
