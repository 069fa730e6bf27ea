/**
 * The SQL example's options schemas (dbOptions, clientOptions) speak faultline's OptionsSchema protocol
 * (`safeParse`) by hand, with these two answers: a refusal naming the option, and the first key no
 * option of the list has. Typed by shape, not by importing the protocol, so that this module (and its
 * test) needs nothing built.
 */
export function refused(path: string, message: string) {
  return { success: false as const, error: { issues: [{ path: [path], message }] } };
}

/** A refusal for the first key of `o` that `known` does not list, or null. */
export function unknownOption(o: Record<string, unknown>, known: readonly string[]) {
  const extra = Object.keys(o).find((k) => !known.includes(k));
  return extra === undefined ? null : refused(extra, `unknown option (known: ${known.join(', ')})`);
}

/**
 * A dbOptions schema of one setting: `key` one of `allowed` (default `fallback`); any other key is
 * refused, naming the one it knows. The parsed options are `{ [key]: value }`.
 */
export function oneSettingSchema<T extends string | number>(key: string, allowed: readonly T[], fallback: T) {
  return {
    safeParse(v: unknown) {
      const o = (v ?? {}) as Record<string, unknown>;
      const unknown = unknownOption(o, [key]);
      if (unknown) return unknown;
      const value = o[key] ?? fallback;
      if (!allowed.includes(value as T)) return refused(key, `one of ${allowed.join(', ')}`);
      return { success: true as const, data: { [key]: value } };
    },
  };
}
