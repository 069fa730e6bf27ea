import { type EdnMode, EdnReader, EdnSyntaxError, END, type Keyword } from './edn.ts';

/**
 * Streams the values of an EDN history from chunks of text, so a history.edn of any size is read in
 * memory proportional to one chunk (plus the longest op). Same shape rule as `ednHistoryValues`: a
 * file holding one vector or list yields that collection's elements; otherwise the top-level values.
 *
 * How: only complete lines are parsed (a token never spans a line break, and a comment ends at one);
 * a value that runs past the last complete line fails as `incomplete`, and is retried from its start
 * once more text has arrived. Line numbers are counted as text is consumed, for error messages.
 */
export interface LocatedValue {
  value: unknown;
  /** 1-based line where the value starts. */
  line: number;
}

type State = 'start' | 'bare' | 'inCollection' | 'after';

export async function* streamEdnHistory(
  chunks: AsyncIterable<string>,
  mode: EdnMode = 'lossless',
): AsyncGenerator<LocatedValue[]> {
  const kwCache = new Map<number, Keyword>();
  let state: State = 'start';
  let close = 0;
  let collectionLine = 0;
  let buf = '';
  let pieces: string[] = [];
  /** Line number of buf's first character. */
  let bufLine = 1;

  /** Parses as much of `text` as is complete; returns the offset up to which it was consumed. */
  const consume = (text: string, final: boolean, out: LocatedValue[]): number => {
    const r = new EdnReader(text, mode, kwCache);
    let consumed = 0;
    let line = bufLine;
    let lineCountedTo = 0;
    const lineOf = (offset: number) => {
      for (let i = text.indexOf('\n', lineCountedTo); i !== -1 && i < offset; i = text.indexOf('\n', i + 1))
        line++;
      lineCountedTo = offset;
      return line;
    };
    try {
      for (;;) {
        const before = r.pos;
        let c: number;
        try {
          c = r.skip(); // may read a `#_` discarded value, which can be incomplete too
        } catch (err) {
          if (!final && err instanceof EdnSyntaxError && err.incomplete) {
            consumed = before;
            break;
          }
          throw err;
        }
        if (c === END) {
          consumed = r.pos;
          break;
        }
        if (state === 'start') {
          if (c === 91 || c === 40) {
            state = 'inCollection';
            close = c === 91 ? 93 : 41;
            collectionLine = lineOf(r.pos);
            r.pos++;
          } else state = 'bare';
          consumed = r.pos;
          continue;
        }
        if (state === 'after') {
          r.fail(
            'text after the history vector: a file is either one vector/list of ops or a series of op maps',
          );
        }
        if (state === 'inCollection' && c === close) {
          state = 'after';
          r.pos++;
          consumed = r.pos;
          continue;
        }
        const start = r.pos;
        const valueLine = lineOf(start);
        let value: unknown;
        try {
          value = r.read();
        } catch (err) {
          if (!final && err instanceof EdnSyntaxError && err.incomplete) {
            consumed = start;
            break;
          }
          throw err;
        }
        out.push({ value, line: valueLine });
        consumed = r.pos;
      }
    } catch (err) {
      if (err instanceof EdnSyntaxError) {
        throw new EdnSyntaxError(bufLine + err.line - 1, err.offset, err.reason, err.incomplete);
      }
      throw err;
    }
    if (final && state === 'inCollection') {
      throw new EdnSyntaxError(
        collectionLine,
        0,
        `unterminated ${close === 93 ? 'vector' : 'list'} holding the history`,
        true,
      );
    }
    lineOf(consumed);
    bufLine = line;
    return consumed;
  };

  for await (const chunk of chunks) {
    // Wait for a line break before parsing: avoids re-joining a long line for every chunk.
    if (chunk.indexOf('\n') === -1) {
      pieces.push(chunk);
      continue;
    }
    if (pieces.length > 0) {
      pieces.push(chunk);
      buf += pieces.join('');
      pieces = [];
    } else buf += chunk;
    const lastNl = buf.lastIndexOf('\n');
    const region = buf.slice(0, lastNl + 1);
    const out: LocatedValue[] = [];
    const consumed = consume(region, false, out);
    buf = buf.slice(consumed);
    if (out.length > 0) yield out;
  }
  buf += pieces.join('');
  const out: LocatedValue[] = [];
  consume(buf, true, out);
  if (out.length > 0) yield out;
}
