import { UserError } from './errors.ts';

/**
 * What an options schema must offer: zod's `safeParse` shape, so a definition (built in, or a plugin's,
 * built with any zod version or by hand) can validate its options without faultline knowing how.
 */
export interface OptionsSchema {
  safeParse(
    v: unknown,
  ):
    | { success: true; data: unknown }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** Validate `value` against `schema` (when there is one): the parsed value, or a one-line UserError. */
export function parseOptions(
  schema: OptionsSchema | undefined,
  value: unknown,
  where: string,
): Record<string, unknown> {
  const input = value ?? {};
  if (!schema) return input as Record<string, unknown>;
  const r = schema.safeParse(input);
  if (r.success) return (r.data ?? {}) as Record<string, unknown>;
  throw new UserError(`${where}: ${optionsIssue(r.error.issues)}`);
}

/** The first issue as `path: message` (or just the message at the top level). */
export function optionsIssue(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid options';
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}
