/**
 * The defaults of `faultline test`, stated once: its registration shows them in --help, its flag parser
 * falls back to them (for callers that bypass commander), and so does `runTest`. Nothing is imported
 * here, so registering the command loads nothing else.
 */
export const TEST_DEFAULTS = {
  db: 'etcd',
  workload: 'register',
  clusterName: 'faultline-test',
  testCount: 1,
  nemesis: 'none',
  nemesisInterval: '10s',
  timeLimit: '60s',
  /** Client processes: `1n` is one per node (Jepsen's `3n` is three per node). */
  concurrency: '1n',
  rate: 100,
  opTimeout: '5s',
  recovery: '10s',
} as const;
