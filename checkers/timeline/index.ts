import { join } from 'node:path';
import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import { makeOutputDir, writeFileAtomic } from '../../src/core/util/atomic-write.ts';
import { parseOptions, result } from '../catalogue/common.ts';
import type { CheckContext, Checker } from '../types.ts';
import { renderTimeline } from './page.ts';

/**
 * Jepsen's `timeline/html` as a checker: writes `timeline.html` (every op a bar per process, coloured by
 * outcome, with the fault windows) into the output directory. It draws, it does not judge: valid unless
 * there was nothing to draw.
 */
export const timelineOptionsSchema = z.strictObject({
  title: z.string().min(1).optional(),
});
export type TimelineOptions = z.input<typeof timelineOptionsSchema>;

const SCOPE = 'Draws the history; judges nothing.';

export const timelineChecker: Checker<TimelineOptions> = {
  name: 'timeline',
  async check(ops: readonly Operation[], rawOptions: TimelineOptions, ctx?: CheckContext) {
    const o = parseOptions('timeline', timelineOptionsSchema, rawOptions);
    const clients = ops.filter((op) => op.process !== 'nemesis').length;
    const artifacts: string[] = [];
    if (ctx?.outDir && ops.length > 0) {
      makeOutputDir(ctx.outDir);
      const path = join(ctx.outDir, 'timeline.html');
      await writeFileAtomic(
        path,
        renderTimeline(ops, {
          ...(o.title && { title: o.title }),
          ...(ctx.faults && { faults: ctx.faults }),
        }),
      );
      artifacts.push(path);
    }
    return result(
      'timeline',
      clients > 0 ? true : 'unknown',
      `timeline: ${clients.toLocaleString('en-US')} client ops drawn${artifacts.length ? '' : ' (no output directory: nothing written)'}`,
      SCOPE,
      [],
      { opsConsumed: clients },
      { artifacts },
    );
  },
};
