/**
 * Small Markdown readers the plan parser is built from: lines with their numbers, fenced blocks,
 * headings and pipe tables. Only what plans use; no general CommonMark.
 */

export interface Line {
  /** 1-based line number in the file. */
  n: number;
  text: string;
  /** True for lines inside a fenced code block (including the fences themselves). */
  fenced: boolean;
}

export function toLines(text: string, firstLine = 1): Line[] {
  const out: Line[] = [];
  let fence: string | null = null;
  text.split(/\r?\n/).forEach((t, i) => {
    const m = t.match(/^\s*(`{3,}|~{3,})/);
    if (fence === null && m) {
      fence = m[1]!;
      out.push({ n: firstLine + i, text: t, fenced: true });
      return;
    }
    if (fence !== null) {
      out.push({ n: firstLine + i, text: t, fenced: true });
      if (m && m[1]!.startsWith(fence) && t.trim() === m[1]) fence = null;
      return;
    }
    out.push({ n: firstLine + i, text: t, fenced: false });
  });
  return out;
}

export interface Heading {
  level: number;
  text: string;
}

export function heading(l: Line): Heading | null {
  if (l.fenced) return null;
  const m = l.text.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
  return m ? { level: m[1]!.length, text: m[2]! } : null;
}

export interface Fence {
  info: string;
  body: string;
  /** Line of the opening fence. */
  line: number;
  /** Index in the line array just after the closing fence. */
  end: number;
}

/** The fenced block opening at lines[i], if one does. */
export function fenceAt(lines: readonly Line[], i: number): Fence | null {
  const open = lines[i];
  if (!open?.fenced) return null;
  const m = open.text.match(/^(\s*)(`{3,}|~{3,})\s*([^`\s]*)/);
  if (!m) return null;
  const indent = m[1]!.length;
  const body: string[] = [];
  let j = i + 1;
  for (; j < lines.length; j++) {
    const l = lines[j]!;
    if (!l.fenced) break;
    if (l.text.trim().startsWith(m[2]!) && l.text.trim().replace(/[`~]/g, '') === '') {
      j++;
      break;
    }
    body.push(l.text.slice(Math.min(indent, l.text.length - l.text.trimStart().length)));
  }
  return { info: m[3]!.toLowerCase(), body: body.join('\n'), line: open.n, end: j };
}

export interface Table {
  headers: string[];
  rows: { cells: string[]; line: number }[];
  line: number;
}

function splitRow(text: string): string[] {
  let t = text.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  const cells: string[] = [];
  let cur = '';
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (c === '\\' && t[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '|') {
      cells.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

/** Every pipe table among the lines, in order. */
export function tables(lines: readonly Line[]): Table[] {
  const out: Table[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const h = lines[i]!;
    const sep = lines[i + 1]!;
    if (h.fenced || sep.fenced || !h.text.includes('|')) continue;
    if (!/^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(sep.text)) continue;
    const table: Table = { headers: splitRow(h.text), rows: [], line: h.n };
    let j = i + 2;
    for (; j < lines.length && !lines[j]!.fenced && lines[j]!.text.includes('|'); j++) {
      table.rows.push({ cells: splitRow(lines[j]!.text), line: lines[j]!.n });
    }
    out.push(table);
    i = j - 1;
  }
  return out;
}

/** A table's rows as objects keyed by a normalised header (lower case, no punctuation). */
export function tableRecords(t: Table): { record: Record<string, string>; line: number }[] {
  const keys = t.headers.map(normKey);
  return t.rows.map((r) => ({
    record: Object.fromEntries(keys.map((k, i) => [k, stripInline(r.cells[i] ?? '')])),
    line: r.line,
  }));
}

export function normKey(s: string): string {
  return stripInline(s)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** Remove emphasis and code marks around a whole value: `**x**`, `` `x` ``, `_x_`. */
export function stripInline(s: string): string {
  let t = s.trim();
  for (;;) {
    const m = t.match(/^(\*\*|__|`|\*|_)([\s\S]*)\1$/);
    if (!m || m[2]!.trim() === '') return t;
    t = m[2]!.trim();
  }
}
