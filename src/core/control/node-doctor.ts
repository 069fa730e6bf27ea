import { readFileSync } from 'node:fs';
import { EXIT, errorMessage } from '../util/errors.ts';
import { parseProbe, ROOT_PROBE, USER_PROBE } from './doctor-probe.ts';
import { familyFromOsRelease, installHint, PACKAGE_FAMILIES } from './packages.ts';
import type { NodeSpec, Remote } from './types.ts';

/**
 * `faultline doctor`: what each node can and cannot do, before a run depends on it. Every item is
 * measured on the node (nothing is assumed from the inventory except the declared shared clock), and
 * every missing item names the command that installs it.
 */
export type CheckStatus = 'ok' | 'missing' | 'warn' | 'unknown';

export interface DoctorCheck {
  item: string;
  status: CheckStatus;
  /** Short value for the table (e.g. "nft", "6.1.0-18-amd64"). */
  value: string;
  detail?: string;
  fix?: string;
  /** A run cannot work without it (SSH, sudo). */
  required: boolean;
}

export interface NodeDoctorReport {
  node: string;
  host: string;
  checks: DoctorCheck[];
}

export interface DoctorReport {
  nodes: NodeDoctorReport[];
  /** True when every node passed every required check. */
  ok: boolean;
}

export const DOCTOR_ITEMS = [
  'ssh',
  'sudo',
  'os',
  'packages',
  'kernel',
  'iptables',
  'tc',
  'netem',
  'libfaketime',
  'dmsetup',
  'dm-flakey',
  'fuse',
  'own clock',
  'timeout',
  'disk free',
] as const;

function controlBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

function check(
  item: string,
  status: CheckStatus,
  value: string,
  extra: Partial<DoctorCheck> = {},
): DoctorCheck {
  return { item, status, value, required: false, ...extra };
}

