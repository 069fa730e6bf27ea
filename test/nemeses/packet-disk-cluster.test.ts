import test from 'ava';
import { diskNemesis } from '../../nemeses/disk.ts';
import { ackSinkCommand, packetNemesis } from '../../nemeses/packet.ts';
import { CapabilityMissingError } from '../../nemeses/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'nem-pkt' });
const SINK_PORT = 17011;

// This host's kernel has no sch_netem, no prio and no device-mapper: the tests pin that the nemeses say
// so precisely, and that the documented substitutes (statistic loss, tbf rate) really land.

fx.test.serial(
  'packet capabilities: netem-only behaviours missing with the reason; loss and rate substituted',
  async (t) => {
    const remote = await fx.remote();
    const caps = await packetNemesis.capabilities(remote, 'n1');
    for (const b of ['delay', 'duplicate', 'reorder', 'corrupt']) {
      const c = caps.find((x) => x.name === `packet-${b}`);
      t.false(c?.available, b);
      t.regex(
        c?.reason ?? '',
        new RegExp(`netem qdisc \\(sch_netem\\) is missing on n1.*${b} cannot be emulated`),
      );
    }
    t.regex(caps.find((c) => c.name === 'packet-loss')?.substitute ?? '', /statistic/);
    t.is(caps.find((c) => c.name === 'packet-rate')?.substitute, 'tbf');
  },
);

fx.test.serial(
  'packet delay is refused with CapabilityMissingError before anything is touched',
  async (t) => {
    const remote = await fx.remote();
    const spec = {
      kind: 'packet',
      action: 'start',
      targets: ['n2'],
      params: { behaviors: { delay: { timeMs: 50 } } },
    };
    const err = await t.throwsAsync(packetNemesis.inject(remote, spec, 'pk0'));
    t.true(err instanceof CapabilityMissingError);
    t.regex(err?.message ?? '', /^n\d: netem delay unavailable: the netem qdisc \(sch_netem\) is missing/);
    for (const n of ['n1', 'n2', 'n3']) t.true((await packetNemesis.verifyClean(remote, n)).clean);
  },
);

fx.test.serial(
  'packet loss via iptables statistic: DROP counter > 0 and victim connects time out; marked substitution',
  async (t) => {
    const remote = await fx.remote();
    const spec = {
      kind: 'packet',
      action: 'start',
      targets: ['n2'],
      params: { behaviors: { loss: { percent: 50 } } },
    };
    const rec = await packetNemesis.inject(remote, spec, 'pk1');
    const ev = await packetNemesis.evidence(remote, rec);
    t.true(ev.landed, ev.reason);
    t.regex(ev.reason ?? '', /substitution: loss: iptables statistic/);
    t.true((ev.signals.find((s) => s.side === 'injector')?.during as number) > 0);
    await packetNemesis.heal(remote, rec);
    const { partitionNemesis } = await import('../../nemeses/partition.ts');
    for (const n of ['n1', 'n2', 'n3'])
      t.deepEqual((await partitionNemesis.verifyClean(remote, n)).found, []);
  },
);

const rateCases = [
  // The plan's sink on the peer.
  { rate: '1mbit', sinkPort: SINK_PORT },
  // No sink given: the probe starts one with the peer's Node.js (through bash: /dev/tcp is not dash's),
  // at a rate as low as plans/postgres-isolation.md S7 uses.
  { rate: '64kbit' },
];

fx.test.serial(
  'packet rate via tbf: tc counters move and a 1 s push to a sink takes ≥ 0.5 s; heal removes the qdisc',
  async (t) => {
    const remote = await fx.remote();
    await remote.exec('n2', ackSinkCommand(SINK_PORT, process.execPath));
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, c] of rateCases.entries()) await rateLands(t, remote, c, `pk-rate${i}`);
  },
);

