import type { OptionsSchema } from 'faultline/checkers';

/**
 * A dbOptions schema of one setting: `key` one of `allowed` (default `fallback`); any other key is
 * refused, naming the one it knows. The parsed options are `{ [key]: value }`.
 */
export function oneSettingSchema<T extends string | number>(
  key: string,
  allowed: readonly T[],
  fallback: T,
): OptionsSchema {
  const bad = (path: string, message: string) => ({
    success: false as const,
    error: { issues: [{ path: [path], message }] },
  });
  return {
    safeParse(v: unknown) {
      const o = (v ?? {}) as Record<string, unknown>;
      const extra = Object.keys(o).find((k) => k !== key);
      if (extra) return bad(extra, `unknown option (known: ${key})`);
      const value = o[key] ?? fallback;
      if (!allowed.includes(value as T)) return bad(key, `one of ${allowed.join(', ')}`);
      return { success: true as const, data: { [key]: value } };
    },
  };
}