export function interpretProbe(
  spec: NodeSpec,
  user: Record<string, string>,
  root: Record<string, string> | null,
  hostBootId: string | null,
): DoctorCheck[] {
  const checks: DoctorCheck[] = [
    check('ssh', 'ok', `${user.user ?? spec.user}@${spec.host}:${spec.port}`, { required: true }),
  ];
  // Every fix in the node's own package family (Debian names mapped; `none`: put it on the image).
  const family = spec.packageFamily ?? familyFromOsRelease(osReleaseOf(user));
  const install = (...names: string[]) => installHint(family, names);
  const sudo = user.sudo ?? 'no';
  checks.push(
    sudo === 'no'
      ? check('sudo', 'missing', 'no', {
          required: true,
          detail: spec.sudoPasswordEnv
            ? `sudo with the password from ${spec.sudoPasswordEnv} failed`
            : 'sudo -n true failed: passwordless sudo is needed for faults',
          fix: `${install('sudo')} && echo '${spec.user} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/faultline (or set sudoPasswordEnv)`,
        })
      : check(
          'sudo',
          'ok',
          sudo === 'root' ? 'root' : sudo === 'password' ? 'with password' : 'passwordless',
          {
            required: true,
          },
        ),
  );
  checks.push(check('os', 'ok', user.os || 'unknown'));
  checks.push(packagesCheck(spec, user));
  checks.push(check('kernel', 'ok', user.kernel ?? 'unknown'));

  const ipt = root?.iptables;
  if (root === null) checks.push(check('iptables', 'unknown', '?', { detail: 'needs sudo to inspect' }));
  else if (!ipt) checks.push(check('iptables', 'missing', 'no', { fix: install('iptables') }));
  else
    checks.push(
      check('iptables', 'ok', /nf_tables/.test(ipt) ? 'nft' : /legacy/.test(ipt) ? 'legacy' : ipt, {
        detail: ipt,
      }),
    );

  checks.push(
    user.tc
      ? check('tc', 'ok', 'yes', { detail: user.tc })
      : check('tc', 'missing', 'no', { fix: install('iproute2') }),
  );
  const netem = root?.netem;
  if (!user.tc) checks.push(check('netem', 'missing', 'no', { detail: 'no tc', fix: install('iproute2') }));
  else if (root === null || netem === undefined)
    checks.push(check('netem', 'unknown', '?', { detail: 'needs sudo to probe' }));
  else if (netem === 'yes') checks.push(check('netem', 'ok', 'yes'));
  else if (netem === 'loadable')
    checks.push(check('netem', 'ok', 'module', { detail: 'sch_netem loads on first use' }));
  else
    checks.push(
      check('netem', 'missing', 'no', {
        detail: netem.replace(/^no:\s*/, ''),
        fix: 'modprobe sch_netem (Debian: part of linux-image-$(uname -r); Ubuntu: apt-get install -y linux-modules-extra-$(uname -r))',
      }),
    );

  checks.push(
    user.faketime
      ? check('libfaketime', 'ok', 'yes', { detail: user.faketime })
      : check('libfaketime', 'missing', 'no', { fix: install('libfaketime') }),
  );
  checks.push(
    user.dmsetup
      ? check('dmsetup', 'ok', 'yes', { detail: user.dmsetup })
      : check('dmsetup', 'missing', 'no', { fix: install('dmsetup') }),
  );
  const flakey = root?.dmflakey;
  if (!user.dmsetup)
    checks.push(check('dm-flakey', 'missing', 'no', { detail: 'no dmsetup', fix: install('dmsetup') }));
  else if (root === null || flakey === undefined)
    checks.push(check('dm-flakey', 'unknown', '?', { detail: 'needs sudo to probe' }));
  else if (flakey === 'yes' || flakey === 'loadable')
    checks.push(check('dm-flakey', 'ok', flakey === 'yes' ? 'yes' : 'module'));
  else
    checks.push(
      check('dm-flakey', 'missing', 'no', {
        detail: flakey.replace(/^no:\s*/, ''),
        fix: 'modprobe dm-flakey (needs a kernel with device-mapper)',
      }),
    );

  if (user.devfuse === 'yes' && user.fusermount) checks.push(check('fuse', 'ok', 'yes'));
  else
    checks.push(
      check('fuse', 'missing', 'no', {
        detail: user.devfuse === 'yes' ? 'no fusermount' : 'no /dev/fuse',
        fix: user.devfuse === 'yes' ? install('fuse3') : `modprobe fuse && ${install('fuse3')}`,
      }),
    );

  // A node whose kernel is the control host's (same boot id), a container, or one the inventory marks
  // shared cannot have its clock set without moving every other node's (and the host's) clock too.
  const reasons: string[] = [];
  if (spec.sharedKernelClock) reasons.push('inventory: sharedKernelClock');
  if (hostBootId && user.boot_id === hostBootId) reasons.push('same kernel as the control host (boot_id)');
  if (user.container && user.container !== 'none') reasons.push(`container (${user.container})`);
  checks.push(
    reasons.length > 0
      ? check('own clock', 'warn', 'shared', {
          detail: `${reasons.join('; ')}: clock-setting faults are unsafe and refused`,
        })
      : check('own clock', 'ok', 'yes'),
  );
  checks.push(
    user.timeout
      ? check('timeout', 'ok', 'yes')
      : check('timeout', 'missing', 'no', {
          fix: install('coreutils'),
          detail: 'per-command timeouts cannot kill remote work',
        }),
  );
  const kb = Number(user.disk_free_kb);
  if (Number.isFinite(kb) && user.disk_free_kb) {
    const gib = kb / 1024 / 1024;
    checks.push(
      check(
        'disk free',
        gib < 1 ? 'warn' : 'ok',
        `${gib.toFixed(1)} GiB`,
        gib < 1 ? { detail: 'less than 1 GiB free on /' } : {},
      ),
    );
  } else checks.push(check('disk free', 'unknown', '?'));
  return checks;
}

function osReleaseOf(user: Record<string, string>): Record<string, string> {
  return { ID: user.os_id ?? '', ID_LIKE: user.os_id_like ?? '', VERSION_ID: user.os_version_id ?? '' };
}

/** How software gets onto the node: the inventory's packageFamily, or the one /etc/os-release implies. */
function packagesCheck(spec: NodeSpec, user: Record<string, string>): DoctorCheck {
  if (spec.packageFamily)
    return check('packages', 'ok', spec.packageFamily, {
      detail:
        spec.packageFamily === 'none'
          ? 'set in the inventory: pre-provisioned, nothing is installed; missing binaries are reported'
          : 'set in the inventory',
    });
  const os = osReleaseOf(user);
  const family = familyFromOsRelease(os);
  const seen = `ID=${os.ID || '?'}${os.ID_LIKE ? `, ID_LIKE=${os.ID_LIKE}` : ''}`;
  return family
    ? check('packages', 'ok', family, { detail: `detected from /etc/os-release (${seen})` })
    : check('packages', 'warn', 'unknown', {
        detail: `/etc/os-release (${seen}) names no family faultline knows: nothing can be installed`,
        fix: `set packageFamily (${PACKAGE_FAMILIES.join(', ')}) for the node in the inventory`,
      });
}

