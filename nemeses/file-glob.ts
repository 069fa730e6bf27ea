import { z } from 'zod';

/**
 * File patterns a plan names under a database's data directory (`files: ['appendonlydir/*.aof']`): one
 * syntax for every nemesis that aims at files, turned into one regular expression that both the disk
 * nemesis (TypeScript, over the node's file listing) and the lazy filesystem (Python's `re`, over the
 * paths it serves) match against a path relative to the data directory. The expression uses only
 * syntax the two engines read alike.
 *
 * Syntax: `*` any run of characters but `/`; `**` any run including `/` (`**\/` also matches no
 * directory at all); `?` one character but `/`; anything else literal. Patterns are relative, with no
 * `.` or `..` segment: they cannot name anything outside the data directory.
 */

/** Why a pattern is refused, or null when it is usable. */
export function fileGlobProblem(glob: string): string | null {
  if (glob === '') return 'an empty file pattern';
  if (glob.startsWith('/'))
    return `file pattern "${glob}" is absolute: name it relative to the data directory`;
  if (/[\0\n\r]/.test(glob)) return `file pattern ${JSON.stringify(glob)} holds a control character`;
  if (glob.split('/').some((s) => s === '..' || s === '.'))
    return `file pattern "${glob}" has a "." or ".." segment: it must stay inside the data directory`;
  return null;
}

const SPECIAL = new Set(['.', '+', '^', '$', '{', '}', '(', ')', '|', '[', ']', '\\']);

/** The anchored-by-fullmatch regular expression source of a pattern (see the syntax above). */
export function fileGlobRegex(glob: string): string {
  const problem = fileGlobProblem(glob);
  if (problem) throw new Error(problem);
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === '*' && glob[i + 1] === '*') {
      if (glob[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else out += SPECIAL.has(ch) ? `\\${ch}` : ch;
  }
  return out;
}

/** The paths (relative to the data directory) that match any of the patterns, in their given order. */
export function matchFiles(paths: readonly string[], globs: readonly string[]): string[] {
  const res = globs.map((g) => new RegExp(`^(?:${fileGlobRegex(g)})$`));
  return paths.filter((p) => res.some((r) => r.test(p)));
}

/** A plan's `files`: one to 64 patterns, each checked as above. */
export const fileGlobs = z
  .array(
    z.string().superRefine((g, ctx) => {
      const problem = fileGlobProblem(g);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  )
  .min(1)
  .max(64);
