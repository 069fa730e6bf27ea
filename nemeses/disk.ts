import { basename } from 'node:path';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
import { Rng } from '../src/core/generator/rng.ts';
import { pathName } from '../src/core/util/paths.ts';
import {
  type BitFlip,
  bitflipCommand,
  checksumCommand,
  dmCapabilityCommand,
  FLAKEY_MODES,
  fillCommand,
  flakeyProbeCommand,
  flakeyTable,
  freeBytesCommand,
  junkPath,
  listFilesCommand,
  loadTableCommand,
  overwriteCommand,
  parseChecksum,
  parseDmCapability,
  parseFlakeyProbe,
  parseWriteProbe,
  truncateCommand,
  writeProbeCommand,
  zeroChunkCommand,
} from './commands/disk-commands.ts';
import { matchFiles } from './file-glob.ts';
import { landingEvidence, shownAt } from './landing.ts';
import {
  confinedDiskRoots,
  listMarkersCommand,
  nodeStateDir,
  parseMarkers,
  writeMarkerCommand,
} from './node-state.ts';
import {
  type Capability,
  CapabilityMissingError,
  type CleanReport,
  type EvidenceSignal,
  type FaultEvidence,
  type FaultRecord,
  type InjectOptions,
  type Nemesis,
} from './types.ts';

/**
 * Disk faults.
 * - disk-full: params.dir (the DB's data directory; `dirs` {node: dir} when it differs per node), leaveBytes (default 64 KiB), writeCommand (a DB
 *   write expected to fail while full). A junk file fills the filesystem; heal removes it.
 * - corrupt: params.file, params.globs (patterns under params.dir, file-glob.ts: every matching file,
 *   listed on the node, each confined to the data directory after symlinks), or params.dir (a file
 *   drawn by seed); mode truncate | bitflip | zero | random; bytes (default 64), flips (default 8),
 *   where: offset or fraction of each file's size (truncate: the length it is cut to; the others: where
 *   the damaged bytes start; default a seeded position, truncate: the last `bytes` cut off), seed,
 *   backup (true: heal restores the original). Without backup corruption is permanent, as in Jepsen.
 * - flakey: params.device (a dm device whose table is linear), mode drop_writes | error_writes |
 *   corrupt_bio_byte, upSeconds (default 0), downSeconds (default 3600). Heal loads the linear table back.
 */

const JUNK = 'junk';
/** disk-full writes at most this much junk unless params.maxFillBytes says otherwise (4 GiB). */
export const DEFAULT_MAX_FILL_BYTES = 4 * 1024 ** 3;
const BACKUPS = 'backups';
const DM = 'dm-flakey';

interface DiskUndo extends Record<string, unknown> {
  action: string;
  perNode: Record<
    string,
    {
      dir?: string;
      junk?: string;
      freeBefore?: number;
      /** corrupt: every file damaged on the node. */
      corrupted?: Corrupted[];
      /** corrupt, as ledgers before file patterns recorded it: the one file and its backup. */
      file?: string;
      backup?: string;
      device?: string;
      linearTable?: string;
    }
  >;
}

/** One corrupted file: its reading before, what the injector wrote, its reading right after. */
interface Corrupted {
  file: string;
  before: Sum | null;
  backup?: string;
  /** The file's sha256 and size as the injector read them right after writing. */
  written?: Sum | null;
  /** What the injector wrote (mode, where), once its command succeeded. */
  applied?: string;
}
type Sum = { sha256: string; size: number };

/** Where a located corruption starts in a file of `size` bytes (undefined: not located). */
function locate(p: Record<string, unknown>, size: number): number | undefined {
  if (typeof p.offset === 'number') return Math.min(size, Math.floor(p.offset));
  if (typeof p.fraction === 'number') return Math.min(size, Math.floor(size * p.fraction));
  return undefined;
}

