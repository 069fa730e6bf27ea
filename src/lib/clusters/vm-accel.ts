import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { stateDir } from './state-dir.ts';

/**
 * KVM or TCG for VM nodes. /dev/kvm existing is not enough (under nested virtualisation a KVM guest can
 * die on an MSR or hang right after the BIOS), so KVM is chosen only when a test guest — the node
 * kernel itself, with no root filesystem — really runs: it must print its banner and get as far as its
 * "cannot mount root" panic within the time limit. Otherwise TCG (software emulation). The choice and
 * its reason are cached per host boot and qemu binary.
 */
export interface AccelChoice {
  accel: 'kvm' | 'tcg';
  /** qemu -cpu value. */
  cpu: string;
  reason: string;
  probedAt: string;
  bootId: string;
}

const ChoiceSchema = z.object({
  accel: z.enum(['kvm', 'tcg']),
  cpu: z.string(),
  reason: z.string(),
  probedAt: z.string(),
  bootId: z.string(),
});

const PROBE_LIMIT_MS = 20_000;

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

const cachePath = () => join(stateDir(), 'vm-accel.json');

export interface ProbeResult {
  ok: boolean;
  detail: string;
  ms: number;
}

/** Boot `kernel` under `accel`/`cpu` with no root: ok when it runs to the kernel's root-mount panic. */
export function probeGuest(
  qemu: string,
  kernel: string,
  accel: string,
  cpu: string,
  limitMs = PROBE_LIMIT_MS,
): Promise<ProbeResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    // Under `timeout`: if this process is killed mid-probe, a hung test guest still goes away.
    const child = spawn(
      'timeout',
      [
        '-s',
        'KILL',
        String(Math.ceil(limitMs / 1000) + 5),
        qemu,
        '-accel',
        accel,
        '-cpu',
        cpu,
        '-m',
        '256M',
        '-smp',
        '1',
        '-display',
        'none',
        '-serial',
        'stdio',
        '-monitor',
        'none',
        '-no-reboot',
        '-kernel',
        kernel,
        '-append',
        'console=ttyS0 panic=-1 rdinit=/nonexistent',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let done = false;
    const finish = (ok: boolean, detail: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGTERM'); // timeout passes it on to qemu
      resolve({ ok, detail, ms: Date.now() - t0 });
    };
    const onData = (d: Buffer) => {
      out += d.toString('latin1');
      if (/Linux version/.test(out) && /Kernel panic/.test(out))
        finish(true, 'the test guest booted its kernel');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => finish(false, err.message));
    child.on('exit', (code, signal) => {
      const last =
        out
          .trim()
          .split('\n')
          .find((l) => /error|fail/i.test(l)) ?? out.trim().split('\n').pop();
      finish(false, `qemu exited (${signal ?? code}) before the guest kernel ran: ${last ?? 'no output'}`);
    });
    const timer = setTimeout(
      () =>
        finish(
          false,
          /Linux version/.test(out)
            ? `the guest kernel started but did not finish booting within ${limitMs / 1000} s`
            : `the guest printed nothing within ${limitMs / 1000} s (hangs after the BIOS)`,
        ),
      limitMs,
    );
  });
}

/** The cached choice for this host boot, or a new probe of KVM (cpu host, then qemu's default model). */
export async function chooseAccel(
  qemu: string,
  kernel: string,
  opts: { force?: 'tcg' } = {},
): Promise<AccelChoice> {
  const base = { probedAt: new Date().toISOString(), bootId: bootId() };
  if (opts.force === 'tcg') return { accel: 'tcg', cpu: 'max', reason: 'TCG requested', ...base };
  const cached = ChoiceSchema.safeParse(readJsonOrNull(cachePath()));
  if (cached.success && cached.data.bootId === base.bootId && !opts.force) return cached.data;
  let choice: AccelChoice;
  let usable = existsSync('/dev/kvm');
  if (usable) {
    try {
      accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
    } catch {
      usable = false;
    }
  }
  if (!usable) {
    choice = { accel: 'tcg', cpu: 'max', reason: 'no usable /dev/kvm: software emulation (TCG)', ...base };
  } else {
    const tries: string[] = [];
    choice = { accel: 'tcg', cpu: 'max', reason: '', ...base };
    for (const cpu of ['host', 'qemu64']) {
      const r = await probeGuest(qemu, kernel, 'kvm', cpu);
      if (r.ok) {
        choice = {
          accel: 'kvm',
          cpu,
          reason: `KVM test guest (-cpu ${cpu}) booted its kernel in ${r.ms} ms`,
          ...base,
        };
        break;
      }
      tries.push(`-cpu ${cpu}: ${r.detail}`);
    }
    if (choice.accel === 'tcg')
      choice.reason = `/dev/kvm exists but a KVM test guest does not run (${tries.join('; ')}): software emulation (TCG)`;
  }
  mkdirSync(stateDir(), { recursive: true });
  writeFileAtomicSync(cachePath(), `${JSON.stringify(choice, null, 2)}\n`);
  return choice;
}
