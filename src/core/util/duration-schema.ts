import { z } from 'zod';
import { parseDuration } from './duration.ts';

/**
 * A zod field for a duration in a file (plan binding, daemon description): a string with a unit, read
 * as milliseconds. The error names the field through zod's path, so it reads `file:line: field: reason`.
 * Apart from ./duration.ts so that parsing a duration flag does not load zod.
 */
export function durationMsSchema(): z.ZodType<number, string> {
  return z.string().transform((text, ctx) => {
    try {
      return parseDuration(text, 'duration');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^duration: /, '') });
      return z.NEVER;
    }
  }) as unknown as z.ZodType<number, string>;
}
