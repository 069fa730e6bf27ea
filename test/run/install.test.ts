import test from 'ava';
import type { ReconciledNeed } from '../../src/app/run/capability-probe.ts';
import { installMissing } from '../../src/app/run/install.ts';
import type { ExecOptions, ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';

const OS_RELEASE: Record<string, string> = {
  n1: 'ID=debian\nVERSION_ID="12"\n',
  n2: 'ID=ubuntu\nID_LIKE=debian\n',
  n3: 'ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.3"\n',
};

/**
 * A Remote that records every install command instead of running it (no package is really installed):
 * it answers /etc/os-release per node, reports every asked-for package missing until its node ran an
 * install, and fails n2's libfaketime install.
 */
function recordingRemote(names: string[]) {
  const calls: { node: string; command: string; opts: ExecOptions | undefined }[] = [];
  const nodes: NodeSpec[] = names.map((name) => ({ name, host: '127.0.0.1', port: 1, user: 'root' }));
  const installed = new Set<string>();
  const remote: Remote = {
    nodes,
    node: (name) => nodes.find((n) => n.name === name) as NodeSpec,
    async exec(node, command, opts): Promise<ExecResult> {
      const ok = (stdout: string) => ({ node, command, stdout, stderr: '', code: 0, durationMs: 1 });
      if (command.startsWith('cat /etc/os-release')) return ok(OS_RELEASE[node] ?? '');
      if (command.startsWith('PATH=')) {
        const asked = [...command.matchAll(/\|\| echo '?([a-z0-9.+-]+)'?/g)].map((m) => m[1] as string);
        return ok(asked.filter((p) => !installed.has(`${node} ${p}`)).join('\n'));
      }
      calls.push({ node, command, opts });
      if (node === 'n2' && command.includes('faketime')) throw new Error('E: Unable to locate package');
      for (const p of command.split(' ').slice(-2)) installed.add(`${node} ${p}`);
      return ok('');
    },
    upload: async () => undefined,
    download: async () => undefined,
    onNodes: async () => [],
    close: async () => undefined,
  };
  return { remote, calls };
}

const need = (name: string, install: string): ReconciledNeed =>
  ({
    need: { name, usedBy: ['S1'], installHint: install },
    present: false,
    row: { requirement: name, present: 'no', version: '', source: 'probe' },
    install,
    packages: install.split(' ').slice(3),
    substitute: null,
  }) as unknown as ReconciledNeed;

const missing = [
  need('iptables', 'apt-get install -y iptables'),
  need('libfaketime', 'apt-get install -y libfaketime faketime'),
];

test('--install without --yes and without a terminal runs nothing and says why', async (t) => {
  const { remote, calls } = recordingRemote(['n1', 'n2']);
  const lines: string[] = [];
  const out = await installMissing(remote, missing, {
    install: true,
    yes: false,
    print: (l) => lines.push(l),
  });
  t.deepEqual(calls, []);
  t.is(out.declined, 'no confirmation');
  t.true(lines.some((l) => /install with: apt-get install -y iptables/.test(l)));
  t.true(lines.some((l) => /not installing \(no confirmation\)/.test(l)));
});

test('without --install the commands are only shown', async (t) => {
  const { remote, calls } = recordingRemote(['n1']);
  const out = await installMissing(remote, missing, { install: false, yes: true, print: () => undefined });
  t.deepEqual(calls, []);
  t.is(out.declined, 'no --install');
});

test('--install --yes installs with each node’s family (sudo), one node at a time, and survives a failing node', async (t) => {
  const { remote, calls } = recordingRemote(['n1', 'n2', 'n3']);
  const lines: string[] = [];
  const out = await installMissing(remote, missing, {
    install: true,
    yes: true,
    print: (l) => lines.push(l),
  });
  t.deepEqual(
    calls.map((c) => `${c.node}: ${c.command}`),
    [
      'n1: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends iptables',
      'n2: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends iptables',
      'n3: dnf install -y iptables',
      'n1: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends libfaketime faketime',
      'n2: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends libfaketime faketime',
      // A failed apt install fetches the package lists once and tries again; the second failure is the error.
      'n2: apt-get update -q -o DPkg::Lock::Timeout=300',
      'n2: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends libfaketime faketime',
      'n3: dnf install -y libfaketime',
    ],
  );
  t.true(calls.every((c) => c.opts?.sudo === true));
  t.deepEqual(out.ran, ['iptables', 'libfaketime']);
  t.true(
    lines.some((l) => /^n2: apt-get install -y libfaketime faketime: E: Unable to locate package/.test(l)),
  );
});

test('at a terminal the operator confirms: "y" installs, anything else does not', async (t) => {
  for (const [answer, expected] of [
    ['y', 2],
    ['yes', 2],
    ['', 0],
    ['n', 0],
  ] as const) {
    const { remote, calls } = recordingRemote(['n1']);
    const asked: string[] = [];
    await installMissing(remote, missing, {
      install: true,
      yes: false,
      ask: async (q) => {
        asked.push(q);
        return answer;
      },
      print: () => undefined,
    });
    t.is(calls.length, expected, `answer "${answer}"`);
    t.deepEqual(asked, ['run 2 install command(s) on every node? [y/N] ']);
  }
});
