import test from 'ava';
import { missingDbCapabilities } from '../../src/app/run/database-capabilities.ts';
import type { Remote } from '../../src/core/control/types.ts';
import type { Database } from '../../src/lib/databases/types.ts';

const remote = (shared: boolean) =>
  ({
    nodes: ['n1', 'n2', 'n3'].map((name) => ({
      name,
      host: name,
      port: 22,
      user: 'r',
      sharedKernelClock: shared,
    })),
  }) as unknown as Remote;

/** Only the required core: no process control, no leaders, no data dir, no clock wrapper. */
const bare: Database = {
  name: 'bare',
  setup: async () => {},
  teardown: async () => {},
  clientAddress: () => '',
  awaitReady: async () => {},
};

test('faults needing capabilities the database lacks are named, one row per capability', (t) => {
  const missing = missingDbCapabilities(
    bare,
    [
      { kind: 'process', action: 'kill', targets: 'one', startS: 1, durationS: 1 },
      { kind: 'process', action: 'pause', targets: 'one', startS: 5, durationS: 1 },
      { kind: 'partition', topology: 'primaries', startS: 1, durationS: 1 },
      { kind: 'disk', action: 'disk-full', targets: 'one', startS: 1, durationS: 1, params: {} },
      { kind: 'clock', action: 'bump', targets: 'one', deltaMs: 1000, startS: 1, durationS: 1 },
    ],
    remote(true),
  );
  t.deepEqual(
    missing.map((m) => m.name),
    [
      'database capability: process control (pidfile; start, kill)',
      'database capability: primaries (the current leaders)',
      'database capability: data directory',
      'database capability: clock wrapper (start through libfaketime)',
    ],
  );
  t.is(missing[0]?.reason, 'database bare does not declare it; needed by process kill, process pause');
  // A partition of halves needs nothing from the database; a disk fault given its own dir neither;
  // a clock fault on nodes with their own kernel clock uses settime.
  t.deepEqual(
    missingDbCapabilities(
      bare,
      [
        { kind: 'partition', topology: 'halves', startS: 1, durationS: 1 },
        { kind: 'disk', action: 'disk-full', targets: 'one', startS: 1, durationS: 1, params: { dir: '/d' } },
        { kind: 'clock', action: 'bump', targets: 'one', deltaMs: 1000, startS: 1, durationS: 1 },
      ],
      remote(false),
    ),
    [],
  );
});
