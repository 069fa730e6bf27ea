import type { Decision } from '../verdict/decide.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';
import { expectationCell } from '../verdict/expectation.ts';

/** The evidence cells every report shares: what the oracle consumed, and how each fault proved it landed. */

export function oracleEvidence(ev: ScenarioEvidence | undefined): string {
  if (!ev?.attempted) return 'not run';
  if (ev.oracles.length === 0) return 'no oracle ran';
  return ev.oracles
    .map((o) =>
      o.ran
        ? o.evidence || `${o.checker}: ${o.opsConsumed.toLocaleString('en-US')} ops, ${o.anomalies} anomalies`
        : `${o.checker}: did not run${o.error ? ` (${o.error})` : ''}`,
    )
    .join('; ');
}

export function landingEvidence(ev: ScenarioEvidence | undefined, d: Decision): string {
  if (!ev?.attempted) return `n/a — ${d.verdict}`;
  if (ev.faults.length === 0 && ev.faultsScheduled === 0) return `n/a — no fault (${d.verdict})`;
  if (ev.faults.length === 0) return `${ev.faultsScheduled} scheduled, none recorded`;
  return ev.faults
    .map((f) => {
      const sig = f.signals
        .map(
          (s) =>
            `${s.side} ${s.node} ${s.signal}${s.before !== undefined ? ` ${String(s.before)}→${String(s.during ?? '?')}` : ''}${s.landed ? '' : ' (no effect)'}`,
        )
        .join(', ');
      const what = `${f.kind}${f.topology ? ` ${f.topology}` : f.action ? ` ${f.action}` : ''}`;
      return `${f.id} ${what}: ${f.landed ? 'landed' : 'NOT landed'}${sig ? ` — ${sig}` : ''}${f.substitute ? ` (substitute: ${f.substitute})` : ''}`;
    })
    .join('; ');
}

/** `S5/api` → `S5-api`: a file-name-safe scenario id. */
export function fileId(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]+/g, '-');
}

/** `FAIL-reproducible — expected FAIL-reproducible (met)`: the verdict with the plan's expectation, if any. */
export function verdictCell(d: Decision): string {
  const v = `${d.verdict}${d.release ? ' (release)' : ''}`;
  return d.expectation ? `${v} — expected ${expectationCell(d.expectation)}` : v;
}
