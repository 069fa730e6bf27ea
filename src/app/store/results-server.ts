import {
  closeSync,
  constants,
  createReadStream,
  existsSync,
  fstatSync,
  openSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, sep } from 'node:path';
import { escapeHtml } from '../../core/util/html.ts';
import { diffMarkdown, diffSessions, flappingRows } from './diff.ts';
import { StoreIndex } from './index-file.ts';
import { type SessionSummary, sessionIds, storeNames } from './store.ts';

/**
 * `faultline serve`: a read-only results browser over a session store, reading it as files. The index
 * shows every name with its last sessions as a verdict grid and a throughput trend per row; each session
 * has a page, its files are served as they are, and `/diff/<name>/<a>/<b>` compares two sessions.
 * Summaries come from the store's index (./index-file.ts) and are kept in memory, so only new sessions
 * are read again. Only GET and HEAD; paths outside the root are refused.
 */

const COLOR = (r: { verdict: string; outcome: string | null }) =>
  r.outcome === 'failure'
    ? '#d9534f'
    : r.outcome === 'success'
      ? '#5cb85c'
      : /^PASS|valid$/.test(r.verdict)
        ? '#5cb85c'
        : /^FAIL|INVALID/.test(r.verdict)
          ? '#d9534f'
          : '#f0ad4e';

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}
.cell{display:inline-block;width:14px;height:14px;margin:1px}.range{font-size:11px;color:#555}a{color:#0366d6}pre{background:#f6f8fa;padding:8px}
</style></head><body><p><a href="/">all plans</a></p><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function trend(values: (number | null)[]): string {
  const v = values.filter((x): x is number => x !== null);
  if (v.length < 2) return '';
  const max = Math.max(...v);
  const min = Math.min(...v);
  const pts = values
    .map((x, i) =>
      x === null ? null : `${(i / (values.length - 1)) * 120},${20 - ((x - min) / (max - min || 1)) * 18}`,
    )
    .filter(Boolean)
    .join(' ');
  const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const range = min === max ? fmt(min) : `${fmt(min)}–${fmt(max)}`;
  // The range beside the line: a sparkline alone shows a change but not whether it matters.
  return `<svg width="124" height="22" class="trend"><title>${range}, last ${fmt(v.at(-1)!)}</title><polyline fill="none" stroke="#0366d6" points="${pts}"/></svg> <span class="range">${range}</span>`;
}

export function renderIndex(index: StoreIndex, last: number): string {
  const parts: string[] = [];
  for (const name of storeNames(index.root)) {
    const sessions = index.sessions(name, last);
    if (sessions.length === 0) continue;
    const rowIds = [...new Set(sessions.flatMap((s) => s.rows.map((r) => r.id)))];
    const flapping = new Set(flappingRows(sessions).map((f) => f.row));
    const newest = sessions.at(-1)!;
    const prev = sessions.at(-2);
    parts.push(
      `<h2 id="${escapeHtml(name)}">${escapeHtml(name)}</h2><p>latest <a href="/session/${escapeHtml(name)}/${escapeHtml(newest.id)}">${escapeHtml(newest.id)}</a>: <b>${escapeHtml(newest.verdict)}</b>${prev ? ` · <a href="/diff/${escapeHtml(name)}/${escapeHtml(prev.id)}/${escapeHtml(newest.id)}">diff with previous</a>` : ''}</p>`,
      '<table><tr><th>row</th><th>last sessions (oldest → newest)</th><th>ops/s trend</th><th>p99 trend</th><th>anomalies trend</th></tr>',
      ...rowIds.map((id) => {
        const cells = sessions
          .map((s) => {
            const r = s.rows.find((x) => x.id === id);
            const title = `${s.id}: ${r ? r.verdict : 'absent'}`;
            const color = r ? COLOR(r) : '#eee';
            return `<a href="/session/${escapeHtml(name)}/${escapeHtml(s.id)}" title="${escapeHtml(title)}" class="cell" style="background:${color}"></a>`;
          })
          .join('');
        const figures = sessions.map((s) => s.rows.find((x) => x.id === id));
        return `<tr class="row"><td>${escapeHtml(id)}${flapping.has(id) ? ' (flapping)' : ''}</td><td>${cells}</td><td>${trend(figures.map((r) => r?.opsPerSec ?? null))}</td><td>${trend(figures.map((r) => r?.p99Ms ?? null))}</td><td>${trend(figures.map((r) => r?.anomalies ?? null))}</td></tr>`;
      }),
      '</table>',
    );
  }
  return page('faultline sessions', parts.join('\n') || '<p>no sessions in this store</p>');
}

export function renderSession(s: SessionSummary): string {
  const rows = s.rows
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.id)}</td><td style="color:${COLOR(r)}"><b>${escapeHtml(r.verdict)}</b></td><td>${escapeHtml(r.expected?.join(' or ') ?? '—')}</td><td>${escapeHtml(r.outcome ?? '—')}</td><td>${r.opsPerSec?.toFixed(1) ?? '—'}</td><td>${r.p99Ms?.toFixed(1) ?? '—'}</td></tr>`,
    )
    .join('');
  const href = (f: string) => `/files/${escapeHtml(s.name)}/${escapeHtml(s.id)}/${escapeHtml(f)}`;
  const report = existsSync(join(s.dir, 'findings/report.html'))
    ? `<p class="report"><a href="${href('findings/report.html')}">open the report page</a> (every scenario, its fault windows, plots and per-key checker pages)</p>`
    : '';
  const files = [
    'findings/report.html',
    'findings/report.md',
    'findings/report.json',
    'junit.xml',
    'session-log.md',
    'results.json',
    'logs/control.log',
  ]
    .filter((f) => existsSync(join(s.dir, f)))
    .map((f) => `<li><a href="${href(f)}">${escapeHtml(f)}</a></li>`)
    .join('');
  return page(
    `${s.name} ${s.id}`,
    `<p class="verdict">session verdict: <b>${escapeHtml(s.verdict)}</b></p><p>${escapeHtml(s.headline)}</p>${report}
