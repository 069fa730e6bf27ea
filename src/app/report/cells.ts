import { describeSubstitution } from '../../../nemeses/substitutes.ts';
import { groupThousands } from '../../core/util/format.ts';
import { expectationCell } from '../plan/expectation.ts';
import type { Decision } from '../verdict/decide.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';
import { md } from './markdown-format.ts';

/** The evidence cells every report shares: what the oracle consumed, and how each fault proved it landed. */

export function oracleEvidence(ev: ScenarioEvidence | undefined): string {
  if (!ev?.attempted) return 'not run';
  if (ev.oracles.length === 0) return 'no oracle ran';
  return ev.oracles
    .map((o) =>
      o.ran
        ? o.evidence || `${o.checker}: ${groupThousands(o.opsConsumed)} ops, ${o.anomalies} anomalies`
        : `${o.checker}: did not run${o.error ? ` (${o.error})` : ''}`,
    )
    .join('; ');
}

export function landingEvidence(ev: ScenarioEvidence | undefined, d: Decision): string {
  if (!ev?.attempted) return `n/a — ${d.verdict}`;
  if (ev.faults.length === 0 && ev.faultsScheduled === 0) return `n/a — no fault (${d.verdict})`;
  if (ev.faults.length === 0) return `${ev.faultsScheduled} scheduled, none recorded`;
  return `${primaryFaults(ev)}${seedsLanded(ev)}`;
}

/**
 * With several seeds the windows shown are the primary run's; every seed's landed count follows, so a
 * seed whose fault did not land is visible beside them: ` — per seed: 7 3/3 landed, 8 2/3 landed`.
 */
function seedsLanded(ev: ScenarioEvidence): string {
  if (ev.perSeed.length <= 1) return '';
  const per = ev.perSeed.map(
    (m) =>
      `${m.seed} ${m.faults.filter((f) => f.landed).length}/${Math.max(ev.faultsScheduled, m.faults.length)} landed`,
  );
  return ` — per seed: ${per.join(', ')}`;
}

function primaryFaults(ev: ScenarioEvidence): string {
  return ev.faults
    .map((f) => {
      const sig = f.signals
        .map((s) => `${s.side} ${s.node} ${s.signal}${signalChange(s)}${s.landed ? '' : ' (no effect)'}`)
        .join(', ');
      const what = `${f.kind}${f.topology ? ` ${f.topology}` : f.action ? ` ${f.action}` : ''}${f.what ? ` (${f.what})` : ''}`;
      const after = !f.healed
        ? '; not healed'
        : f.afterHeal === null
          ? ''
          : f.afterHeal.landed
            ? '; after heal: back to normal'
            : `; after heal: NOT back (${f.afterHeal.reason ?? 'no reason given'})`;
      return `${f.id} ${what}: ${f.landed ? 'landed' : 'NOT landed'}${sig ? ` — ${sig}` : ''}${f.substitute.map((x) => ` (substitute: ${describeSubstitution(x)})`).join('')}${after}`;
    })
    .join('; ');
}

/** A signal's readings before → during → after heal (the phases it has), ` 0→19→0`; '' when none. */
export function signalChange(s: { before?: unknown; during?: unknown; after?: unknown }): string {
  const show = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  const phases = [s.before, s.during, s.after];
  if (phases.every((v) => v === undefined)) return '';
  return ` ${phases.map((v) => (v === undefined ? '?' : show(v))).join('→')}`;
}

/** `S5/api` → `S5-api`: a file-name-safe scenario id. */
export function fileId(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]+/g, '-');
}

/**
 * A row's verdict with the plan's expectation, if any (`FAIL-reproducible — expected FAIL-reproducible
 * (met)`), and for a FAIL its headline.
 */
export function verdictCell(d: Decision): string {
  const v = `${d.verdict}${d.release ? ' (release)' : ''}`;
  const withExpected = d.expectation ? `${v} — expected ${expectationCell(d)}` : v;
  return d.verdict.startsWith('FAIL-') && d.reasons[0]
    ? `${withExpected}: ${md(d.reasons[0])}`
    : withExpected;
}

/**
 * Where a FAIL is drawn: the failing op on its key's page and on the run's timeline, as paths relative
 * to the session dir with `#op=N` (the pages open scrolled to that op). Null when nothing was drawn.
 */
export function anomalyLinks(
  ev: ScenarioEvidence | undefined,
): { label: string; path: string; op: number; key: string | null; timeline: string | null } | null {
  if (!ev?.runDir) return null;
  const o = ev.oracles.find((x) => x.valid === false && x.focus !== null);
  if (!o?.focus) return null;
  const { op, key, page, related } = o.focus;
  const timeline = ev.artifacts.find((a) => /(^|\/)timeline\.html$/.test(a.path));
  // `&ctx=` keeps the ops the explanation names in view with the failing op.
  const at = `#op=${op}${related.length ? `&ctx=${related.join(',')}` : ''}`;
  return {
    label: `${o.checker}: ${key === null ? '' : `key ${key}, `}op ${op}`,
    path: page ? `${ev.runDir}/${page}${at}` : '',
    op,
    key,
    timeline: timeline ? `${timeline.path}${at}` : null,
  };
}
