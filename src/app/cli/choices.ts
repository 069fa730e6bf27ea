import type { Registry } from '../../core/util/registry.ts';
import type { OptionSpec } from './spec.ts';

/**
 * A flag whose value names an entry of a registry: `--help` lists the registry's names at run time
 * (plugins' included), and a name it does not know is a one-line bad-input error naming the flag and
 * the choices (`--db: unknown database "mongo" (one of etcd, redis)`), like every other bad flag.
 */
export function registryOption<T>(
  flags: string,
  description: string,
  registry: Registry<T>,
  defaultValue?: string,
): OptionSpec {
  const flag = /--[a-z-]+/.exec(flags)?.[0] ?? flags;
  return {
    flags,
    description,
    choices: registry.names(),
    parse: (value: string) => {
      registry.require(value, flag);
      return value;
    },
    ...(defaultValue !== undefined && { default: defaultValue }),
  };
}

/** "a, b, c" for help texts. */
export function namesOf<T>(registry: Registry<T>): string {
  return registry.names().join(', ');
}
