import { ensurePackages } from '../../core/control/packages.ts';
import type { Remote } from '../../core/control/types.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { ReconciledNeed } from './capability-probe.ts';

/**
 * `--install`: install the packages of the missing, trivially installable capabilities on every node —
 * only after confirmation (`--yes`, or "y" at the terminal prompt), never silently. The hints name Debian
 * packages; each node installs them with its own package family (apt, dnf, yum, apk, zypper), and a
 * `packageFamily: none` node installs nothing and says exactly what it lacks. One node at a time: nodes
 * sharing one package database (lab machines on a shared root) would fight over its lock; local namespace
 * nodes each have their own, in their copy-on-write layer over the host's root filesystem.
 */
export interface InstallChoice {
  /** --install was given. */
  install: boolean;
  /** --yes was given. */
  yes: boolean;
  /** Asks the operator at the terminal; undefined when there is none. */
  ask?: (question: string) => Promise<string>;
  print: (line: string) => void;
}

export interface InstallOutcome {
  /** Capabilities whose install commands ran (successfully or not: the re-probe decides). */
  ran: string[];
  /** Why nothing ran, when something was installable. */
  declined?: string;
}

export async function installMissing(
  remote: Remote,
  installable: readonly ReconciledNeed[],
  choice: InstallChoice,
): Promise<InstallOutcome> {
  for (const r of installable) choice.print(`missing ${r.need.name}: install with: ${r.install}`);
  if (installable.length === 0) return { ran: [] };
  if (!choice.install) return { ran: [], declined: 'no --install' };
  const confirmed =
    choice.yes ||
    (choice.ask !== undefined &&
      /^y/i.test(await choice.ask(`run ${installable.length} install command(s) on every node? [y/N] `)));
  if (!confirmed) {
    choice.print('not installing (no confirmation); the scenarios that need them end INCONCLUSIVE-env');
    return { ran: [], declined: 'no confirmation' };
  }
  const ran: string[] = [];
  for (const r of installable) {
    for (const node of remote.nodes.map((n) => n.name)) {
      await ensurePackages(remote, node, r.packages).catch((err) =>
        choice.print(`${node}: ${r.install}: ${errorMessage(err)}`),
      );
    }
    ran.push(r.need.name);
  }
  return { ran };
}
