import { readFileSync } from 'node:fs';
import { InputError } from '../../core/util/errors.ts';
import { parseYaml } from '../../core/util/yaml.ts';
import { type DaemonDescription, parseDaemonDescription } from './daemon-db.ts';

/** Read a daemon description from a YAML file; an unreadable or invalid file is `file: reason` bad input. */
export function readDaemonDescription(file: string): DaemonDescription {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(
      file,
      null,
      null,
      `cannot read the daemon description: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return parseDaemonDescription(parseYaml(text, file), file);
}