/** Damage one file as params say; returns what was written, in words. */
async function corruptOne(
  remote: Remote,
  node: string,
  c: Corrupted,
  p: Record<string, unknown>,
  rng: Rng,
): Promise<string> {
  const file = c.file;
  const size = c.before?.size ?? 0;
  const mode = String(p.mode ?? 'bitflip');
  const at = locate(p, size);
  const bytes = Math.max(1, Math.min(Math.max(1, size - (at ?? 0)), Math.floor(Number(p.bytes ?? 64))));
  if (mode === 'truncate') {
    if (at !== undefined) {
      await run(remote, node, `truncate -s ${at} ${shellQuote(file)}`);
      return `cut to ${at} byte(s) (${size - at} dropped)`;
    }
    const drop = Math.min(size, bytes);
    await run(remote, node, truncateCommand(file, drop));
    return `truncated ${drop} byte(s) off the end`;
  }
  const start = at ?? rng.int(Math.max(1, size - bytes + 1));
  if (mode === 'zero') {
    await run(remote, node, zeroChunkCommand(file, start, bytes));
    return `zeroed ${bytes} byte(s) at offset ${start}`;
  }
  if (mode === 'random') {
    // Seeded bytes, so a re-run writes the same garbage.
    const junk = Buffer.from(Array.from({ length: bytes }, () => rng.int(256)));
    await run(remote, node, overwriteCommand(file, start, junk.toString('base64')));
    return `overwrote ${bytes} byte(s) at offset ${start} with seeded random bytes`;
  }
  if (mode === 'bitflip') {
    const span = at !== undefined ? bytes : size;
    const from = at ?? 0;
    const flips: BitFlip[] = Array.from({ length: Math.max(1, Number(p.flips ?? 8)) }, () => ({
      offset: from + rng.int(Math.max(1, span)),
      bit: rng.int(8),
    }));
    await run(remote, node, bitflipCommand(file, flips));
    return `flipped ${flips.length} bit(s) at offsets ${flips
      .slice(0, 4)
      .map((f) => f.offset)
      .join(', ')}${flips.length > 4 ? ' …' : ''}`;
  }
  throw new Error(`corrupt: unknown mode "${mode}" (expected truncate, bitflip, zero, random)`);
}

/** The files a corrupt fault damages on one node: named, matched by patterns, or drawn by seed. */
async function corruptTargets(
  remote: Remote,
  node: string,
  p: Record<string, unknown>,
  rng: Rng,
): Promise<string[]> {
  const dir = (p.dirs as Record<string, string> | undefined)?.[node] ?? p.dir;
  const within = (p.within as Record<string, string> | undefined)?.[node];
  const named =
    (p.files as Record<string, string> | undefined)?.[node] ??
    (typeof p.file === 'string' ? p.file : undefined);
  let files: string[];
  if (named) files = [named];
  else {
    if (typeof dir !== 'string') throw new Error('corrupt needs params.file, params.files or params.dir');
    if (within) await insideOnNode(remote, node, dir, within);
    await onNodeOwnFilesystem(remote, node, dir);
    // find lists regular files and never follows a symlink: every path is physically under dir.
    const all = (await run(remote, node, listFilesCommand(dir))).stdout.split('\n').filter(Boolean);
    const base = `${dir.replace(/\/+$/, '')}/`;
    if (Array.isArray(p.globs)) {
      const rel = all.filter((f) => f.startsWith(base)).map((f) => f.slice(base.length));
      files = matchFiles(rel, p.globs as string[]).map((f) => base + f);
      if (files.length === 0)
        throw new Error(
          `${node}: no non-empty file under ${dir} matches ${(p.globs as string[]).join(', ')}`,
        );
    } else {
      if (all.length === 0) throw new Error(`${node}: no non-empty file under ${dir} to corrupt`);
      files = [all[rng.int(all.length)] as string];
    }
  }
  for (const f of files) {
    if (within) await insideOnNode(remote, node, f, within);
    await onNodeOwnFilesystem(remote, node, f);
  }
  return files;
}

/** The node's own markers (what the injector recorded there), read once per heal of a node. */
async function ownMarker(
  remote: Remote,
  node: string,
  id: string,
): Promise<(area: string, name: string) => string | undefined> {
  pathName('fault id', id);
  const areas = new Map<string, Map<string, string>>();
  for (const area of [JUNK, BACKUPS, DM]) {
    const text = (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), area)), false))
      .stdout;
    areas.set(area, new Map(parseMarkers(text).map((m) => [m.name, m.value])));
  }
  return (area, name) => areas.get(area)?.get(name);
}

/**
 * What a ledger's undo names, accepted only when it is exactly what the node's marker recorded: a
 * ledger cannot make heal remove, overwrite or remap anything faultline did not create.
 */
