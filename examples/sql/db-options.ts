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

/** One setting: a value from a list, or an integer in a range; `fallback` when the plan names none. */
export type Setting =
  | { allowed: readonly (string | number)[]; fallback: string | number }
  | { integer: readonly [number, number]; fallback: number };

/**
 * A dbOptions schema of the given settings: each checked by value, with its default; any other key is
 * refused, naming the ones it knows. The parsed options hold every setting.
 */
export function settingsSchema(settings: Record<string, Setting>) {
  const known = Object.keys(settings);
  return {
    safeParse(v: unknown) {
      const o = (v ?? {}) as Record<string, unknown>;
      const unknown = unknownOption(o, known);
      if (unknown) return unknown;
      const data: Record<string, unknown> = {};
      for (const [key, setting] of Object.entries(settings)) {
        const value = o[key] ?? setting.fallback;
        if ('allowed' in setting) {
          if (!setting.allowed.includes(value as string | number))
            return refused(key, `one of ${setting.allowed.join(', ')}`);
        } else {
          const [min, max] = setting.integer;
          if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
            return refused(key, `an integer from ${min} to ${max}`);
        }
        data[key] = value;
      }
      return { success: true as const, data };
    },
  };
}
