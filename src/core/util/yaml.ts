import { type Document, isAlias, isCollection, isMap, LineCounter, parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import { errorMessage, InputError } from './errors.ts';

/**
 * The one way faultline reads YAML (inventories, plans, plan bindings, daemon descriptions). A hostile
 * file cannot exhaust memory or the stack: the text is capped at {@link YAML_MAX_BYTES}, aliases at
 * {@link YAML_MAX_ALIASES} expansions (a "billion laughs" document is refused, not expanded), nesting at
 * {@link YAML_MAX_DEPTH} levels; every failure is an {@link InputError} naming the file and, when known,
 * the line.
 */
export const YAML_MAX_BYTES = 4 * 1024 * 1024;
export const YAML_MAX_ALIASES = 100;
export const YAML_MAX_DEPTH = 254;

export interface ParsedYaml {
  doc: Document;
  counter: LineCounter;
  value: unknown;
  /** The text's first line number minus one in its file (see {@link parseYamlDocument}). */
  lineOffset: number;
  /** Where `value` lies in `doc`, for a part read as a document of its own ({@link yamlAt}). */
  base?: readonly PropertyKey[];
}

/**
 * The part of a parsed document at `path` (a binding's `daemon:` block) as a document of its own:
 * paths into it are located at their lines in the whole file.
 */
export function yamlAt(parsed: ParsedYaml, path: readonly PropertyKey[], value: unknown): ParsedYaml {
  return { ...parsed, value, base: [...(parsed.base ?? []), ...path] };
}

/** `lineOffset`: the text's first line number minus one in `file` (for a block inside a Markdown plan). */
export function parseYamlDocument(text: string, file: string, lineOffset = 0): ParsedYaml {
  if (Buffer.byteLength(text, 'utf8') > YAML_MAX_BYTES)
    throw new InputError(file, null, null, `YAML larger than ${YAML_MAX_BYTES / 1024 / 1024} MiB`);
  const tooDeep = nestingPastLimit(text);
  if (tooDeep !== null)
    throw new InputError(
      file,
      tooDeep + lineOffset,
      null,
      `YAML: nested deeper than ${YAML_MAX_DEPTH} levels (the limit for YAML inputs)`,
    );
  const counter = new LineCounter();
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    throw new InputError(file, null, null, `YAML: ${firstLine(err)}`);
  }
  const firstError = doc.errors[0];
  if (firstError) {
    const line = counter.linePos(firstError.pos[0]).line + lineOffset;
    throw new InputError(file, line, null, `YAML: ${firstLine(firstError)}`);
  }
  const keyAt = collectionKey(doc);
  if (keyAt !== null)
    throw new InputError(
      file,
      counter.linePos(keyAt).line + lineOffset,
      null,
      'YAML: a key must be a plain name or number, not a list, a map or an alias',
    );
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_MAX_ALIASES });
  } catch (err) {
    const why = /alias/i.test(errorMessage(err))
      ? `YAML: too many alias expansions (more than ${YAML_MAX_ALIASES}); aliases are limited to keep a small file from expanding without bound`
      : `YAML: ${firstLine(err)}`;
    throw new InputError(file, null, null, why);
  }
  const depth = depthExceeding(value, YAML_MAX_DEPTH);
  if (depth)
    throw new InputError(
      file,
      null,
      null,
      `YAML: nested deeper than ${YAML_MAX_DEPTH} levels (the limit for YAML inputs)`,
    );
  return { doc, counter, value, lineOffset };
}

/**
 * The file line of the deepest node `path` reaches (a schema issue's path: for a missing key, its
 * parent map's line; for a bad value, the value's), or null when no node on the way has a position.
 */
export function yamlLine(parsed: ParsedYaml, at: readonly PropertyKey[]): number | null {
  const path = [...(parsed.base ?? []), ...at];
  for (let n = path.length; n >= 0; n--) {
    const node = parsed.doc.getIn(path.slice(0, n) as unknown[], true) as { range?: number[] } | undefined;
    const start = node && typeof node === 'object' ? node.range?.[0] : undefined;
    if (typeof start === 'number') return parsed.counter.linePos(start).line + parsed.lineOffset;
  }
  return null;
}

/** The file line of `key` itself in the map at `parent` (an unknown field's own line), else the map's. */
export function yamlKeyLine(parsed: ParsedYaml, parent: readonly PropertyKey[], key: string): number | null {
  const map = parsed.doc.getIn([...(parsed.base ?? []), ...parent] as unknown[], true);
  if (isMap(map))
    for (const item of map.items) {
      const k = item.key as { value?: unknown; range?: number[] } | null;
      const start = k?.range?.[0];
      if (k?.value === key && typeof start === 'number')
        return parsed.counter.linePos(start).line + parsed.lineOffset;
    }
  return yamlLine(parsed, parent);
}

/**
 * Where the first key that is a list, a map or an alias starts, or null. Such a key means nothing in any
 * faultline input, and turned into a plain object it becomes its own text ("[ a, b ]") while the yaml
 * library prints a process warning about it to stderr, once per conversion: a user would see that
 * warning beside (or instead of) the one line naming the file.
 */
