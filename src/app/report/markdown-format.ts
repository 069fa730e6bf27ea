import { writeFileAtomic } from '../../core/util/atomic-write.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';

/** Markdown helpers the writers share: escaped table cells, tables, atomic file writes. */

/**
 * Plan text, scenario names, oracle evidence and history values are written by strangers: in a report
 * they are text, never HTML (`<!--` would hide the rest of report.md on a forge) and never Markdown
 * structure. `htmlText` makes `<` and `>` entities (no tag, comment or
 * script can open; a lone `&` opens nothing) and drops control characters; `md` also escapes link
 * brackets and folds lines (a name cannot open a heading or a link), for headings and list items.
 */
export function htmlText(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, '')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

export function md(v: unknown): string {
  return htmlText(String(v ?? ''))
    .replace(/\[/g, '&#91;')
    .replace(/\]/g, '&#93;')
    .replace(/\s*\r?\n\s*/g, ' ');
}

export function cell(v: unknown): string {
  const s = v === null || v === undefined || v === '' ? '—' : String(v);
  return htmlText(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const head = `| ${headers.join(' | ')} |`;
  const sep = `|${headers.map(() => '---').join('|')}|`;
  return [head, sep, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

export function checkbox(done: boolean | null): string {
  return done ? '[x]' : '[ ]';
}

/**
 * Write via a temporary file and rename, so a reader (or a crash) never sees half a report. If the
 * write fails, the caller prints the text and says so: a report is never claimed that was not written.
 */
export async function writeAtomic(path: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(path, text);
  } catch (err) {
    process.stdout.write(`${text}\n`);
    throw new UserError(`${errorMessage(err)}; its text was printed to stdout instead`);
  }
}

/** `2026-11-30T03:19:09.123Z` → `2026-11-30T03:19:09Z` */
export function utc(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}
