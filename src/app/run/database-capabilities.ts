import { dbNeedsOfStep } from '../../../nemeses/builtin.ts';
import { nemeses } from '../../../nemeses/registry.ts';
import type { NemesisStep } from '../../../nemeses/types.ts';
import type { Remote } from '../../core/control/types.ts';
import {
  DATABASE_CAPABILITIES,
  type DatabaseCapability,
  hasCapability,
} from '../../core/database/capabilities.ts';
import type { Database } from '../../lib/databases/types.ts';

/**
 * The database capabilities a scenario's faults need that the database does not declare: process
 * control for kills and pauses, its leaders for `primaries`, its data directory for disk faults, a clock
 * wrapper for clock faults on nodes that share the host's kernel clock. Each missing one makes the
 * scenario INCONCLUSIVE-env with the capability named, before anything runs.
 */
export function missingDbCapabilities(
  db: Database,
  steps: readonly NemesisStep[],
  remote: Remote,
): { name: string; reason: string }[] {
  const needs = new Map<DatabaseCapability, string[]>();
  const need = (cap: DatabaseCapability, why: string) => needs.set(cap, [...(needs.get(cap) ?? []), why]);
  const sharedClock = remote.nodes.some((n) => n.sharedKernelClock === true);
  for (const step of steps) {
    const def = nemeses.get(step.kind);
    const what = `${step.kind}${step.action ? ` ${step.action}` : step.topology ? ` ${step.topology}` : ''}`;
    if (def) for (const cap of dbNeedsOfStep(def, step)) need(cap, what);
    if (step.targets === 'primaries') need('primaries', what);
    if (step.kind === 'clock' && sharedClock)
      need('clock', `${what} on nodes sharing the host's kernel clock`);
  }
  const out: { name: string; reason: string }[] = [];
  for (const [cap, by] of needs) {
    if (hasCapability(db, cap)) continue;
    out.push({
      name: `database capability: ${DATABASE_CAPABILITIES[cap].label}`,
      reason: `database ${db.name} does not declare it; needed by ${[...new Set(by)].join(', ')}`,
    });
  }
  return out;
}