function confined(
  node: string,
  id: string,
  what: string,
  fromLedger: string,
  onNode: string | undefined,
): string | undefined {
  // No marker: the injector never got as far as creating anything for this fault on the node.
  if (onNode === undefined) return undefined;
  if (onNode !== fromLedger)
    throw new Error(
      `${node}: the ledger names ${what} ${fromLedger} for fault ${id}, the node recorded ${onNode}: left untouched`,
    );
  return onNode;
}

/**
 * A path the plan named relative to the data directory, checked on the node itself after symlinks
 * (`realpath -m`): a symlink in the data directory pointing at /etc cannot carry the fault out of it.
 */
async function insideOnNode(
  remote: Remote,
  node: string,
  path: string,
  bases: string | readonly string[],
  what = 'the data directory',
): Promise<void> {
  const roots = typeof bases === 'string' ? [bases] : bases;
  const r = await run(remote, node, `realpath -m -- ${[...roots, path].map(shellQuote).join(' ')}`);
  const lines = r.stdout.trim().split('\n');
  const real = lines[roots.length];
  const realRoots = lines.slice(0, roots.length).filter(Boolean);
  if (!real || !realRoots.some((b) => real === b || real.startsWith(`${b}/`)))
    throw new Error(
      `${node}: ${path} leads to ${real ?? '?'}, outside ${what} ${(realRoots.length > 0 ? realRoots : roots).join(', ')}: refused`,
    );
}

/**
 * On a local-cluster node any target, however it was given (plan, --nemesis, API, ledger), must lead
 * into one of the node's own bounded filesystems: everything else there is the host's.
 */
async function onNodeOwnFilesystem(remote: Remote, node: string, path: string): Promise<void> {
  const roots = confinedDiskRoots(remote.node(node));
  if (roots) await insideOnNode(remote, node, path, roots, "the node's own filesystems");
}

/** A corrupted file's backup (and marker) name: the fault id, and the file's place in its list. */
function backupName(id: string, i: number): string {
  return i === 0 ? id : `${id}.${i}`;
}

function targetsOf(spec: { targets?: string | string[] }, remote: Remote): string[] {
  if (Array.isArray(spec.targets)) return spec.targets;
  if (typeof spec.targets === 'string' && remote.nodes.some((n) => n.name === spec.targets))
    return [spec.targets];
  throw new Error('disk faults need resolved target nodes (a node name or list)');
}

async function run(remote: Remote, node: string, cmd: string, check = true) {
  return remote.exec(node, cmd, { sudo: true, check, timeoutMs: 60_000 });
}

async function freeBytes(remote: Remote, node: string, dir: string): Promise<number> {
  const n = Number((await run(remote, node, freeBytesCommand(dir))).stdout.trim());
  if (!Number.isFinite(n)) throw new Error(`${node}: cannot read free space of ${dir}`);
  return n;
}

async function checksum(remote: Remote, node: string, file: string) {
  return parseChecksum((await run(remote, node, checksumCommand(file), false)).stdout);
}

export async function dmFlakeyCapability(remote: Remote, node: string): Promise<Capability> {
  const r = await run(remote, node, dmCapabilityCommand(), false);
  const c = parseDmCapability(r.stdout);
  return { name: 'dm-flakey', available: c.available, ...(c.reason && { reason: c.reason }) };
}

