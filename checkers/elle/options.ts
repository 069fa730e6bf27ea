import { z } from 'zod';
import { isKnownAnomaly, isKnownModel } from './lattice.ts';

const modelName = z.string().refine(isKnownModel, { message: 'unknown consistency model' });

export const elleOptionsSchema = z.strictObject({
  workload: z.enum(['list-append', 'rw-register']),
  /** Models the history must satisfy; absent means ["strict-serializable"], [] means none. */
  consistencyModels: z.array(modelName).optional(),
  /** Extra anomaly types to treat as violations (with every anomaly that implies them). */
  anomalies: z
    .array(
      z.string().refine(isKnownAnomaly, {
        error: (iss) => `unknown anomaly type ${JSON.stringify(iss.input)}`,
      }),
    )
    .optional(),
  /** Budget per (strongly connected component, anomaly type), in ms. */
  cycleSearchTimeoutMs: z.number().int().positive().optional(),
  /** Where to write explanations and drawings (overrides the check context's outDir). */
  outDir: z.string().min(1).optional(),
  /** rw-register: assume each key is sequentially consistent (derive version order from process order). */
  sequentialKeys: z.boolean().optional(),
  /** rw-register: assume each key is linearizable (derive version order from realtime order). */
  linearizableKeys: z.boolean().optional(),
  /** rw-register: assume writes follow reads within a transaction. */
  wfrKeys: z.boolean().optional(),
});

export type ElleOptions = z.input<typeof elleOptionsSchema>;

export const DEFAULT_MODELS = ['strict-serializable'];
export const DEFAULT_CYCLE_SEARCH_TIMEOUT_MS = 1000;
