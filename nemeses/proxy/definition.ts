import { z } from 'zod';
import { generic, targets, timing } from '../builtin.ts';
import { parseParams } from '../params.ts';
import type { FaultClassDefinition, FaultOp, FaultSpec, NemesisDefinition } from '../types.ts';
import { PROXY_ACTIONS } from './hub.ts';
import { proxyParams } from './proxy-params.ts';

/**
 * The proxy nemesis as the registry knows it (kind `proxy`): every action is a window opened by
 * `start-proxy` and closed by `stop-proxy`, on the links from the clients to the target nodes (targets as
 * for partitions: one, minority, majority, all, primaries or node names). `--nemesis proxy-*` schedules
 * every action at random with its default params. Needs nothing on the nodes; needs a client that lets
 * faultline choose the address it connects to (plan check refuses it otherwise).
 */

const op = (f: string, value: Record<string, unknown>): FaultOp => ({ f, value });

const defaultsOf = (action: (typeof PROXY_ACTIONS)[number]) => proxyParams[action].parse(undefined);

const classes: FaultClassDefinition[] = PROXY_ACTIONS.map((action) => ({
  name: `proxy-${action}`,
  kind: 'proxy',
  defaultTargets: ['one', 'minority', 'all'],
  inAll: false,
  start: (choice) => op('start-proxy', { action, targets: choice, params: defaultsOf(action) }),
  stop: op('stop-proxy', { targets: 'all' }),
}));

export const proxyDefinition: NemesisDefinition = {
  kind: 'proxy',
  reach: 'control',
  summary:
    'a TCP proxy in the control process on the clients’ path: latency, bandwidth, blackhole, reset, half-open, slice, timeout, partition',
  load: async () => (await import('./nemesis.ts')).proxyNemesis,
  actions: PROXY_ACTIONS.map((a) => generic('proxy', a)),
  classes,
  step: z
    .strictObject({
      kind: z.literal('proxy'),
      action: z.enum(PROXY_ACTIONS),
      /** The nodes whose client links the fault acts on. */
      targets: targets.default('one'),
      /** latency {delay, jitter}; bandwidth {rate}; half-open {direction}; slice {sliceBytes, sliceDelay}; timeout {after}. */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => ({ ...step, params: parseParams(proxyParams[step.action], step.params, ctx) })),
  stepOps(step) {
    return {
      start: op('start-proxy', { action: step.action, targets: step.targets, params: step.params ?? {} }),
      stop: op('stop-proxy', { targets: 'all' }),
    };
  },
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const nodes = await ctx.resolve(value.targets ?? 'one');
    const schema = proxyParams[action as (typeof PROXY_ACTIONS)[number]];
    if (!schema) throw new Error(`unknown proxy action ${action}`);
    return { kind: 'proxy', action, targets: nodes, params: { ...schema.parse(value.params ?? undefined) } };
  },
};
