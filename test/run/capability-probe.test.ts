import test from 'ava';
import { loadPlan } from '../../src/app/plan/load.ts';
import {
  binaryProbeScript,
  mayAskVersion,
  missingFor,
  type Need,
  needsOf,
  type ProbeAnswer,
  probeKey,
  probeNeeds,
  reconcile,
} from '../../src/app/run/capability-probe.ts';
import type { ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';

const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;

test('needs: the §6b table plus what the scenarios’ nemeses need, for the selected scenarios only', async (t) => {
  const plan = await loadPlan(planPath);
  const all = needsOf(plan, ['S1', 'S2', 'S3']);
  t.deepEqual(all.map((n) => n.name).sort(), ['etcd', 'iptables', 'libfaketime']);
  const ipt = all.find((n) => n.name === 'iptables');
  t.deepEqual(ipt?.usedBy, ['S1', 'S3']);
  const onlyS2 = needsOf(plan, ['S2']);
  t.deepEqual(onlyS2.map((n) => n.name).sort(), ['etcd', 'libfaketime']);
});

test('packet steps need what their behaviour needs: netem, or only the substitute (iptables, tc tbf)', async (t) => {
  // As plans/postgres-isolation.md S7 does: the primary's links shaped with packet `rate`.
  const rate = { kind: 'packet', behaviour: 'rate', targets: 'primaries', startS: 3, durationS: 14 };
  const plan = { environment: [], resolved: [{ id: 'S7', parentId: null, binding: { nemesis: [rate] } }] };
  const s7 = needsOf(plan as never, ['S7']);
  // tc with tbf, not netem.
  t.true(s7.some((n) => n.name === 'tc (tbf, htb)' && n.usedBy.includes('S7')));
  t.false(s7.some((n) => probeKey(n.name) === 'doctor:netem'));
  t.is(probeKey('tc (tbf, htb)'), 'bin:tc');
  const { nemeses } = await import('../../nemeses/registry.ts');
  const needs = (behaviour: string) =>
    nemeses
      .require('packet', 'nemesis')
      .stepNodeNeeds?.({ kind: 'packet', behaviour, startS: 0, durationS: 1 } as never)
      .map((n) => probeKey(n.name));
  t.deepEqual(needs('loss'), ['doctor:iptables']);
  for (const b of ['delay', 'corrupt', 'duplicate', 'reorder']) t.deepEqual(needs(b), ['doctor:netem'], b);
});

test('probe keys: doctor items, SUT binaries, and any other tool by its first word', (t) => {
  t.is(probeKey('iptables'), 'doctor:iptables');
  t.is(probeKey('libfaketime'), 'doctor:libfaketime');
  t.is(probeKey('tc/netem'), 'doctor:netem');
  t.is(probeKey('etcd'), 'bin:etcd');
  t.is(probeKey('pg_ctlcluster (postgresql-15)'), 'bin:pg_ctlcluster', 'binaries may carry underscores');
  t.is(probeKey('Redis 7'), 'bin:redis-server');
  t.is(probeKey('toxiproxy-server 2.5'), 'bin:toxiproxy-server');
});

test('reconcile: skip wins, assume settles only an undecided probe, missing names its install command', async (t) => {
  const plan = await loadPlan(planPath);
  const needs = needsOf(plan, ['S1', 'S2', 'S3']);
  const probed = new Map<string, ProbeAnswer>([
    ['bin:etcd', { present: true, version: 'etcd Version: 3.4.23', source: 'command -v etcd on 3 node(s)' }],
    [
      'doctor:iptables',
      {
        present: false,
        version: '—',
        source: 'doctor probe: missing on n1',
        fix: 'apt-get install -y iptables',
      },
    ],
    ['doctor:libfaketime', { present: null, version: '—', source: 'doctor probe: undetermined on n1' }],
  ]);
  const r = reconcile(
    needs,
    probed,
    { skip: new Set(), assume: new Set(['libfaketime', 'iptables']) },
    'inconclusive',
  );
  const row = (name: string) => r.find((x) => x.need.name === name);
  t.true(row('etcd')?.present);
  t.false(row('iptables')?.present, 'the probe overrides an assumption');
  t.is(row('iptables')?.install, 'apt-get install -y iptables');
  t.regex(row('iptables')?.row.source ?? '', /install: apt-get install -y iptables/);
  t.true(row('libfaketime')?.present);
  t.regex(row('libfaketime')?.row.source ?? '', /assumed by the operator/);
  t.deepEqual(
    missingFor('S1', r).map((m) => m.name),
    ['iptables'],
  );
  t.deepEqual(missingFor('S2', r), []);

  const skipped = reconcile(needs, probed, { skip: new Set(['etcd']), assume: new Set() }, 'inconclusive');
  t.false(skipped.find((x) => x.need.name === 'etcd')?.present);
  t.deepEqual(
    missingFor('S2', skipped)
      .map((m) => m.name)
      .sort(),
    ['etcd', 'libfaketime'],
  );
});

/** A tc/netem need asking the given behaviours, on nodes with iptables but no netem. */
function netemMissing(asks: string[], origin: '§6b' | 'nemesis' = 'nemesis') {
  const need = {
    name: 'tc/netem',
    versionFloor: '',
    usedBy: ['S1'],
    installHint: '',
    origin,
    broughtUpBySut: false,
    asks,
  };
  const probed = new Map<string, ProbeAnswer>([
    ['doctor:netem', { present: false, version: '—', source: 'doctor probe: missing on n1' }],
    ['doctor:iptables', { present: true, version: 'nft', source: 'doctor probe' }],
  ]);
  return { need, probed };
}

test('a documented substitute is recorded, not silent', (t) => {
  const { need, probed } = netemMissing(['packet loss']);
  const sub = reconcile([need], probed, { skip: new Set(), assume: new Set() }, 'substitute')[0];
  t.true(sub?.present);
  t.regex(sub?.substitute ?? '', /iptables statistic/);
  t.regex(sub?.row.source ?? '', /^substitute: /);
  const none = reconcile([need], probed, { skip: new Set(), assume: new Set() }, 'inconclusive')[0];
  t.false(none?.present);
});

test('a substitute only for what it reproduces: a netem delay is never substituted by loss', (t) => {
  const { need, probed } = netemMissing(['packet delay'], '§6b');
  const r = reconcile([need], probed, { skip: new Set(), assume: new Set() }, 'substitute')[0];
  t.false(r?.present);
  t.is(r?.substitute, null);
  t.regex(r?.row.source ?? '', /no substitute reproduces packet delay/);
  t.deepEqual(
    missingFor('S1', r ? [r] : []).map((m) => m.name),
    ['tc/netem'],
  );
  // Loss and delay asked together: the delay decides, nothing is substituted.
  const both = reconcile(
    [{ ...need, asks: ['packet loss', 'packet delay'] }],
    probed,
    { skip: new Set(), assume: new Set() },
    'substitute',
  )[0];
  t.false(both?.present);
});

test('the binary probe kills a binary that starts instead of answering --version, and what it started', async (t) => {
  const { mkdtempSync, writeFileSync, readFileSync, chmodSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { execa } = await import('execa');
  const dir = mkdtempSync(join(tmpdir(), 'faultline-probe-'));
  // Like Debian's rabbitmq-server: no --version, it starts a server (a child that would run for a minute).
  const daemon = join(dir, 'fake-daemon');
  writeFileSync(daemon, `#!/bin/sh\nsleep 60 &\necho $! > ${join(dir, 'child.pid')}\nwait\n`);
  chmodSync(daemon, 0o755);
  const r = await execa('sh', ['-c', binaryProbeScript('fake-daemon', true)], {
    env: { PATH: `${dir}:${process.env.PATH}` },
    timeout: 30_000,
  });
  t.regex(r.stdout, new RegExp(`path=${daemon}`));
  t.regex(r.stdout, /^version=$/m, 'no version line from a binary that never answered');
  const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
  // Killed: gone, or a zombie its new parent has not reaped yet.
  let state = 'gone';
  try {
    state = readFileSync(`/proc/${child}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .charAt(0);
  } catch {}
  t.true(state === 'gone' || state === 'Z', `the server it started was killed too (state ${state})`);
  // A binary that answers keeps its version line.
  const answers = join(dir, 'answers');
  writeFileSync(answers, '#!/bin/sh\necho "answers 1.2.3"\n');
  chmodSync(answers, 0o755);
  const ok = await execa('sh', ['-c', binaryProbeScript('answers', true)], {
    env: { PATH: `${dir}:${process.env.PATH}` },
  });
  t.regex(ok.stdout, /^version=answers 1\.2\.3$/m);
});

/** Needs as the probe gets them: `origin` says who named the binary (a plan's §6b row, or a nemesis). */
function needOf(name: string, origin: Need['origin']): Need {
  return { name, versionFloor: '', usedBy: ['S1'], installHint: '', origin, broughtUpBySut: false, asks: [] };
}

/** A Remote whose nodes are this host: each command runs in `sh` with `path` first on PATH. */
function shellRemote(names: string[], path: string): Remote {
  const nodes: NodeSpec[] = names.map((name) => ({ name, host: '127.0.0.1', port: 1, user: 'root' }));
  return {
    nodes,
    node: (name) => nodes.find((n) => n.name === name) as NodeSpec,
    async exec(node, command): Promise<ExecResult> {
      const { execa } = await import('execa');
      const r = await execa('sh', ['-c', command], {
        env: { PATH: `${path}:${process.env.PATH}` },
        reject: false,
      });
      return { node, command, stdout: r.stdout, stderr: r.stderr, code: r.exitCode ?? 1, durationMs: 1 };
    },
    upload: async () => undefined,
    download: async () => undefined,
    onNodes: async (ns, fn) =>
      Promise.all(
        ns.map(async (node) => {
          try {
            return { node, ok: true, value: await fn(node) };
          } catch (error) {
            return { node, ok: false, error: error as Error };
          }
        }),
      ),
    close: async () => undefined,
  };
}

test('a binary only the plan names is looked up, not run, unless the operator trusts the plan’s commands', async (t) => {
  const { mkdtempSync, writeFileSync, existsSync, chmodSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'faultline-probe-'));
  const ran = join(dir, 'ran');
  // Whatever a stranger's plan names runs as written if it runs at all: this one leaves a mark.
  const planned = join(dir, 'planned-tool');
  writeFileSync(planned, `#!/bin/sh\ntouch ${ran}\necho "planned-tool 9.9"\n`);
  chmodSync(planned, 0o755);
  const remote = shellRemote(['n1', 'n2'], dir);
  const needs = [needOf('planned-tool', '§6b')];

  const looked = (await probeNeeds(remote, needs)).get('bin:planned-tool');
  t.false(existsSync(ran), 'not run without --trust-plan-commands');
  t.true(looked?.present, 'found by command -v on every node');
  t.is(looked?.version, 'not asked');
  t.regex(
    looked?.source ?? '',
    /command -v planned-tool on 2 node\(s\); its --version not run: .*--trust-plan-commands/,
  );

  const asked = (await probeNeeds(remote, needs, { trustPlanCommands: true })).get('bin:planned-tool');
  t.true(existsSync(ran), 'run with --trust-plan-commands');
  t.is(asked?.version, 'planned-tool 9.9');
  t.is(asked?.source, 'command -v planned-tool on 2 node(s)');

  // Missing is still missing when nothing is run.
  const absent = (await probeNeeds(remote, [needOf('no-such-tool-here', '§6b')])).get(
    'bin:no-such-tool-here',
  );
  t.false(absent?.present);
  t.is(absent?.version, '—', 'nothing found, nothing to ask');
  rmSync(dir, { recursive: true, force: true });
});

test('binaries faultline’s own code names are asked for their version; the plan’s only with trust', (t) => {
  const plan = [needOf('mydb server', '§6b'), needOf('tc (tbf, htb)', 'nemesis'), needOf('etcd', '§6b')];
  t.false(mayAskVersion('bin:mydb', plan, false));
  t.true(mayAskVersion('bin:mydb', plan, true));
  // A nemesis (registry code) names tc; the built-in etcd database names its own binary.
  t.true(mayAskVersion('bin:tc', plan, false));
  t.true(mayAskVersion('bin:etcd', plan, false));
  t.true(mayAskVersion('bin:redis-server', [], false));
  // The same word in a plan row does not borrow a nemesis's trust for another binary.
  t.false(mayAskVersion('bin:tcpdump', [...plan, needOf('tcpdump', '§6b')], false));
  // A §6b row for a tool a scenario's nemesis also needs (merged into the row): its version is asked.
  const merged = needsOf(
    {
      environment: [
        { requirement: 'tc', versionFloor: '', usedBy: ['S7'], installHint: '', broughtUpBySut: false },
      ],
      resolved: [
        {
          id: 'S7',
          parentId: null,
          binding: {
            nemesis: [{ kind: 'packet', behaviour: 'rate', targets: 'primaries', startS: 3, durationS: 14 }],
          },
        },
      ],
    } as never,
    ['S7'],
  );
  t.deepEqual(
    merged.map((n) => [n.name, n.origin]),
    [['tc', '§6b']],
    'one need, from the row',
  );
  t.true(mayAskVersion('bin:tc', merged, false));
  t.false(mayAskVersion('bin:tc', [needOf('tc', '§6b')], false), 'the row alone is the plan’s word');
  // The script without the version call runs only the shell's lookup.
  t.notRegex(binaryProbeScript('mydb', false), /--version/);
  t.regex(binaryProbeScript('mydb', true), /--version/);
});
