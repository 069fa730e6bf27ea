import type { Anomaly } from '../types.ts';

/** A step of an explained cycle. */
export interface CycleStep {
  rel: 'ww' | 'wr' | 'rw' | 'process' | 'realtime';
  from: number;
  to: number;
  explanation: string;
}

export interface CycleAnomaly extends Anomaly {
  /** Op ids around the cycle, the first repeated at the end. */
  cycle: number[];
  steps: CycleStep[];
  /** The full plain-text explanation (several lines). */
  text: string;
}
