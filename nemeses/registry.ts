import { BUILT_IN, Registry } from '../src/core/util/registry.ts';
import { BUILT_IN_NEMESES } from './builtin.ts';
import { lazyfsDefinition } from './lazyfs-definition.ts';
import { proxyDefinition } from './proxy/definition.ts';
import type { FaultClassDefinition, FaultOpMeaning, NemesisDefinition } from './types.ts';

/**
 * Every nemesis by kind: one registry, with each nemesis's actions, their ops (Jepsen's vocabulary), the
 * plan step schema and the random-schedule classes. Plans, `faultline test --nemesis`, `plan check`,
 * the capability probe and the fault plane all read it; plugins add nemeses with `defineNemesis`.
 */
export const nemeses = new Registry<NemesisDefinition>('nemesis');
for (const d of [...BUILT_IN_NEMESES, lazyfsDefinition, proxyDefinition])
  nemeses.register(d.kind, d, BUILT_IN);

/** Every random-schedule class (`--nemesis partition,kill …`), in registration order. */
export function faultClasses(): FaultClassDefinition[] {
  return nemeses.values().flatMap((d) => d.classes ?? []);
}

/**
 * What a nemesis op means: Jepsen's names first (start-partition/stop-partition, kill/start,
 * pause/resume, bump-clock|strobe-clock/reset-clock, corrupt-file …), then the generic
 * `start-<kind>` / `stop-<kind>` of any registered kind, whose action comes from the op's value.
 */
export function classifyFaultOp(f: string, value?: unknown): FaultOpMeaning | null {
  const wanted = (value as { action?: unknown } | null | undefined)?.action;
  for (const def of nemeses.values()) {
    for (const a of def.actions) {
      const generic = a.startOp === `start-${def.kind}`;
      if (a.startOp === f && !generic) return { cls: a.cls, kind: def.kind, action: a.name, starts: true };
      if (a.stopOp === f && a.stopOp !== `stop-${def.kind}`)
        return { cls: a.cls, kind: def.kind, action: a.name, starts: false };
    }
  }
  const m = /^(start|stop)-([a-z][a-z0-9-]*)$/.exec(f);
  if (!m) return null;
  const kind = m[2] as string;
  if (!nemeses.has(kind)) return null;
  return {
    cls: kind,
    kind,
    action: typeof wanted === 'string' ? wanted : (m[1] as string),
    starts: m[1] === 'start',
  };
}

/** Does a nemesis kind act on the nodes (over SSH)? Unknown kinds do, so a client-only run refuses them. */
export function actsOnNodes(kind: string): boolean {
  return nemeses.get(kind)?.reach !== 'control';
}

/**
 * Why a list of plan steps cannot run client-only (no SSH), naming the first step that acts on the nodes,
 * or null when every step acts in the control process (the proxy).
 */
export function clientOnlyRefusal(
  steps: readonly { kind: string; action?: string; params?: unknown }[],
): string | null {
  const i = steps.findIndex((s) => actsOnNodes(s.kind) || isPeerProxyStep(s));
  if (i < 0) return null;
  const s = steps[i] as { kind: string; action?: string; params?: unknown };
  if (isPeerProxyStep(s))
    return `nemesis step ${i + 1} (kind: proxy, links: peers) needs the database's peer addresses configured on the nodes`;
  return `nemesis step ${i + 1} (kind: ${s.kind}${s.action ? `, action: ${s.action}` : ''}) acts on the nodes`;
}

/**
 * A proxy step on the members' peer links: faultline must configure the database (its members advertise
 * the proxy as each other's address), so it needs SSH and a database that declares its peer address.
 */
export function isPeerProxyStep(step: { kind: string; params?: unknown }): boolean {
  return step.kind === 'proxy' && (step.params as { links?: unknown } | undefined)?.links === 'peers';
}