<table><tr><th>row</th><th>verdict</th><th>expected</th><th>outcome</th><th>ops/s</th><th>p99 ms</th></tr>${rows}</table>
<h2>files</h2><ul>${files}</ul>`,
  );
}

const TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.gz': 'application/gzip',
};

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();

/** The largest file served (a history of millions of ops is a few hundred MB). */
export const MAX_RESPONSE_BYTES = 1024 * 1024 * 1024;
/** A request's headers and body must arrive within this long; an idle connection is closed after it. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The Host header must name the address the server is bound to (or, bound to loopback, `localhost`):
 * a page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) is refused.
 */
function hostAllowed(header: string | undefined, bound: string, port: number): boolean {
  if (header === undefined) return false;
  const loopback = bound === '127.0.0.1' || bound === '::1' || bound === 'localhost';
  const names = new Set([bound, bound.includes(':') ? `[${bound}]` : bound]);
  if (loopback) for (const n of ['localhost', '127.0.0.1', '[::1]']) names.add(n);
  const h = header.toLowerCase();
  return [...names].some((n) => h === `${n}:${port}` || (port === 80 && h === n));
}

export function startServer(root: string, o: { port: number; host: string; last: number }): Promise<Server> {
  const index = new StoreIndex(root);
  const realRoot = realpathSync(root);
  const server = createServer((req, res) => {
    const send = (code: number, body: string, type = 'text/html; charset=utf-8') => {
      if (res.headersSent) return res.destroy();
      res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const port = (server.address() as AddressInfo | null)?.port ?? o.port;
    if (!hostAllowed(req.headers.host, o.host, port))
      return send(421, `this server answers only to ${o.host}:${port}`, 'text/plain');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, 'read-only: GET and HEAD only', 'text/plain');
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return send(400, 'bad path', 'text/plain');
    }
    const parts = path.split('/').filter(Boolean);
    if (parts.some((p) => p === '..' || p === '.' || p.includes('\0')))
      return send(403, 'outside the store', 'text/plain');
    try {
      if (parts.length === 0) return send(200, renderIndex(index, o.last));
      const [kind, name, id, ...rest] = parts;
      const known = (n?: string, i?: string) =>
        n !== undefined && i !== undefined && storeNames(root).includes(n) && sessionIds(root, n).includes(i);
      if (kind === 'session' && known(name, id) && rest.length === 0)
        return send(200, renderSession(index.summaries(name!, [id!])[0]!));
      if (kind === 'diff' && known(name, id) && known(name, rest[0]) && rest.length === 1) {
        const ids = sessionIds(root, name!);
        const upTo = ids.indexOf(rest[0]!);
        const [a] = index.summaries(name!, [id!]);
        const window = index.summaries(name!, ids.slice(Math.max(0, upTo - 9), upTo + 1));
        const d = diffSessions(a!, window.at(-1)!, window);
        return send(
          200,
          page(
            `${name}: ${id} → ${rest[0]}`,
            `<p class="sessions">from <a href="/session/${escapeHtml(name!)}/${escapeHtml(id!)}">${escapeHtml(id!)}</a> to <a href="/session/${escapeHtml(name!)}/${escapeHtml(rest[0]!)}">${escapeHtml(rest[0]!)}</a></p><pre class="diff">${escapeHtml(diffMarkdown(d))}</pre>`,
          ),
        );
      }
      if (kind === 'files' && known(name, id) && rest.length > 0) {
        const asked = join(root, name!, id!, ...rest);
        // A file `sessions compress` gzipped is served under its plain name, for the browser to inflate:
        // the report pages keep linking to the plain names.
        const gzipped = !isFile(asked) && isFile(`${asked}.gz`);
        const file = gzipped ? `${asked}.gz` : asked;
        if (!isFile(file)) return send(404, 'no such file', 'text/plain');
        const real = realpathSync(file);
        if (!real.startsWith(realRoot + sep)) return send(403, 'outside the store', 'text/plain');
        // Opened without blocking and checked on the open descriptor: a file swapped for a FIFO or a
        // device after the check above is refused, and one that vanished is a 404, never a crash.
        let fd: number;
        try {
          fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
        } catch {
          return send(404, 'no such file', 'text/plain');
        }
        const st = fstatSync(fd);
        if (!st.isFile() || st.size > MAX_RESPONSE_BYTES) {
          closeSync(fd);
          return st.isFile()
            ? send(413, `over ${MAX_RESPONSE_BYTES} bytes: not served`, 'text/plain')
            : send(403, 'not a regular file', 'text/plain');
        }
        res.writeHead(200, {
          'content-type': TYPES[extname(asked)] ?? 'text/plain; charset=utf-8',
          'content-length': st.size,
          ...(gzipped && { 'content-encoding': 'gzip' }),
        });
        if (req.method === 'HEAD') {
          closeSync(fd);
          return res.end();
        }
        const stream = createReadStream('', { fd, end: Math.max(0, st.size - 1) });
        stream.on('error', () => res.destroy());
        return stream.pipe(res);
      }
      return send(404, 'not found', 'text/plain');
    } catch (err) {
      return send(500, `error: ${escapeHtml(String(err))}`, 'text/plain');
    }
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  server.setTimeout(REQUEST_TIMEOUT_MS, (socket) => socket.destroy());
  // One failed request never takes the server down.
  server.on('clientError', (_err, socket) => socket.destroy());
  return new Promise((resolveStart, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolveStart(server));
  });
}
