import { parseDuration } from '../../../core/util/duration.ts';
import { UserError } from '../../../core/util/errors.ts';
import { pathName } from '../../../core/util/paths.ts';
import { parseSize } from '../../../core/util/size.ts';
import { terminalText } from '../../../core/util/terminal.ts';
import { diffIsRed, diffSessions, renderDiff } from '../../store/diff.ts';
import { rewriteIndex, StoreIndex } from '../../store/index-file.ts';
import { compress, compressible, planPrune, prune } from '../../store/maintain.ts';
import {
  readSession,
  resolveSession,
  type SessionSummary,
  sessionIds,
  storeNames,
  storeRoot,
} from '../../store/store.ts';
import { positiveInt } from '../int-flags.ts';

/** The `faultline sessions` subcommands: flags in, text (or JSON) on stdout, an exit code out. */

/** Names, headlines and reasons come from the store's files: shown, never sent as escape sequences. */
const out = (s: string) => process.stdout.write(terminalText(s.endsWith('\n') ? s : `${s}\n`));

/** `--name`: a plan slug or test name, validated like every name used in a path (no `..`, no `/`). */
function nameFlag(v: unknown): string | undefined {
  return v === undefined ? undefined : pathName('--name', String(v));
}

const rowLine = (s: SessionSummary) =>
  s.rows.map((r) => `${r.id} ${r.verdict}${r.outcome === 'failure' ? ' ✗' : ''}`).join(', ');

export function listCommand(o: { root: string; name?: string; last: string; json?: boolean }): number {
  const root = storeRoot(o.root);
  const last = positiveInt(o.last, '--last');
  const name = nameFlag(o.name);
  const names = name ? [name] : storeNames(root);
  const index = new StoreIndex(root);
  const all = names.map((name) => ({ name, sessions: index.sessions(name, last) }));
  if (o.json) {
    out(JSON.stringify(all));
    return 0;
  }
  for (const { name, sessions } of all) {
    out(`${name} (${sessions.length} session(s))`);
    for (const s of sessions) out(`  ${s.id}  ${s.verdict.padEnd(18)}  ${rowLine(s)}`);
  }
  if (all.length === 0) out(`${root}: no sessions`);
  return 0;
}

export function showCommand(ref: string, o: { root: string; name?: string; json?: boolean }): number {
  const root = storeRoot(o.root);
  const { name, id } = resolveSession(root, ref, nameFlag(o.name));
  const s = readSession(root, name, id);
  if (o.json) {
    out(JSON.stringify(s));
    return 0;
  }
  out(`${s.name} ${s.id} (${s.kind}): ${s.verdict}`);
  out(s.headline);
  out(`dir: ${s.dir}`);
  for (const r of s.rows) {
    const fig = [
      r.expected ? `expected ${r.expected.join(' or ')}` : '',
      r.opsPerSec !== null ? `${r.opsPerSec.toFixed(1)} ops/s` : '',
      r.p99Ms !== null ? `p99 ${r.p99Ms.toFixed(1)} ms` : '',
      r.anomalies !== null ? `${r.anomalies} anomalies` : '',
    ]
      .filter(Boolean)
      .join(', ');
    out(`  ${r.id.padEnd(10)} ${r.verdict.padEnd(30)} ${r.outcome ?? ''}${fig ? `  (${fig})` : ''}`);
  }
  return 0;
}

export function diffCommand(a: string, b: string, o: Record<string, string | boolean | undefined>): number {
  const root = storeRoot(String(o.root));
  const name = nameFlag(o.name);
  const threshold = Number(o.threshold ?? 20);
  if (!Number.isFinite(threshold) || threshold < 0)
    throw new UserError(`--threshold: a percentage (got ${String(o.threshold)})`);
  const sa = resolveSession(root, a, name);
  const sb = resolveSession(root, b, name ?? sa.name);
  const window = positiveInt(o.flapWindow ?? 10, '--flap-window');
  const ids = sessionIds(root, sb.name);
  const upTo = ids.indexOf(sb.id);
  const history = ids
    .slice(Math.max(0, upTo + 1 - window), upTo + 1)
    .map((id) => readSession(root, sb.name, id));
  const d = diffSessions(
    readSession(root, sa.name, sa.id),
    readSession(root, sb.name, sb.id),
    history,
    threshold / 100,
  );
  out(o.json ? JSON.stringify(d) : renderDiff(d));
  return diffIsRed(d) ? 1 : 0;
}

export async function pruneCommand(o: Record<string, string | boolean | undefined>): Promise<number> {
  const root = storeRoot(String(o.root));
  if (o.keep === undefined && o.olderThan === undefined)
    throw new UserError('say what to prune: --keep N and/or --older-than DURATION');
  const plan = planPrune(root, {
    ...(o.keep !== undefined && { keep: positiveInt(o.keep, '--keep') }),
    ...(o.olderThan !== undefined && { olderThanMs: parseDuration(String(o.olderThan), '--older-than') }),
    ...(o.name !== undefined && { name: nameFlag(o.name) as string }),
  });
  for (const s of plan.remove) out(`${o.dryRun ? 'would remove' : 'removing'} ${s.name}/${s.id}`);
  if (!o.dryRun) {
    await prune(plan);
    for (const name of new Set(plan.remove.map((s) => s.name))) rewriteIndex(root, name);
  }
  out(`${plan.remove.length} session(s) ${o.dryRun ? 'would be removed' : 'removed'}, ${plan.keep} kept`);
  return 0;
}

export async function compressCommand(o: Record<string, string | boolean | undefined>): Promise<number> {
  const root = storeRoot(String(o.root));
  const items = compressible(root, {
    minBytes: parseSize(String(o.minSize ?? '256K'), '--min-size'),
    ...(o.name !== undefined && { name: nameFlag(o.name) as string }),
  });
  const total = items.reduce((n, i) => n + i.bytes, 0);
  if (o.dryRun) {
    for (const i of items) out(`would compress ${i.path} (${i.bytes} bytes)`);
    out(`${items.length} file(s), ${total} bytes would be compressed`);
    return 0;
  }
  const r = await compress(items);
  out(`${items.length} file(s) compressed: ${r.before} → ${r.after} bytes`);
  return 0;
}

export function indexCommand(o: { root: string; name?: string }): number {
  const root = storeRoot(o.root);
  const only = nameFlag(o.name);
  for (const name of only ? [only] : storeNames(root)) {
    const n = rewriteIndex(root, name, { rebuild: true });
    out(`${name}: ${n} of ${sessionIds(root, name).length} session(s) indexed`);
  }
  return 0;
}