/** The remote as it is, but with the commands `rewrite` picks answered otherwise. */
function rewritten(
  remote: Awaited<ReturnType<typeof fx.remote>>,
  rewrite: (command: string) => string | Error,
): typeof remote {
  return new Proxy(remote, {
    get(target, prop) {
      if (prop === 'exec')
        return async (node: string, command: string, opts?: object) => {
          const c = rewrite(command);
          if (c instanceof Error) throw c;
          return target.exec(node, c, opts);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

fx.test.serial(
  'packet rate with no sinkPort and no ack sink: not proven, naming why (no Node.js; the sink not started)',
  async (t) => {
    const remote = await fx.remote();
    const cases = [
      {
        // The peer's PATH shows no Node.js: a capability the node lacks.
        remote: rewritten(remote, (c) => (c.startsWith('command -v node') ? 'true' : c)),
        reason: /capability missing: no Node\.js on n\d's PATH to start an ack sink with/,
      },
      {
        // Starting the sink fails on the way (a dropped connection, say): the error is the reason.
        remote: rewritten(remote, (c) => (c.startsWith('f=$(mktemp)') ? new Error('channel closed') : c)),
        reason: /the ack sink on n\d could not be started: channel closed/,
      },
    ];
    for (const [i, c] of cases.entries()) {
      const spec = {
        kind: 'packet',
        action: 'start',
        targets: ['n2'],
        params: { behaviors: { rate: '64kbit' } },
      };
      const rec = await packetNemesis.inject(c.remote, spec, `pk-nosink${i}`);
      try {
        const ev = await packetNemesis.evidence(c.remote, rec);
        t.false(ev.landed, ev.reason);
        t.regex(ev.reason ?? '', c.reason);
      } finally {
        await packetNemesis.heal(remote, rec);
      }
      t.deepEqual((await packetNemesis.verifyClean(remote, 'n2')).found, []);
    }
  },
);

async function rateLands(
  t: import('ava').ExecutionContext,
  remote: Awaited<ReturnType<typeof fx.remote>>,
  c: { rate: string; sinkPort?: number },
  id: string,
): Promise<void> {
  {
    const spec = {
      kind: 'packet',
      action: 'start',
      targets: ['n2'],
      params: { behaviors: { rate: c.rate }, ...(c.sinkPort !== undefined && { sinkPort: c.sinkPort }) },
    };
    const rec = await packetNemesis.inject(remote, spec, id);
    const ev = await packetNemesis.evidence(remote, rec);
    t.true(ev.landed, `${c.rate}: ${ev.reason}`);
    t.regex(ev.reason ?? '', /substitution: rate: tbf/);
    const victim = ev.signals.find((s) => s.side === 'victim');
    t.true((victim?.during as number) >= 500, `${c.rate}: ${victim?.signal} ${String(victim?.during)}`);
    await packetNemesis.heal(remote, rec);
    for (const n of ['n1', 'n2', 'n3']) {
      const clean = await packetNemesis.verifyClean(remote, n);
      t.deepEqual(clean.found, [], n);
    }
  }
}

fx.test.serial(
  'disk-full: free space drops to the reserve, a write gets ENOSPC; heal frees it',
  async (t) => {
    const remote = await fx.remote();
    const dir = '/tmp/nem-disk-n1';
    await remote.exec('n1', `mkdir -p ${dir} && mount -t tmpfs -o size=16m tmpfs ${dir}`);
    t.teardown(() =>
      remote.exec('n1', `umount ${dir}; rmdir ${dir}`, { check: false }).then(() => undefined),
    );
    const spec = { kind: 'disk', action: 'disk-full', targets: ['n1'], params: { dir, leaveBytes: 65536 } };
    const rec = await diskNemesis.inject(remote, spec, 'd1');
    const ev = await diskNemesis.evidence(remote, rec);
    t.true(ev.landed, ev.reason);
    const free = ev.signals.find((s) => s.signal.startsWith('free bytes'));
    t.true((free?.before as number) > 15_000_000);
    t.true((free?.during as number) <= 65536 + 4096);
    t.regex(String(ev.signals.find((s) => s.side === 'victim')?.during), /No space left on device/);
    // Abandoned: the sweep finds and removes the junk file.
    const sweep = await diskNemesis.verifyClean(remote, 'n1');
    t.true(
      sweep.fixed.some((f) => f.includes('.faultline-junk-d1')),
      sweep.fixed.join('; '),
    );
    const after = await diskNemesis.evidenceAfterHeal?.(remote, rec);
    t.true(after?.landed, after?.reason);
  },
);

fx.test.serial(
  'corruption: bitflip, zero and truncate change the checksum; a backed-up file is restored by heal',
  async (t) => {
    const remote = await fx.remote();
    const dir = '/tmp/nem-corrupt-n3';
    await remote.exec(
      'n3',
      `mkdir -p ${dir} && head -c 100000 /dev/urandom > ${dir}/a.db && head -c 5000 /dev/urandom > ${dir}/b.db`,
    );
    t.teardown(() => remote.exec('n3', `rm -rf ${dir}`, { check: false }).then(() => undefined));
    for (const [i, mode] of ['bitflip', 'zero', 'truncate'].entries()) {
      const spec = {
        kind: 'disk',
        action: 'corrupt',
        targets: ['n3'],
        params: { dir, mode, seed: 7 + i, bytes: 128, backup: true },
      };
      const rec = await diskNemesis.inject(remote, spec, `cr${i}`);
      const ev = await diskNemesis.evidence(remote, rec);
      t.true(ev.landed, `${mode}: ${ev.reason}`);
      const s = ev.signals[0];
      t.notDeepEqual(s?.before, s?.during);
      if (mode === 'truncate')
        t.is(
          (s?.during as { size: number } | undefined)?.size,
          ((s?.before as { size: number } | undefined)?.size ?? 0) - 128,
        );
      await diskNemesis.heal(remote, rec);
      const after = await diskNemesis.evidenceAfterHeal?.(remote, rec);
      t.true(after?.landed, `${mode} restore: ${after?.reason}`);
    }
  },
);

fx.test.serial('dm-flakey reports device-mapper missing on this kernel', async (t) => {
  const remote = await fx.remote();
  const caps = await diskNemesis.capabilities(remote, 'n2');
  const dm = caps.find((c) => c.name === 'dm-flakey');
  t.false(dm?.available);
  t.regex(
    dm?.reason ?? '',
    /device-mapper is not available in this kernel \(no device-mapper in \/proc\/misc/,
  );
  const err = await t.throwsAsync(
    diskNemesis.inject(
      remote,
      { kind: 'disk', action: 'flakey', targets: ['n2'], params: { device: 'data' } },
      'dm1',
    ),
  );
  t.true(err instanceof CapabilityMissingError);
  t.regex(err?.message ?? '', /^n2: dm-flakey unavailable: device-mapper is not available/);
});
