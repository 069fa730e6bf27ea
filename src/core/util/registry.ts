import { UserError } from './errors.ts';

/**
 * The one registry primitive: a typed, named list with one instance per concept (databases, clients,
 * workloads, checkers, nemeses, linearizability models, partition topologies), each living in its own
 * library. Names are defined once, where the thing is defined; plan schemas, CLI choices, `plan check`
 * and help texts read them from the instance at run time, so names a plugin registers appear everywhere.
 *
 * Registering a name twice is an error naming both origins (faultline itself, or the plugin module).
 */
export const BUILT_IN = 'faultline';

export class RegistryError extends UserError {
  override readonly name = 'RegistryError';
}

interface Entry<T> {
  value: T;
  origin: string;
}

export class Registry<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly aliases = new Map<string, string>();
  /** Bumped on every change, so derived caches (schemas, choice lists) know when to rebuild. */
  version = 0;

  /** `concept` is the singular noun used in messages: "database", "checker", "partition topology". */
  constructor(readonly concept: string) {}

  register(name: string, value: T, origin: string = BUILT_IN): void {
    if (!/^[a-z][a-z0-9-]*$/.test(name))
      throw new RegistryError(
        `${this.concept} name "${name}" (from ${origin}): use lower-case letters, digits and dashes`,
      );
    const had = this.entries.get(name) ?? this.entries.get(this.aliases.get(name) ?? '');
    if (had)
      throw new RegistryError(
        `${this.concept} "${name}" is registered twice: by ${describe(had.origin)} and by ${describe(origin)}`,
      );
    this.entries.set(name, { value, origin });
    this.version++;
  }

  /** Another name for a registered one (Jepsen's and common spellings). */
  alias(alias: string, name: string): void {
    this.aliases.set(alias, name);
    this.version++;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get(name: string): T | undefined {
    return (this.entries.get(name) ?? this.entries.get(this.aliases.get(name) ?? ''))?.value;
  }

  /** The canonical name of `name` (itself, or what it is an alias of), or undefined. */
  canonical(name: string): string | undefined {
    if (this.entries.has(name)) return name;
    const a = this.aliases.get(name);
    return a && this.entries.has(a) ? a : undefined;
  }

  /** The entry, or a one-line UserError: `where: unknown database "mongo" (one of etcd, redis)`. */
  require(name: string, where: string): T {
    const v = this.get(name);
    if (v === undefined) throw new UserError(`${where}: ${this.unknownMessage(name)}`);
    return v;
  }

  unknownMessage(name: string): string {
    return `unknown ${this.concept} "${name}" (one of ${this.names().join(', ') || 'none registered'})`;
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  values(): T[] {
    return [...this.entries.values()].map((e) => e.value);
  }

  originOf(name: string): string | undefined {
    return this.entries.get(this.canonical(name) ?? '')?.origin;
  }

  /** Entries registered by one origin (a plugin module), e.g. to list what a plugin added. */
  namesFrom(origin: string): string[] {
    return [...this.entries].filter(([, e]) => e.origin === origin).map(([n]) => n);
  }
}

function describe(origin: string): string {
  return origin === BUILT_IN ? 'faultline itself' : `plugin ${origin}`;
}
