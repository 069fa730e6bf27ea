import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import { ensurePackages } from '../../core/control/packages.ts';
import { shellQuote } from '../../core/control/quote.ts';
import type { Remote } from '../../core/control/types.ts';
import type { DbVersionReport } from '../../core/database/capabilities.ts';
import { UserError } from '../../core/util/errors.ts';

/**
 * The user's own build of a built-in database (etcd, Redis): a release tarball (a file on the control
 * node, uploaded over SFTP, or an http(s) URL the node downloads), or one binary, with the version the
 * user expects. The artifact's sha256 is checked on the node before anything is installed; a wrong one
 * is refused and the staging copy removed. Installed, it lives under the node's faultline directory in a
 * directory named by its checksum, so a rerun with the same build uploads nothing.
 *
 * These are `dbOptions` keys (plans), `--db-version`, `--db-tarball`, `--db-sha256`, `--db-binary`
 * (`faultline test`).
 */
export const dbArtifactOptions = {
  /** The version the database must report (`etcd --version`, Redis `INFO server`); a mismatch is reported. */
  version: z.string().min(1).optional(),
  /** A release tarball (.tar.gz): a path on the control node or an http(s) URL. Needs `sha256`. */
  tarball: z.string().min(1).optional(),
  /** The tarball's (or binary's) sha256, 64 hex digits. */
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits')
    .transform((s) => s.toLowerCase())
    .optional(),
  /** One server binary on the control node, uploaded and run instead of the packaged one. */
  binary: z.string().min(1).optional(),
};

export interface DbArtifact {
  version?: string | undefined;
  tarball?: string | undefined;
  sha256?: string | undefined;
  binary?: string | undefined;
}

