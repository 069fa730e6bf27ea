import { readFileSync } from 'node:fs';
import { InputError } from '../../core/util/errors.ts';
import { parseYamlDocument } from '../../core/util/yaml.ts';
import { type DaemonDescription, parseDaemonDescription } from './daemon-db.ts';

/** Read a daemon description from a YAML file; an unreadable or invalid file is `file[:line]: reason` bad input. */
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
  const yaml = parseYamlDocument(text, file);
  return parseDaemonDescription(yaml.value, file, yaml);
}
