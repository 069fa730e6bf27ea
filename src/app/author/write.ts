import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { makeOutputDir, writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { resolveInside } from '../../core/util/paths.ts';
import { loadPlan } from '../plan/load.ts';
import { AUTO_HEADER, skeletonFor } from './skeleton.ts';

/**
 * `faultline author PLAN`: write each scenario's skeleton to its `Target test file` (relative to
 * `--root`, default the current directory). An existing target is never overwritten silently: with
 * `--overwrite` it is replaced, with `--sibling` the skeleton goes to `<path>.new.<ext>`, otherwise it
 * is skipped (or, on a terminal, the operator is asked). Nothing is committed or staged.
 */
export interface AuthorOptions {
  plan: string;
  scenarios: string[];
  root: string;
  mode: 'ask' | 'overwrite' | 'sibling' | 'skip';
  ask?: (question: string) => Promise<string>;
}

export interface AuthorOutcome {
  scenario: string;
  target: string | null;
  action: 'written' | 'overwritten' | 'sibling' | 'skipped' | 'refused';
  path: string | null;
  reason: string;
}

export function siblingPath(path: string): string {
  const ext = extname(path);
  return ext ? `${path.slice(0, -ext.length)}.new${ext}` : `${path}.new`;
}

/** The scenario's `Target test file`, resolved under `--root` (null when the plan names none). */
function targetOf(o: AuthorOptions, scenario: string, given: string | null | undefined): string | null {
  const rel = given?.trim().replace(/^`|`$/g, '') ?? '';
  if (!rel) return null;
  try {
    return resolveInside(o.root, rel, { what: 'Target test file', local: true });
  } catch (err) {
    throw new UserError(`${o.plan}: ${scenario}: ${errorMessage(err)}`);
  }
}

export async function author(o: AuthorOptions): Promise<AuthorOutcome[]> {
  const plan = await loadPlan(o.plan);
  const planSha = createHash('sha256').update(readFileSync(o.plan)).digest('hex');
  const top = plan.resolved.filter((r) => r.parentId === null);
  for (const w of o.scenarios)
    if (!top.some((s) => s.id.toLowerCase() === w.toLowerCase()))
      throw new UserError(
        `--scenario ${w}: no such scenario in ${o.plan} (have ${top.map((s) => s.id).join(', ')})`,
      );
  const chosen =
    o.scenarios.length === 0
      ? top
      : top.filter((s) => o.scenarios.some((w) => w.toLowerCase() === s.id.toLowerCase()));
  // Every target is confined before anything is written: one hostile target refuses the whole run.
  const targets = new Map(chosen.map((sc) => [sc.id, targetOf(o, sc.id, sc.scenario.targetTestFile)]));
  const out: AuthorOutcome[] = [];
  for (const sc of chosen) {
    const target = targets.get(sc.id) ?? null;
    if (!target) {
      out.push({
        scenario: sc.id,
        target: null,
        action: 'skipped',
        path: null,
        reason: 'no Target test file: an ephemeral harness would be needed (flagged)',
      });
      continue;
    }
    const sk = skeletonFor(
      plan,
      { ...sc, scenario: { ...sc.scenario, targetTestFile: target } },
      { planPath: o.plan, planSha },
    );
    if (!sk.ok) {
      out.push({ scenario: sc.id, target, action: 'refused', path: null, reason: sk.reason });
      continue;
    }
    let mode = o.mode;
    if (existsSync(target) && mode === 'ask') {
      const a = o.ask
        ? (await o.ask(`${target} exists: overwrite / skip / sibling? [o/s/b] `)).trim().toLowerCase()
        : 's';
      mode = a.startsWith('o') ? 'overwrite' : a.startsWith('b') || a.startsWith('si') ? 'sibling' : 'skip';
    }
    let path = target;
    let action: AuthorOutcome['action'] = 'written';
    if (existsSync(target)) {
      if (mode === 'overwrite') action = 'overwritten';
      else if (mode === 'sibling') {
        path = siblingPath(target);
        action = 'sibling';
      } else {
        out.push({
          scenario: sc.id,
          target,
          action: 'skipped',
          path: null,
          reason: 'target exists (use --overwrite or --sibling)',
        });
        continue;
      }
    }
    if (!sk.text.includes(AUTO_HEADER)) {
      out.push({
        scenario: sc.id,
        target,
        action: 'refused',
        path: null,
        reason: 'refused: no AUTO-GENERATED header',
      });
      continue;
    }
    makeOutputDir(dirname(path));
    writeFileAtomicSync(path, sk.text);
    out.push({
      scenario: sc.id,
      target,
      action,
      path,
      reason: sk.generated
        ? 'runnable faultline scenario module (TypeScript)'
        : `${sk.language} skeleton from the plan`,
    });
  }
  return out;
}
