import type { DeclaredSignal } from '../../../nemeses/declared-signal.ts';

/**
 * The machine-readable part of a §7.M "Nemesis + landing evidence" field: each backquoted span that
 * starts with `command:`, `metric:` or `log:` (optionally qualified by a fault kind or action, e.g.
 * `log(kill): …`) is a signal the engine reads before, during and after each fault it applies to:
 *
 *   `command: etcdctl endpoint health`          a shell command run on the fault's nodes (output compared)
 *   `metric: etcd_server_leader_changes_seen_total at http://{address}:2379/metrics`
 *                                               a Prometheus sample scraped on each node (value compared)
 *   `log(kill): lost leader|no leader`          an extended regular expression counted in the database's
 *                                               log files on each node (the count must grow)
 *
 * The rest of the field is prose for the reader. A span that starts with one of the three words but
 * cannot be read is a plan error.
 */
const SPAN = /`([^`]+)`/g;
const HEAD = /^(command|metric|log)(?:\(([a-z][a-z0-9-]*)\))?:\s*(.*)$/s;
const METRIC = /^([A-Za-z_:][A-Za-z0-9_:]*)\s+at\s+(https?:\/\/\S+)$/;

export function parseLandingSignals(field: string | null): { signals: DeclaredSignal[]; errors: string[] } {
  const signals: DeclaredSignal[] = [];
  const errors: string[] = [];
  for (const m of (field ?? '').matchAll(SPAN)) {
    const text = (m[1] as string).trim();
    const head = HEAD.exec(text);
    if (!head) continue;
    const [, type, only = null, body = ''] = head;
    const rest = body.trim();
    if (rest === '') {
      errors.push(`\`${text}\`: ${type} names nothing to read`);
      continue;
    }
    if (type === 'command') signals.push({ type, command: rest, only, text });
    else if (type === 'metric') {
      const mm = METRIC.exec(rest);
      if (!mm) {
        errors.push(`\`${text}\`: write metric: NAME at http://{address}:PORT/PATH`);
        continue;
      }
      signals.push({ type, name: mm[1] as string, url: mm[2] as string, only, text });
    } else {
      try {
        new RegExp(rest);
      } catch (err) {
        errors.push(`\`${text}\`: not a regular expression (${(err as Error).message})`);
        continue;
      }
      signals.push({ type: 'log', pattern: rest, only, text });
    }
  }
  return { signals, errors };
}