export const diskNemesis: Nemesis & { kind: 'disk' } = {
  kind: 'disk',

  async capabilities(remote, node): Promise<Capability[]> {
    const r = await run(
      remote,
      node,
      'command -v fallocate truncate sha256sum od dd df >/dev/null && echo ok',
      false,
    );
    const tools = r.stdout.includes('ok');
    return [
      {
        name: 'disk-full',
        available: tools,
        ...(!tools && { reason: 'needs coreutils and util-linux (fallocate)' }),
      },
      {
        name: 'corrupt',
        available: tools,
        ...(!tools && { reason: 'needs coreutils (truncate, od, dd, sha256sum)' }),
      },
      await dmFlakeyCapability(remote, node),
    ];
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const p = spec.params ?? {};
    const action = spec.action;
    if (!['disk-full', 'corrupt', 'flakey'].includes(action))
      throw new Error(`disk: unknown action "${action}" (expected disk-full, corrupt, flakey)`);
    const nodes = targetsOf(spec, remote);
    const perNode: DiskUndo['perNode'] = {};
    const rng = new Rng(typeof p.seed === 'number' ? p.seed : 1);
    for (const node of nodes) {
      const u: DiskUndo['perNode'][string] = {};
      perNode[node] = u;
      const dir = (p.dirs as Record<string, string> | undefined)?.[node] ?? p.dir;
      const within = (p.within as Record<string, string> | undefined)?.[node];
      if (action === 'disk-full') {
        if (typeof dir !== 'string') throw new Error('disk-full needs params.dir (the data directory)');
        if (within) await insideOnNode(remote, node, dir, within);
        await onNodeOwnFilesystem(remote, node, dir);
        u.dir = dir;
        u.junk = junkPath(dir, id);
        u.freeBefore = await freeBytes(remote, node, dir);
        // A data directory on a big shared filesystem (a lab node whose data sits on its root disk) would
        // fill that disk: refused, naming what is needed, unless the plan raises the cap knowingly.
        const cap = Math.floor(Number(p.maxFillBytes ?? DEFAULT_MAX_FILL_BYTES));
        const fill = u.freeBefore - Math.max(0, Math.floor(Number(p.leaveBytes ?? 65536)));
        if (fill > cap)
          throw new CapabilityMissingError(
            node,
            'disk-full',
            `${dir} has ${fill} bytes to fill, over the ${cap}-byte cap: give the data directory its own small filesystem (a tmpfs or loop device), or raise params.maxFillBytes`,
          );
      } else if (action === 'corrupt') {
        const files = await corruptTargets(remote, node, p, rng);
        u.corrupted = [];
        for (const [i, file] of files.entries()) {
          const before = await checksum(remote, node, file);
          if (!before) throw new Error(`${node}: cannot read ${file}`);
          u.corrupted.push({
            file,
            before,
            ...(p.backup === true && {
              backup: `${nodeStateDir(remote.node(node), BACKUPS)}/${backupName(id, i)}`,
            }),
          });
        }
      } else {
        const cap = await dmFlakeyCapability(remote, node);
        if (!cap.available) throw new CapabilityMissingError(node, 'dm-flakey', cap.reason ?? 'unavailable');
        if (typeof p.device !== 'string') throw new Error('flakey needs params.device (a dm device name)');
        u.device = p.device;
        u.linearTable = (await run(remote, node, `dmsetup table ${shellQuote(p.device)}`)).stdout.trim();
        flakeyTable(u.linearTable, 'drop_writes', 0, 1); // throws unless linear: never record a non-linear original
      }
    }
    const undo: DiskUndo = { action, perNode };
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    await opts?.beforeApply?.(record);
    for (const node of nodes) {
      const u = perNode[node] as DiskUndo['perNode'][string];
      if (action === 'disk-full') {
        const leave = Math.max(0, Math.floor(Number(p.leaveBytes ?? 65536)));
        await run(
          remote,
          node,
          writeMarkerCommand(nodeStateDir(remote.node(node), JUNK), id, u.junk as string),
        );
        // Re-read free space right before allocating: the DB keeps writing meanwhile.
        const free = await freeBytes(remote, node, u.dir as string);
        await run(remote, node, fillCommand(u.junk as string, Math.max(0, free - leave)));
      } else if (action === 'corrupt') {
        for (const [i, c] of (u.corrupted ?? []).entries()) {
          if (c.backup) {
            await run(
              remote,
              node,
              `mkdir -p ${shellQuote(nodeStateDir(remote.node(node), BACKUPS))} && cp -p ${shellQuote(c.file)} ${shellQuote(c.backup)}`,
            );
            await run(
              remote,
              node,
              writeMarkerCommand(
                nodeStateDir(remote.node(node), BACKUPS),
                `${backupName(id, i)}.target`,
                c.file,
              ),
            );
          }
          c.applied = await corruptOne(remote, node, c, p, rng);
          // The injector's own reading of what it wrote: size and hash before → after.
          c.written = await checksum(remote, node, c.file);
        }
      } else {
        const mode = String(p.mode ?? 'drop_writes') as (typeof FLAKEY_MODES)[number];
        if (!FLAKEY_MODES.includes(mode)) throw new Error(`flakey: unknown mode ${mode}`);
        await run(
          remote,
          node,
          writeMarkerCommand(nodeStateDir(remote.node(node), DM), id, `${u.device}|${u.linearTable}`),
        );
        const table = flakeyTable(
          u.linearTable as string,
          mode,
          Number(p.upSeconds ?? 0),
          Number(p.downSeconds ?? 3600),
        );
        await run(remote, node, loadTableCommand(u.device as string, table));
      }
    }
    return record;
  },

  async evidence(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as DiskUndo;
    const p = record.spec.params ?? {};
    const signals: EvidenceSignal[] = [];
    for (const node of record.nodes) {
      const u = undo.perNode[node] as DiskUndo['perNode'][string];
      if (undo.action === 'disk-full') {
        const leave = Number(p.leaveBytes ?? 65536);
        const during = await freeBytes(remote, node, u.dir as string);
        signals.push({
          side: 'injector',
          node,
          signal: `free bytes on ${u.dir}`,
          before: u.freeBefore,
          during,
          landed: during <= leave + 1048576 && during < (u.freeBefore ?? 0),
        });
        const probe = parseWriteProbe(
          (await run(remote, node, writeProbeCommand(u.dir as string, leave + 1048576), false)).stdout,
        );
        signals.push({
          side: 'victim',
          node,
          signal: `write of ${leave + 1048576} bytes next to the data`,
          during: probe.ok ? 'ok' : probe.detail,
          landed: probe.enospc,
        });
        if (typeof p.writeCommand === 'string') {
          const w = await run(remote, node, p.writeCommand, false);
          signals.push({
            side: 'victim',
            node,
            signal: `DB write \`${p.writeCommand}\``,
            during: `${w.code}: ${`${w.stdout} ${w.stderr}`.trim().slice(0, 200)}`,
            landed: w.code !== 0 || /error|OOM|MISCONF|no space/i.test(w.stdout),
          });
        }
      } else if (undo.action === 'corrupt') {
        for (const c of u.corrupted ?? []) {
          const changed = (x: Sum | null | undefined) =>
            x != null && (x.sha256 !== c.before?.sha256 || x.size !== c.before?.size);
          signals.push({
            side: 'injector',
            node,
            signal: `sha256/size of ${c.file} as written by the injector`,
            before: c.before,
            during: c.written ?? 'not written',
            landed: c.applied !== undefined && changed(c.written),
            ...(c.applied && { note: c.applied }),
          });
          const during = await checksum(remote, node, c.file);
          signals.push({
            side: 'victim',
            node,
            signal: `sha256/size of ${c.file}`,
            before: c.before,
            during,
            landed: changed(during),
          });
        }
      } else {
        const st = await run(remote, node, `dmsetup status ${shellQuote(u.device as string)}`, false);
        signals.push({
          side: 'injector',
          node,
          signal: `dmsetup status ${u.device}`,
          before: u.linearTable,
          during: st.stdout.trim(),
          landed: /\sflakey\s/.test(` ${st.stdout}`),
        });
        const probe = parseFlakeyProbe(
          (await run(remote, node, flakeyProbeCommand(u.device as string), false)).stdout,
        );
        signals.push({
          side: 'victim',
          node,
          signal: `O_DIRECT write + read-back on ${probe.mount ?? `${u.device} (not mounted)`}`,
          during: `write ${probe.write || '?'}; read-back ${probe.readback || '?'}`,
          landed: probe.write.startsWith('err') || probe.readback === 'differs',
        });
      }
    }
    return landingEvidence(signals, { show: shownAt('during', true) });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<DiskUndo>;
    for (const [node, u] of Object.entries(undo.perNode ?? {})) {
      // The undo may come from a ledger file someone else wrote: every path or table it names must be
      // the one this node's own marker (written by the injector, under /run/faultline) says faultline
      // created for this fault id, or nothing is removed, copied or loaded.
      const mine = await ownMarker(remote, node, record.id);
      if (undo.action === 'disk-full' && u.junk) {
        const junk = confined(node, record.id, 'junk file', u.junk, mine(JUNK, record.id));
        if (junk === undefined) continue;
        if (basename(junk) !== basename(junkPath('/', record.id)))
          throw new Error(`${node}: ${junk} is not a junk file of fault ${record.id}: not removed`);
        await run(
          remote,
          node,
          `rm -f ${shellQuote(junk)} ${shellQuote(`${nodeStateDir(remote.node(node), JUNK)}/${record.id}`)}`,
        );
      } else if (undo.action === 'corrupt') {
        // A ledger written before file patterns names one file at the top (its backup is id-named too).
        const corrupted = u.corrupted ?? (u.file ? [{ file: u.file, before: null, backup: u.backup }] : []);
        for (const [i, c] of corrupted.entries()) {
          if (!c.backup) continue;
          const name = backupName(record.id, i);
          const backup = `${nodeStateDir(remote.node(node), BACKUPS)}/${name}`;
          if (c.backup !== backup)
            throw new Error(`${node}: backup ${c.backup} is not faultline's backup of fault ${record.id}`);
          const file = confined(node, record.id, 'corrupted file', c.file, mine(BACKUPS, `${name}.target`));
          if (file === undefined) continue;
          await run(
            remote,
            node,
            `if [ -f ${shellQuote(backup)} ]; then cp -p ${shellQuote(backup)} ${shellQuote(file)} && rm -f ${shellQuote(backup)} ${shellQuote(`${backup}.target`)}; fi`,
          );
        }
      } else if (undo.action === 'flakey' && u.device && u.linearTable) {
        const table = `${u.device}|${u.linearTable}`;
        if (confined(node, record.id, 'dm-flakey table', table, mine(DM, record.id)) === undefined) continue;
        await run(remote, node, loadTableCommand(u.device, u.linearTable));
        await run(
          remote,
          node,
          `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), DM)}/${record.id}`)}`,
          false,
        );
      }
    }
  },

  async evidenceAfterHeal(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as DiskUndo;
    const signals: EvidenceSignal[] = [];
    for (const [node, u] of Object.entries(undo.perNode)) {
      if (undo.action === 'disk-full') {
        const after = await freeBytes(remote, node, u.dir as string);
        signals.push({
          side: 'injector',
          node,
          signal: `free bytes on ${u.dir}`,
          before: u.freeBefore,
          after,
          // Within 1 MiB of the start: the DB may have written a little meanwhile.
          landed: after >= (u.freeBefore ?? 0) - 1048576,
        });
      } else if (undo.action === 'corrupt') {
        for (const c of u.corrupted ?? []) {
          const after = await checksum(remote, node, c.file);
          signals.push({
            side: 'victim',
            node,
            signal: `sha256/size of ${c.file}`,
            before: c.before,
            after,
            // Without a backup corruption is permanent (as in Jepsen): the after reading records it.
            landed: c.backup ? after?.sha256 === c.before?.sha256 : true,
            ...(!c.backup && { note: 'no backup: the corruption stays (permanent by design)' }),
          });
        }
      } else if (undo.action === 'flakey' && u.device) {
        const table = await run(remote, node, `dmsetup table ${shellQuote(u.device)}`, false);
        signals.push({
          side: 'injector',
          node,
          signal: `dmsetup status ${u.device}`,
          before: u.linearTable,
          after: table.stdout.trim(),
          landed: table.stdout.trim() === u.linearTable,
        });
      }
    }
    return landingEvidence(signals, {
      noneLands: true,
      reason: 'the disk is not back to its state before the fault',
    });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const found: string[] = [];
    const fixed: string[] = [];
    const junk = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), JUNK)), false)).stdout,
    );
    for (const m of junk) {
      found.push(`junk file ${m.value} (fault ${m.name})`);
      await run(
        remote,
        node,
        `rm -f ${shellQuote(m.value)} ${shellQuote(`${nodeStateDir(remote.node(node), JUNK)}/${m.name}`)}`,
      );
      fixed.push(`removed ${m.value}`);
    }
    const backups = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), BACKUPS)), false)).stdout,
    ).filter((m) => m.name.endsWith('.target'));
    for (const m of backups) {
      const id = m.name.replace(/\.target$/, '');
      const backup = `${nodeStateDir(remote.node(node), BACKUPS)}/${id}`;
      found.push(`corrupted ${m.value} with a backup (fault ${id})`);
      await run(
        remote,
        node,
        `cp -p ${shellQuote(backup)} ${shellQuote(m.value)} && rm -f ${shellQuote(backup)} ${shellQuote(`${backup}.target`)}`,
        false,
      );
      fixed.push(`restored ${m.value} from its backup`);
    }
    const dm = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), DM)), false)).stdout,
    );
    for (const m of dm) {
      const [device, table] = m.value.split('|');
      found.push(`dm-flakey table on ${device} (fault ${m.name})`);
      if (device && table) {
        await run(remote, node, loadTableCommand(device, table), false);
        fixed.push(`loaded the linear table back on ${device}`);
      }
      await run(
        remote,
        node,
        `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), DM)}/${m.name}`)}`,
        false,
      );
    }
    const left = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), JUNK)), false)).stdout,
    );
    return { clean: left.length === 0, fixed, found };
  },
};
