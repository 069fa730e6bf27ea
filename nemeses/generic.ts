import { z } from 'zod';
import type { DatabaseCapability } from '../src/core/database/capabilities.ts';
import { generic, params, targets, timing } from './builtin.ts';
import type {
  FaultActionDefinition,
  FaultClassDefinition,
  FaultOp,
  FaultSpec,
  Nemesis,
  NemesisDefinition,
  NemesisStep,
  SpecContext,
} from './types.ts';

/**
 * A nemesis definition from the few things a new nemesis must say (its kind, its actions, the nemesis
 * itself); everything else gets the generic shape: plan steps `{kind, action, targets, params, startS,
 * durationS …}`, ops `start-<kind>` (with the action in the value) and `stop-<kind>`, and specs with the
 * targets resolved through the one selector and the step's params passed through. `defineNemesis` in
 * the public API is built on this.
 */
export interface NemesisSpec {
  kind: string;
  summary?: string;
  /** The nemesis, or a loader for it. */
  nemesis: Nemesis | (() => Promise<Nemesis>);
  /** Action names (generic ops), or full action definitions. */
  actions: readonly (string | (Partial<FaultActionDefinition> & { name: string }))[];
  classes?: readonly FaultClassDefinition[];
  step?: NemesisDefinition['step'];
  stepOps?: NemesisDefinition['stepOps'];
  toSpec?: NemesisDefinition['toSpec'];
  stepDbNeeds?: (step: NemesisStep) => readonly DatabaseCapability[];
  stepNodeNeeds?: NemesisDefinition['stepNodeNeeds'];
}

export function nemesisDefinition(spec: NemesisSpec): NemesisDefinition {
  const { kind } = spec;
  const actions = spec.actions.map((a) =>
    typeof a === 'string' ? generic(kind, a) : ({ ...generic(kind, a.name), ...a } as FaultActionDefinition),
  );
  if (actions.length === 0) throw new Error(`nemesis ${kind}: name at least one action`);
  const names = actions.map((a) => a.name) as [string, ...string[]];
  const load = typeof spec.nemesis === 'function' ? spec.nemesis : async () => spec.nemesis as Nemesis;
  return {
    kind,
    summary: spec.summary ?? `${kind} (${names.join(', ')})`,
    load,
    actions,
    ...(spec.classes && { classes: spec.classes }),
    step:
      spec.step ??
      z.strictObject({
        kind: z.literal(kind),
        action: z.enum(names),
        targets: targets.default('one'),
        params,
        ...timing,
      }),
    stepOps: spec.stepOps ?? ((step) => genericStepOps(actions, step)),
    toSpec: spec.toSpec ?? genericToSpec(kind),
    ...(spec.stepDbNeeds && { stepDbNeeds: spec.stepDbNeeds }),
    ...(spec.stepNodeNeeds && { stepNodeNeeds: spec.stepNodeNeeds }),
  };
}

function genericStepOps(
  actions: readonly FaultActionDefinition[],
  step: NemesisStep,
): { start: FaultOp; stop: FaultOp | null } {
  const action = actions.find((a) => a.name === step.action) ?? (actions[0] as FaultActionDefinition);
  const value = {
    action: action.name,
    targets: step.targets ?? 'one',
    ...(step.params && Object.keys(step.params).length > 0 && { params: step.params }),
  };
  const start = { f: action.startOp, value };
  return { start, stop: action.stopOp === null ? null : { f: action.stopOp, value: { targets: 'all' } } };
}

function genericToSpec(kind: string) {
  return async (action: string, value: Record<string, unknown>, ctx: SpecContext): Promise<FaultSpec> => ({
    kind,
    action,
    targets: await ctx.resolve(value.targets ?? 'one'),
    params: { ...(value.params as Record<string, unknown> | undefined) },
  });
}
