import type { Remote } from '../../src/core/control/types.ts';
import type { Database } from '../../src/lib/databases/types.ts';

/**
 * What `runTest` needs around an in-memory client: three nodes no command reaches (every exec
 * succeeds with no output) and a database whose lifecycle does nothing.
 */
export const NODES = ['n1', 'n2', 'n3'];
export const nowhereRemote = {
  nodes: NODES.map((name) => ({ name, host: name, port: 22, user: 'root' })),
  node: (name: string) => ({ name, host: name, port: 22, user: 'root' }),
  exec: async () => ({ node: '', command: '', stdout: '', stderr: '', code: 0, durationMs: 0 }),
  download: async () => {},
  upload: async () => {},
  onNodes: async () => [],
  close: async () => {},
} as unknown as Remote;

export const memoryDb = {
  name: 'memory',
  processName: 'memory',
  setWrapper: () => {},
  install: async () => {},
  setup: async () => {},
  awaitReady: async () => {},
  teardown: async () => {},
  start: async () => {},
  kill: async () => {},
  primaries: async () => ['n1'],
  logFiles: () => [],
  wipe: async () => {},
  pidFile: () => '/dev/null',
  clientAddress: () => '',
} as unknown as Database;
