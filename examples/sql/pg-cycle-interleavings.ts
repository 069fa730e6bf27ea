import pg from 'pg';

/**
 * Replays one G2-item cycle found at SERIALIZABLE (docs/findings/sql.md) against a PostgreSQL server in
 * every statement order its reads allow, three sessions at a time, and reports any order in which all
 * three transactions commit with the cycle's reads. The cycle's reads fix the snapshot order: T2's
 * snapshot (its first statement) precedes T3's commit, T3's commit precedes T1's snapshot, and T1's
 * snapshot precedes T2's commit. Everything else may interleave freely.
 *
 *   T1: r 31 → [1], r 30 → [], r 30 → [], r 29 → [1 3]
 *   T2: append 29 14, r 30 → [], r 31 → []
 *   T3: r 30 → [], append 31 1
 *
 * Usage: npx tsx pg-cycle-interleavings.ts [--rows N] [--host H] [--port P] [--isolation repeatable-read]
 *   (a scratch server: it drops and recreates the table `lists`; --rows sets the table size, which
 *   decides between sequential and index scans and so between relation and page predicate locks).
 * Exit 0: no order commits the cycle; 1: at least one does (printed); 2: cannot connect.
 */
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const rows = Number(arg('rows', '30'));
// REPEATABLE READ (snapshot isolation) is the control: it must let the cycle commit in some orders.
const isolation = arg('isolation', 'serializable') === 'repeatable-read' ? 'REPEATABLE READ' : 'SERIALIZABLE';
const connect = async () => {
  const c = new pg.Client({
    host: arg('host', '/var/run/postgresql'),
    port: Number(arg('port', '5432')),
    user: 'postgres',
  });
  await c.connect();
  return c;
};

type Session = pg.Client;
type Statement = ((s: Session) => Promise<string>) | 'commit';
type Txn = 'T1' | 'T2' | 'T3';

const read = async (s: Session, k: number) =>
  ((await s.query('SELECT v FROM lists WHERE k = $1', [k])).rows[0]?.v as string | undefined) ?? '';
const append = async (s: Session, k: number, v: number) => {
  await s.query(
    "INSERT INTO lists (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = lists.v || ',' || excluded.v",
    [k, String(v)],
  );
  return '';
};
/** Begins a transaction, then runs its first statement (PostgreSQL takes the snapshot there). */
const first =
  (statement: (s: Session) => Promise<string>) =>
  async (s: Session): Promise<string> => {
    await s.query(`BEGIN ISOLATION LEVEL ${isolation}`);
    return statement(s);
  };

const programs: Record<Txn, Statement[]> = {
  T1: [first((s) => read(s, 31)), (s) => read(s, 30), (s) => read(s, 30), (s) => read(s, 29), 'commit'],
  T2: [first((s) => append(s, 29, 14)), (s) => read(s, 30), (s) => read(s, 31), 'commit'],
  T3: [first((s) => read(s, 30)), (s) => append(s, 31, 1), 'commit'],
};
const commitIndex = (t: Txn) => programs[t].length - 1;

/** Every interleaving of the three programs that keeps the snapshot order the cycle's reads imply. */
function interleavings(): [Txn, number][][] {
  const out: [Txn, number][][] = [];
  const total = Object.values(programs).reduce((n, p) => n + p.length, 0);
  const walk = (next: Record<Txn, number>, seq: [Txn, number][]) => {
    if (seq.length === total) return void out.push(seq);
    const done = (t: Txn, i: number) => next[t] > i;
    for (const t of ['T1', 'T2', 'T3'] as const) {
      const i = next[t];
      if (i >= programs[t].length) continue;
      if (t === 'T3' && i === commitIndex('T3') && !done('T2', 0)) continue;
      if (t === 'T1' && i === 0 && !done('T3', commitIndex('T3'))) continue;
      if (t === 'T2' && i === commitIndex('T2') && !done('T1', 0)) continue;
      walk({ ...next, [t]: i + 1 }, [...seq, [t, i]]);
    }
  };
  walk({ T1: 0, T2: 0, T3: 0 }, []);
  return out;
}

async function main(): Promise<number> {
  let admin: Session;
  let sessions: Record<Txn, Session>;
  try {
    admin = await connect();
    sessions = { T1: await connect(), T2: await connect(), T3: await connect() };
  } catch (err) {
    console.error(`cannot connect: ${(err as Error).message}`);
    return 2;
  }
  await admin.query('DROP TABLE IF EXISTS lists');
  await admin.query('CREATE TABLE lists (k integer PRIMARY KEY, v text NOT NULL)');
  for (let k = 0; k < rows; k++)
    if (k !== 30 && k !== 31)
      await admin.query('INSERT INTO lists VALUES ($1, $2)', [k, k === 29 ? '1,3' : '1']);
  await admin.query('ANALYZE lists');
  const version = (await admin.query('SHOW server_version')).rows[0].server_version;
  const orders = interleavings();
  let committedCycles = 0;
  for (const order of orders) {
    await admin.query("DELETE FROM lists WHERE k IN (30, 31); UPDATE lists SET v = '1,3' WHERE k = 29");
    const reads: Record<Txn, string[]> = { T1: [], T2: [], T3: [] };
    const aborted = new Set<Txn>();
    const committed = new Set<Txn>();
    for (const [t, i] of order) {
      if (aborted.has(t)) continue;
      const statement = programs[t][i] as Statement;
      try {
        if (statement !== 'commit') reads[t].push(await statement(sessions[t]));
        else if ((await sessions[t].query('COMMIT')).command === 'COMMIT') committed.add(t);
      } catch {
        aborted.add(t);
        await sessions[t].query('ROLLBACK').catch(() => {});
      }
    }
    const cycle = reads.T1[0] === '1' && reads.T1[3] === '1,3' && reads.T2[2] === '';
    if (committed.size === 3 && cycle) {
      committedCycles++;
      console.log(`cycle committed: ${order.map(([t, i]) => `${t}.${i}`).join(' ')}`);
    }
  }
  console.log(
    `PostgreSQL ${version}, ${isolation}, ${rows} rows: ${orders.length} interleavings, ${committedCycles} committed the cycle`,
  );
  await Promise.all([admin, ...Object.values(sessions)].map((s) => s.end()));
  return committedCycles ? 1 : 0;
}

process.exitCode = await main();