export async function runDoctor(remote: Remote, opts: { timeoutMs?: number } = {}): Promise<DoctorReport> {
  const hostBootId = controlBootId();
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const results = await remote.onNodes(
    remote.nodes.map((n) => n.name),
    async (name) => {
      const spec = remote.node(name);
      const user = parseProbe((await remote.exec(name, USER_PROBE, { timeoutMs })).stdout);
      // sudo that asks for a password: try it with the one the inventory or --sudo-password-env names.
      if (user.sudo === 'no' && spec.sudoPasswordEnv) {
        const r = await remote.exec(name, 'id -u', { sudo: true, check: false, timeoutMs });
        if (r.code === 0 && r.stdout.trim() === '0') user.sudo = 'password';
      }
      const root =
        user.sudo === 'no'
          ? null
          : parseProbe((await remote.exec(name, ROOT_PROBE, { sudo: true, timeoutMs })).stdout);
      return interpretProbe(spec, user, root, hostBootId);
    },
  );
  const nodes = results.map((r): NodeDoctorReport => {
    const spec = remote.node(r.node);
    if (r.ok && r.value) return { node: r.node, host: spec.host, checks: r.value };
    return {
      node: r.node,
      host: spec.host,
      checks: [
        check('ssh', 'missing', 'FAILED', {
          required: true,
          detail: errorMessage(r.error),
          fix: `check host/port/user/identityFile for ${r.node} in the inventory, and that sshd runs there`,
        }),
      ],
    };
  });
  return { nodes, ok: nodes.every((n) => n.checks.every((c) => !c.required || c.status === 'ok')) };
}

/**
 * doctor's exit code: 254 when a node cannot be reached at all (wrong host, port, user or identity file
 * in the inventory: bad input), 1 when every node answers but one fails another required check (sudo),
 * 0 when every required check passed.
 */
export function doctorExitCode(report: DoctorReport): number {
  if (report.ok) return EXIT.valid;
  const unreachable = report.nodes.some((n) => n.checks.some((c) => c.item === 'ssh' && c.status !== 'ok'));
  return unreachable ? EXIT.badInput : EXIT.invalid;
}

const MARK: Record<CheckStatus, string> = { ok: '', missing: '✗ ', warn: '! ', unknown: '? ' };

/** Items down the side, nodes across; then one line per problem with its fix. */
export function renderDoctorTable(report: DoctorReport): string {
  const header = ['', ...report.nodes.map((n) => n.node)];
  const rows: string[][] = [header];
  for (const item of DOCTOR_ITEMS) {
    rows.push([
      item,
      ...report.nodes.map((n) => {
        const c = n.checks.find((x) => x.item === item);
        return c ? `${MARK[c.status]}${c.value}` : '-';
      }),
    ]);
  }
  const widths = header.map((_, i) => Math.min(40, Math.max(...rows.map((r) => (r[i] ?? '').length))));
  const fmt = (r: string[]) =>
    r
      .map((cell, i) => {
        const w = widths[i] ?? 0;
        return cell.length > w ? `${cell.slice(0, w - 1)}…` : cell.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  const lines = rows.map(fmt);
  const problems: string[] = [];
  for (const n of report.nodes) {
    for (const c of n.checks) {
      if (c.status === 'ok') continue;
      const fix = c.fix ? ` → ${c.fix}` : '';
      problems.push(`${n.node}: ${c.item}: ${c.status}${c.detail ? ` (${c.detail})` : ''}${fix}`);
    }
  }
  if (problems.length > 0) lines.push('', ...problems);
  lines.push(
    '',
    report.ok
      ? 'doctor: every node passed the required checks (ssh, sudo)'
      : 'doctor: some node failed a required check (ssh or sudo)',
  );
  return `${lines.join('\n')}\n`;
}
