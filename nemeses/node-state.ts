import { shellQuote } from '../src/core/control/quote.ts';
import type { NodeSpec } from '../src/core/control/types.ts';
import { pathName } from '../src/core/util/paths.ts';

/**
 * Per-node marker directory for what faultline changed on a node (paused pids, junk files, faketime
 * files, strobe loops). The sweep (`faultline heal --inventory`) reads it back without any ledger.
 * The cluster and node names are both part of the path so that nodes sharing one /run (lab machines on a
 * shared root; local-cluster nodes before each had its own root layer) never touch each other's markers.
 */
export const STATE_ROOT = '/run/faultline';

/**
 * Inside a local-cluster node (a network namespace, labelled `netns` by its inventory), the node's own
 * size-limited filesystems: its data root and its /tmp. They are the only places on such a node a disk
 * fault may land, since everything else a namespace node sees is the host's own filesystem.
 */
export const LOCAL_NODE_DATA_ROOT = '/var/lib/faultline';
export const LOCAL_NODE_OWN_FILESYSTEMS: readonly string[] = [LOCAL_NODE_DATA_ROOT, '/tmp'];

/** Where disk faults must stay on this node (after symlinks); undefined: the data directory rule alone. */
export function confinedDiskRoots(spec: Pick<NodeSpec, 'labels'>): readonly string[] | undefined {
  return spec.labels?.netns !== undefined ? LOCAL_NODE_OWN_FILESYSTEMS : undefined;
}

/** The cluster a node belongs to (its inventory's `labels.cluster`), or `default` for an unlabelled lab node. */
export function clusterKeyOf(spec: Pick<NodeSpec, 'name' | 'labels'>): string {
  const cluster = spec.labels?.cluster;
  if (cluster === undefined) return 'default';
  return pathName('cluster label', cluster);
}

export function nodeStateDir(spec: Pick<NodeSpec, 'name' | 'labels'>, area: string): string {
  return `${STATE_ROOT}/${clusterKeyOf(spec)}/${pathName('node', spec.name)}/${area}`;
}

/** `mkdir -p DIR && printf VALUE > DIR/NAME` */
export function writeMarkerCommand(dir: string, name: string, value: string): string {
  return `mkdir -p ${shellQuote(dir)} && printf '%s' ${shellQuote(value)} > ${shellQuote(`${dir}/${name}`)}`;
}

/** Prints `name<TAB>content` for every marker in DIR (nothing when the directory is absent). */
export function listMarkersCommand(dir: string): string {
  return `if [ -d ${shellQuote(dir)} ]; then for f in ${shellQuote(dir)}/*; do [ -f "$f" ] && printf '%s\\t%s\\n' "$(basename "$f")" "$(cat "$f")"; done; fi; true`;
}

export function parseMarkers(text: string): Array<{ name: string; value: string }> {
  return text
    .split('\n')
    .filter((l) => l.includes('\t'))
    .map((l) => {
      const i = l.indexOf('\t');
      return { name: l.slice(0, i), value: l.slice(i + 1) };
    });
}
