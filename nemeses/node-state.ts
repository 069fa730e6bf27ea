import { shellQuote } from '../src/core/control/quote.ts';

/**
 * Per-node marker directory for what faultline changed on a node (paused pids, junk files, faketime
 * files, strobe loops). The sweep (`faultline heal --inventory`) reads it back without any ledger. The
 * node name is part of the path because local-cluster nodes share one filesystem.
 */
export const STATE_ROOT = '/run/faultline';

export function nodeStateDir(node: string, area: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(node)) throw new Error(`node name not usable in a path: ${node}`);
  return `${STATE_ROOT}/${node}/${area}`;
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