function collectionKey(doc: Document): number | null {
  let at: number | null = null;
  visit(doc, {
    Pair(_, pair) {
      const key = pair.key;
      if (isCollection(key) || isAlias(key)) {
        at = key.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return at;
}

/**
 * A schema's first issue with a value read from YAML as one line of bad input at its line (no line
 * when the value was not read from a file): an unknown field is named itself at its own line (the
 * schema names the map holding it), a bad record key by its own message. `hint` follows the reason.
 */
export function yamlIssueError(
  file: string,
  yaml: ParsedYaml | undefined,
  issue: z.core.$ZodIssue | undefined,
  hint = '',
): InputError {
  const path = (issue?.path ?? []) as PropertyKey[];
  if (issue?.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const line = yaml ? yamlKeyLine(yaml, path, key) : null;
    return new InputError(file, line, [...path, key].map(String).join('.'), `unknown field${hint}`);
  }
  const reason =
    issue?.code === 'invalid_key'
      ? (issue.issues[0]?.message ?? issue.message)
      : (issue?.message ?? 'invalid');
  const field = path.map(String).join('.') || null;
  return new InputError(file, yaml ? yamlLine(yaml, path) : null, field, `${reason}${hint}`);
}

/** Just the value; same limits and errors as {@link parseYamlDocument}. */
export function parseYaml(text: string, file: string, lineOffset = 0): unknown {
  return parseYamlDocument(text, file, lineOffset).value;
}

/**
 * The first line of a parse error. The yaml library parses recursively: a deep enough document (a
 * 200,000-level flow) overflows its stack, which it reports either by throwing a RangeError or as a
 * document error whose message is the engine's "Maximum call stack size exceeded". Both are the same
 * nesting limit JSON and EDN inputs report, so users see the limit, not an engine message.
 */
function firstLine(err: unknown): string {
  const message = errorMessage(err);
  if (err instanceof RangeError || /maximum call stack size exceeded/i.test(message))
    return `nested deeper than ${YAML_MAX_DEPTH} levels (the limit for YAML inputs)`;
  return (message.split('\n')[0] ?? '').trim();
}

/** True when `value` nests deeper than `limit` (checked without recursion). */
function depthExceeding(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    if (d >= limit) return true;
    seen.add(v);
    const children = v instanceof Map ? [...v.values()] : Object.values(v as object);
    for (const c of children) stack.push([c, d + 1]);
  }
  return false;
}

/**
 * The 1-based line where the text's nesting passes {@link YAML_MAX_DEPTH}, or null. Scanned before the
 * yaml library parses, which it does recursively: a deep enough document would otherwise exhaust its
 * stack (and V8, if that happens while it compiles a regular expression, aborts the process). Counts
 * flow brackets outside quoted scalars and comments, plus each line's block depth (its indentation
 * levels and leading `- `/`? ` markers); an over-estimate only for exotic layouts far beyond any plan.
 */
function nestingPastLimit(text: string): number | null {
  const indents: number[] = [];
  let flow = 0;
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Start of a line: its block depth (only outside flow collections, where indentation means nothing).
    let col = 0;
    while (text.charCodeAt(i + col) === 32) col++;
    if (flow === 0 && i + col < n && text[i + col] !== '\n' && text[i + col] !== '#') {
      while (indents.length > 0 && (indents.at(-1) as number) >= col) indents.pop();
      indents.push(col);
      let j = i + col;
      let markers = 0;
      while ((text[j] === '-' || text[j] === '?') && (text[j + 1] === ' ' || text[j + 1] === '\n')) {
        markers++;
        j += 2;
        while (text[j] === ' ') j++;
      }
      if (indents.length + markers > YAML_MAX_DEPTH) return line;
    }
    i += col;
    // The rest of the line: flow brackets outside quotes and comments.
    let prev = 32;
    while (i < n && text.charCodeAt(i) !== 10) {
      const c = text.charCodeAt(i);
      if (c === 35 /* # */ && (prev === 32 || prev === 9)) {
        while (i < n && text.charCodeAt(i) !== 10) i++;
        break;
      }
      if (c === 34 /* " */ || c === 39 /* ' */) {
        // A quoted scalar may span lines; it ends at the same quote (\" escapes in double quotes, '' in single).
        i++;
        while (i < n) {
          const d = text.charCodeAt(i);
          if (d === 10) line++;
          if (c === 34 && d === 92 /* \ */) i += 2;
          else if (d === c && c === 39 && text.charCodeAt(i + 1) === 39) i += 2;
          else if (d === c) break;
          else i++;
        }
      } else if (c === 91 || c === 123) {
        if (++flow + indents.length > YAML_MAX_DEPTH) return line;
      } else if ((c === 93 || c === 125) && flow > 0) flow--;
      prev = c;
      i++;
    }
    if (i < n) {
      line++;
      i++;
    }
  }
  return null;
}
