import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { subnetClaimsDir } from '../../src/lib/clusters/state-dir.ts';
import { claimSubnet, releaseSubnetsOf } from '../../src/lib/clusters/subnet.ts';

const asRoot = process.getuid?.() === 0;
const rootTest = asRoot ? test.serial : test.serial.skip;

// Two faultlines with different state directories (a suite's private one, the default) share the host's
// addresses: a /24 claimed under one must be taken by neither the other nor a second claim.
rootTest('subnet claims are host-wide: two state directories never get the same /24', async (t) => {
  const saved = process.env.FAULTLINE_STATE_DIR;
  const a = mkdtempSync(join(tmpdir(), 'fl-claims-a-'));
  const b = mkdtempSync(join(tmpdir(), 'fl-claims-b-'));
  try {
    process.env.FAULTLINE_STATE_DIR = a;
    const first = await claimSubnet('claims-x');
    const dirA = subnetClaimsDir();
    process.env.FAULTLINE_STATE_DIR = b;
    t.is(subnetClaimsDir(), dirA, 'one claims directory whatever the state directory');
    const second = await claimSubnet('claims-x');
    t.not(second.prefix, first.prefix);
    t.regex(readFileSync(join(dirA, second.prefix), 'utf8'), new RegExp(`^claims-x\\t${b}`));
    // Releasing cluster "claims-x" of state directory B leaves A's claim of the same name alone.
    releaseSubnetsOf('claims-x');
    t.false(existsSync(join(dirA, second.prefix)));
    t.true(existsSync(join(dirA, first.prefix)));
    process.env.FAULTLINE_STATE_DIR = a;
    releaseSubnetsOf('claims-x');
    t.false(existsSync(join(dirA, first.prefix)));
  } finally {
    if (saved === undefined) delete process.env.FAULTLINE_STATE_DIR;
    else process.env.FAULTLINE_STATE_DIR = saved;
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});
