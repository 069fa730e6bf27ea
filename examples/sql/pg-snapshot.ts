/**
 * A PostgreSQL snapshot as `pg_current_snapshot()::text` prints it (`xmin:xmax:xip,xip…`), and whether
 * a transaction id is committed in it: below xmin, or below xmax and not listed as in progress.
 */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  inProgress: Set<bigint>;
}

export function parseSnapshot(text: string): Snapshot {
  const m = /^(\d+):(\d+):([\d,]*)$/.exec(text.trim());
  if (!m) throw new Error(`not a PostgreSQL snapshot: ${JSON.stringify(text)}`);
  const [, xmin, xmax, xip] = m as unknown as [string, string, string, string];
  return {
    xmin: BigInt(xmin),
    xmax: BigInt(xmax),
    inProgress: new Set(xip ? xip.split(',').map(BigInt) : []),
  };
}

export const committedIn = (xid: bigint, s: Snapshot): boolean =>
  xid < s.xmin || (xid < s.xmax && !s.inProgress.has(xid));
