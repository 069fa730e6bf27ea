import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerCompletionHandler, type TestFn } from 'ava';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { connectRemote } from '../../src/core/control/ssh-remote.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { type VmClusterUpReport, vmClusterDown, vmClusterUp } from '../../src/lib/clusters/vm.ts';
import { vmImageUnavailableReason } from '../../src/lib/clusters/vm-image.ts';

/**
 * One VM cluster for a test file, in a state directory of its own (so `cluster down --all` in a test
 * touches nothing but this cluster). Runs only under FAULTLINE_VM_TESTS=1 (`npm run test:vm`): booting
 * emulated VMs takes minutes, too long for `npm test`. Without root, qemu or debootstrap the tests are
 * skipped with the reason in their titles; FAULTLINE_REQUIRE_VM=1 makes that a failure. The cluster
 * is always removed at the end, whatever happened.
 */
export interface VmFixture {
  readonly skipReason: string | null;
  readonly test: TestFn;
  readonly stateDir: string;
  report(): VmClusterUpReport;
  remote(): Promise<Remote>;
}

export function withVmCluster(
  test: TestFn,
  opts: { name: string; nodes: number; memory?: string },
): VmFixture {
  const reason = process.env.FAULTLINE_VM_TESTS
    ? vmImageUnavailableReason()
    : 'VM tests run only with FAULTLINE_VM_TESTS=1 (npm run test:vm)';
  if (reason && process.env.FAULTLINE_REQUIRE_VM) test('VM cluster is available', (t) => t.fail(reason));
  const stateDir = reason ? '' : mkdtempSync(join(tmpdir(), 'faultline-vm-state-'));
  let report: VmClusterUpReport | undefined;
  let shared: Promise<Remote> | undefined;
  if (!reason) {
    // Every module reads FAULTLINE_STATE_DIR when called, and child processes inherit it.
    process.env.FAULTLINE_STATE_DIR = stateDir;
    test.before(async (t) => {
      report = await vmClusterUp({
        nodes: opts.nodes,
        name: opts.name,
        memory: opts.memory ?? '512M',
        print: (line) => t.log(line),
      });
    });
    test.after.always(async (t) => {
      // Bounded: the connections may point at VMs a test already removed (`cluster down --all`).
      const within = <T>(p: Promise<T>, ms: number) =>
        Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
      if (shared)
        await within(
          shared.then((r) => r.close()),
          10_000,
        );
      if (!process.env.FAULTLINE_KEEP_CLUSTER) {
        await within(vmClusterDown(opts.name), 120_000);
        rmSync(stateDir, { recursive: true, force: true });
      }
      // AVA waits for the worker to exit on its own: name anything still holding it open, so a leak shows
      // here instead of as a suite that never ends (the completion handler below then ends the worker).
      t.log(`active resources after teardown: ${process.getActiveResourcesInfo().join(', ') || 'none'}`);
    });
    registerCompletionHandler(() => process.exit());
  }
  const skipTest = ((title: string, ...rest: unknown[]) =>
    (test.skip as unknown as (...a: unknown[]) => void)(
      `${title} (skipped: ${reason})`,
      ...rest,
    )) as unknown as TestFn;
  Object.assign(skipTest, { serial: skipTest, before: test.before, after: test.after });
  return {
    skipReason: reason,
    test: reason ? skipTest : test,
    stateDir,
    report() {
      if (!report) throw new Error('the VM cluster is not up');
      return report;
    },
    remote() {
      shared ??= (async () => {
        if (!report) throw new Error('the VM cluster is not up');
        const inv = loadInventory(report.cluster.inventoryPath);
        return connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles, hostKeyPolicy: 'strict' });
      })();
      return shared;
    },
  };
}