/** The refinement every built-in database's options schema applies: what the artifact keys allow together. */
export function checkArtifactOptions(o: DbArtifact, ctx: z.RefinementCtx): void {
  if (o.tarball && o.binary)
    ctx.addIssue({ code: 'custom', path: ['binary'], message: 'tarball and binary exclude each other' });
  if (o.tarball && !o.sha256)
    ctx.addIssue({
      code: 'custom',
      path: ['sha256'],
      message: 'a tarball needs its sha256 (sha256sum FILE): nothing unverified is installed',
    });
  if (o.sha256 && !o.tarball && !o.binary)
    ctx.addIssue({ code: 'custom', path: ['sha256'], message: 'sha256 goes with a tarball or a binary' });
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** `tarball` (unless a URL) and `binary` made absolute against `baseDir` (the plan's directory, or the cwd). */
export function resolveArtifactPaths(o: Record<string, unknown>, baseDir: string): Record<string, unknown> {
  const out = { ...o };
  if (typeof out.tarball === 'string' && !isUrl(out.tarball)) out.tarball = resolve(baseDir, out.tarball);
  if (typeof out.binary === 'string') out.binary = resolve(baseDir, out.binary);
  return out;
}

/** Where the running binary came from, for the report: the package, or the build with its sha256. */
export function artifactSource(a: DbArtifact | undefined, packaged: string, sha256?: string): string {
  const sum = sha256 ? ` sha256 ${sha256}` : '';
  if (a?.tarball) return `tarball ${a.tarball}${sum}`;
  if (a?.binary) return `binary ${a.binary}${sum}`;
  return packaged;
}

export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export interface InstalledArtifact {
  /** Binary name → its absolute path on the node (only the names found in the artifact). */
  paths: Record<string, string>;
  /** The artifact's sha256 as the node computed it. */
  sha256: string;
}

/**
 * Install an artifact on one node: stage it (upload or download), verify its sha256 there, unpack, find
 * the `binaries` (a tarball must hold `binaries[0]`; the others are used when present), and move the
 * result into `<baseDir>/dist/<sha256>`. A wrong checksum removes the staging copy and throws a UserError
 * naming the node and the file: nothing is installed.
 */
export async function installArtifact(
  remote: Remote,
  node: string,
  a: DbArtifact,
  o: { db: string; baseDir: string; binaries: readonly string[] },
): Promise<InstalledArtifact> {
  const local = a.tarball ?? a.binary;
  if (!local) throw new Error('installArtifact: no tarball or binary');
  const url = a.tarball !== undefined && isUrl(a.tarball);
  const localPath = url ? '' : resolve(local);
  if (!url && (!existsSync(localPath) || !statSync(localPath).isFile()))
    throw new UserError(
      `${o.db}: ${a.tarball ? 'tarball' : 'binary'} ${local}: no such file on the control node`,
    );
  // A binary without a given checksum is verified against the one computed here (catches a torn upload).
  const expected = a.sha256 ?? (a.binary ? await fileSha256(localPath) : undefined);
  if (!expected) throw new UserError(`${o.db}: tarball ${local}: needs its sha256`);
  const dist = `${o.baseDir}/dist`;
  const final = `${dist}/${expected}`;
  const main = o.binaries[0] as string;
  const have = await remote.exec(node, `test -x ${shellQuote(`${final}/${main}`)}`, {
    sudo: true,
    check: false,
  });
  if (have.code !== 0)
    await stageAndInstall(remote, node, a, { ...o, local, localPath, url, expected, dist, final });
  const found = await remote.exec(
    node,
    o.binaries.map((b) => `test -x ${shellQuote(`${final}/${b}`)} && echo ${shellQuote(b)}`).join('; ') +
      '; true',
    { sudo: true },
  );
  const names = found.stdout.split('\n').filter((l) => l.trim() !== '');
  return { paths: Object.fromEntries(names.map((b) => [b, `${final}/${b}`])), sha256: expected };
}

async function stageAndInstall(
  remote: Remote,
  node: string,
  a: DbArtifact,
  o: {
    db: string;
    binaries: readonly string[];
    local: string;
    localPath: string;
    url: boolean;
    expected: string;
    dist: string;
    final: string;
  },
): Promise<void> {
  // Per node and attempt: nodes that share this directory (a lab's shared mount) must not unpack into
  // each other.
  const stage = `${o.dist}/.stage-${node.replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${Date.now()}`;
  const file = `${stage}/${a.tarball ? 'artifact.tar.gz' : (o.binaries[0] as string)}`;
  const q = shellQuote;
  await remote.exec(node, `mkdir -p ${q(stage)}`, { sudo: true });
  try {
    if (o.url) {
      const fetch = `if command -v curl >/dev/null; then curl -fsSL --max-time 600 -o ${q(file)} ${q(o.local)}; elif command -v wget >/dev/null; then wget -q -T 600 -O ${q(file)} ${q(o.local)}; else echo 'neither curl nor wget on the node' >&2; exit 3; fi`;
      const r = await remote.exec(node, fetch, { sudo: true, check: false, timeoutMs: 660_000 });
      if (r.code !== 0)
        throw new UserError(
          `${node}: ${o.db}: cannot download ${o.local}: ${r.stderr.trim() || `exit ${r.code}`}`,
        );
    } else await remote.upload(node, o.localPath, file, { sudo: true });
    const sum = await remote.exec(node, `sha256sum ${q(file)} | cut -d' ' -f1`, { sudo: true });
    const got = sum.stdout.trim();
    if (got !== o.expected)
      throw new UserError(
        `${node}: ${o.db}: ${o.local}: sha256 is ${got || '(none)'}, expected ${o.expected}; refused, nothing installed`,
      );
    const unpack = a.tarball
      ? [
          `mkdir ${q(`${stage}/x`)} && tar -xzf ${q(file)} -C ${q(`${stage}/x`)}`,
          // Each binary wherever the tarball has it (etcd-vX.Y.Z-linux-amd64/etcd, redis-x/bin/redis-server …).
          ...o.binaries.map(
            (b) =>
              `p=$(find ${q(`${stage}/x`)} -maxdepth 3 -type f -name ${q(b)} | head -1); if [ -n "$p" ]; then mv "$p" ${q(`${stage}/${b}`)} && chmod 0755 ${q(`${stage}/${b}`)}; fi`,
          ),
          `rm -rf ${q(`${stage}/x`)} ${q(file)}`,
          `test -x ${q(`${stage}/${o.binaries[0] as string}`)} || { echo ${q(`no ${o.binaries[0]} in ${basename(o.local)} (looked 3 directories deep)`)} >&2; exit 3; }`,
        ]
      : [`chmod 0755 ${q(file)}`];
    const r = await remote.exec(node, unpack.join(' && '), { sudo: true, check: false, timeoutMs: 300_000 });
    if (r.code !== 0)
      throw new UserError(
        `${node}: ${o.db}: ${o.local}: cannot unpack: ${r.stderr.trim() || `exit ${r.code}`}`,
      );
    // Another node sharing this directory may have installed it first: keep that one.
    await remote.exec(
      node,
      `mv -T ${q(stage)} ${q(o.final)} 2>/dev/null || test -x ${q(`${o.final}/${o.binaries[0] as string}`)}`,
      { sudo: true },
    );
  } finally {
    await remote.exec(node, `rm -rf ${q(stage)}`, { sudo: true, check: false }).catch(() => undefined);
  }
}

export interface InstalledServer {
  /** The server binary to start: its name on the PATH (packaged) or its path in the user's build. */
  server: string;
  /** The database's command-line tool (etcdctl, redis-cli), likewise. */
  tool: string;
  /** The user's build's sha256; absent for the packages. */
  sha256?: string;
}

/**
 * A built-in database's server and its command-line tool on one node: the packages (Debian names, through
 * the node's package family), or the user's build, whose tool is used when the build has one (else the
 * tool's package).
 */
export async function installServer(
  remote: Remote,
  node: string,
  a: DbArtifact | undefined,
  o: {
    db: string;
    baseDir: string;
    server: [binary: string, pkg: string];
    tool: [binary: string, pkg: string];
  },
): Promise<InstalledServer> {
  const [server, serverPkg] = o.server;
  const [tool, toolPkg] = o.tool;
  if (!a?.tarball && !a?.binary) {
    await ensurePackages(remote, node, [serverPkg, toolPkg]);
    return { server, tool };
  }
  const got = await installArtifact(remote, node, a, {
    db: o.db,
    baseDir: o.baseDir,
    binaries: [server, tool],
  });
  if (!got.paths[tool]) await ensurePackages(remote, node, [toolPkg]);
  return { server: got.paths[server] as string, tool: got.paths[tool] ?? tool, sha256: got.sha256 };
}

const normalize = (v: string) => v.trim().replace(/^v/i, '');

export function versionReport(
  db: string,
  expected: string | undefined,
  source: string,
  nodes: DbVersionReport['nodes'],
): DbVersionReport {
  const mismatched =
    expected === undefined
      ? []
      : nodes
          .filter((n) => n.reported === null || normalize(n.reported) !== normalize(expected))
          .map((n) => n.node);
  return { db, expected: expected ?? null, source, nodes, mismatched };
}

/** One line for the console and the report. */
export function describeVersions(r: DbVersionReport): string {
  const seen = [...new Set(r.nodes.map((n) => n.reported ?? '?'))].join(', ');
  const base = `${r.db} ${seen} (${r.source})`;
  if (r.expected === null) return base;
  return r.mismatched.length === 0
    ? `${base}: matches the expected ${r.expected}`
    : `${base}: VERSION MISMATCH: expected ${r.expected}, ${r.mismatched
        .map((n) => `${n} reports ${r.nodes.find((x) => x.node === n)?.reported ?? 'nothing'}`)
        .join(', ')}`;
}
