import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { basename, join } from 'node:path';

/**
 * The apt proxy a VM cluster's nodes use: an HTTP forward proxy on the bridge address that serves only
 * GET/HEAD for the Debian archives the host's own apt sources name, and nothing else (no CONNECT, no
 * other host), so the VMs reach the host's package sources and no other address. Package files (.deb)
 * are served from the host's apt cache when it holds the same file, else fetched once and kept in a
 * shared cache directory; index files pass through.
 */
export interface AptProxyOptions {
  host: string;
  port: number;
  /** host[:port] values the proxy may forward to. */
  allowHosts: readonly string[];
  /** Where fetched .deb files are kept (shared by every cluster). */
  cacheDir: string;
  /** The host's own package cache, read-only. */
  hostArchives?: string;
  log?: (line: string) => void;
}

const DEB_NAME = /^[A-Za-z0-9.+~%_-]+\.deb$/;

/**
 * apt names cached files `name_EPOCH%3aversion_arch.deb` while the archive's pool name has no epoch:
 * find either form in a directory.
 */
export function findCachedDeb(dir: string, file: string, listing?: readonly string[]): string | null {
  if (!DEB_NAME.test(file)) return null;
  if (existsSync(join(dir, file))) return join(dir, file);
  const [name, ...rest] = file.split('_');
  if (!name || rest.length === 0) return null;
  const tail = rest.join('_');
  const names = listing ?? (existsSync(dir) ? readdirSync(dir) : []);
  const hit = names.find(
    (n) => n.startsWith(`${name}_`) && /^\d+%3a/.test(n.slice(name.length + 1)) && n.endsWith(`%3a${tail}`),
  );
  return hit ? join(dir, hit) : null;
}

function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function deny(res: ServerResponse, code: number, why: string): void {
  res.writeHead(code, { 'content-type': 'text/plain' });
  res.end(`${why}\n`);
}

export function startAptProxy(o: AptProxyOptions): Promise<Server> {
  mkdirSync(o.cacheDir, { recursive: true });
  const log = o.log ?? (() => undefined);
  const allowed = new Set(o.allowHosts.map((h) => h.toLowerCase()));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? '';
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      deny(res, 400, 'absolute http:// URL expected (this is an apt proxy)');
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') return deny(res, 405, `${method} not allowed`);
    if (url.protocol !== 'http:' || !allowed.has(url.host.toLowerCase())) {
      log(`deny ${method} ${url.href}`);
      return deny(res, 403, `${url.host} is not one of the host's apt sources`);
    }
    // apt escapes '+' (and more) in pool paths; cached files carry the plain name.
    const file = safeDecode(basename(url.pathname));
    const isDeb = DEB_NAME.test(file);
    const cached = isDeb
      ? (findCachedDeb(o.cacheDir, file) ?? (o.hostArchives ? findCachedDeb(o.hostArchives, file) : null))
      : null;
    if (cached) {
      log(`hit ${file} ${cached}`);
      res.writeHead(200, { 'content-type': 'application/vnd.debian.binary-package' });
      if (method === 'HEAD') return res.end();
      createReadStream(cached).pipe(res);
      return;
    }
    log(`fetch ${method} ${url.href}`);
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: url.host };
    delete headers['proxy-connection'];
    const up = httpRequest(url, { method, headers, timeout: 60_000 }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (!isDeb || upRes.statusCode !== 200 || method !== 'GET') {
        upRes.pipe(res);
        return;
      }
      // Kept only once complete: a partial download never becomes a cache entry.
      const tmp = join(o.cacheDir, `.${file}.${process.pid}.${Date.now()}`);
      const out = createWriteStream(tmp);
      upRes.pipe(res);
      upRes.pipe(out);
      upRes.on('end', () => out.end(() => renameSync(tmp, join(o.cacheDir, file))));
      upRes.on('error', () => rmSync(tmp, { force: true }));
    });
    up.on('timeout', () => up.destroy(new Error('upstream timeout')));
    up.on('error', (err) => {
      log(`error ${url.href}: ${err.message}`);
      if (!res.headersSent) deny(res, 502, err.message);
      else res.destroy();
    });
    up.end();
  });
  server.on('connect', (_req, socket) => {
    socket.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve(server));
  });
}
