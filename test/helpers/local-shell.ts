import { execa } from 'execa';
import type { ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';

/**
 * A one-node Remote whose commands run in bash on this host: for nemeses whose node commands need
 * nothing but a shell (disk corruption, path checks). A failing command throws unless `check: false`.
 */
export function localShellRemote(cluster: string): Remote {
  const spec: NodeSpec = { name: 'n1', host: '127.0.0.1', port: 22, user: 'root', labels: { cluster } };
  return {
    nodes: [spec],
    node: () => spec,
    exec: async (_n: string, command: string, o?: { check?: boolean }): Promise<ExecResult> => {
      const r = await execa('bash', ['-c', command], { reject: false });
      if (r.exitCode !== 0 && o?.check !== false) throw new Error(`${command}: ${r.stderr}`);
      return { code: r.exitCode ?? 0, stdout: r.stdout, stderr: r.stderr } as ExecResult;
    },
  } as unknown as Remote;
}
