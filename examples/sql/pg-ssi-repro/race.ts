import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * The G2-item PostgreSQL committed at SERIALIZABLE, made deterministic: three sessions run the recorded
 * transactions (T3 appends to key A; T2 appends to key B and reads A without T3's append; the read-only
 * T1 reads A with T3's append and B without T2's) and gdb holds T3's backend at the one point where the
 * race happened: T3's COMMIT stopped on entry to ReleasePredicateLocks, after its commit is already
 * visible to new snapshots (ProcArrayEndTransaction) but before SSI marks it committed. Meanwhile T1
 * takes its snapshot (T3 visible, T2 not) and T2 commits in full; then T3 goes on, and T1 reads and
 * commits. With `--control` no breakpoint is set: T3's COMMIT finishes before T1 begins; with
 * `--pivot-after` T3 is held the same way while T1 takes its snapshot, but T2 commits after T3 finished.
 *
 * Usage (root, to attach gdb to the backend): npx tsx race.ts HOST PORT [--control | --pivot-after]
 * It drops and recreates the table `lists` on that server: point it at a scratch server (race.sh).
 * Exit 0: all three committed (the cycle); 1: one was aborted (no cycle); 2: the run itself failed.
 */
const [host, port, flag] = process.argv.slice(2);
/** --control: no breakpoint; --pivot-after: T3 held, but T2 commits only after T3 finished its COMMIT. */
const control = flag === '--control';
const pivotAfter = flag === '--pivot-after';
const APPEND =
  "INSERT INTO lists (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = lists.v || ',' || excluded.v";
const READ = 'SELECT v FROM lists WHERE k = $1';
const A = 1;
const B = 2;

async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ host, port: Number(port), user: 'postgres', database: 'postgres' });
  await c.connect();
  return c;
}

async function read(c: pg.Client, k: number): Promise<string> {
  return ((await c.query(READ, [k])).rows[0]?.v as string | undefined) ?? '';
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'committed';
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return `aborted (${e.code ?? ''} ${e.message ?? String(err)})`;
  }
}

async function waitFor(path: string, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !existsSync(path); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${path}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** gdb attached to T3's backend: stops it on entry to ReleasePredicateLocks until `go` exists. */
function holdAtReleasePredicateLocks(pid: number, dir: string) {
  const script = join(dir, 'hold.gdb');
  writeFileSync(
    script,
    [
      'set pagination off',
      'set confirm off',
      'break ReleasePredicateLocks',
      'commands',
      'silent',
      'bt 4',
      `shell touch ${dir}/stopped`,
      `shell for i in $(seq 1 3000); do [ -e ${dir}/go ] && break; sleep 0.01; done`,
      'delete',
      'detach',
      'quit',
      'end',
      `shell touch ${dir}/attached`,
      'continue',
      '',
    ].join('\n'),
  );
  const gdb = spawn('gdb', ['-q', '-nx', '-batch', '-p', String(pid), '-x', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  gdb.stdout.on('data', (d) => (output += d));
  gdb.stderr.on('data', (d) => (output += d));
  const done = new Promise<string>((resolve) => gdb.on('close', () => resolve(output)));
  return { done, kill: () => gdb.kill('SIGKILL') };
}

async function main(): Promise<number> {
  if (!host || !port) {
    console.error('usage: race.ts HOST PORT [--control]');
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pg-ssi-race-'));
  const [setup, t1, t2, t3] = [await connect(), await connect(), await connect(), await connect()];
  let gdb: ReturnType<typeof holdAtReleasePredicateLocks> | null = null;
  try {
    await setup.query('DROP TABLE IF EXISTS lists');
    await setup.query('CREATE TABLE lists (k integer PRIMARY KEY, v text NOT NULL)');
    await setup.query("INSERT INTO lists VALUES ($1, '1'), ($2, '1')", [A, B]);
    const pid3 = (await t3.query('SELECT pg_backend_pid() AS p')).rows[0].p as number;

    await t3.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    await t3.query(APPEND, [A, '3']);
    const xid3 = (await t3.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x as string;
    await t2.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    await t2.query(APPEND, [B, '2']);
    const t2ReadA = await read(t2, A);
    const xid2 = (await t2.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x as string;

    if (!control) {
      gdb = holdAtReleasePredicateLocks(pid3, dir);
      await waitFor(join(dir, 'attached'), 30_000);
    }
    const t3Commit = outcome(t3.query('COMMIT'));
    if (control) await t3Commit;
    else await waitFor(join(dir, 'stopped'), 30_000);

    await t1.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    const snap1 = (await t1.query('SELECT pg_current_snapshot()::text AS s')).rows[0].s as string;
    if (pivotAfter) {
      writeFileSync(join(dir, 'go'), '');
      await t3Commit;
    }
    const t2Commit = await outcome(t2.query('COMMIT'));
    if (!control) writeFileSync(join(dir, 'go'), '');
    const t3Outcome = await t3Commit;
    const gdbOutput = gdb ? await gdb.done : '';

    let t1ReadA = '';
    let t1ReadB = '';
    const t1Outcome = await outcome(
      (async () => {
        t1ReadA = await read(t1, A);
        t1ReadB = await read(t1, B);
        await t1.query('COMMIT');
      })(),
    );
    await t1.query('ROLLBACK').catch(() => {});

    console.log((await setup.query('SELECT version() AS v')).rows[0].v);
    console.log(
      control
        ? 'control: no breakpoint, T3 commits in full before T1 begins'
        : pivotAfter
          ? `T3's backend ${pid3} held by gdb on entry to ReleasePredicateLocks while T1 took its snapshot; T2 committed after T3`
          : `T3's backend ${pid3} held by gdb on entry to ReleasePredicateLocks while T1 took its snapshot and T2 committed`,
    );
    if (gdbOutput.includes('#0'))
      console.log(
        `gdb: ${gdbOutput
          .split('\n')
          .filter((l) => /^#\d/.test(l))
          .join(' | ')}`,
      );
    console.log(`T3 (xid ${xid3}): [append ${A} 3] -> ${t3Outcome}`);
    console.log(`T2 (xid ${xid2}): [append ${B} 2] [r ${A} [${t2ReadA}]] -> ${t2Commit}`);
    console.log(`T1 (snapshot ${snap1}): [r ${A} [${t1ReadA}]] [r ${B} [${t1ReadB}]] -> ${t1Outcome}`);
    const all = [t3Outcome, t2Commit, t1Outcome].every((o) => o === 'committed');
    const cycle = all && t2ReadA === '1' && t1ReadA === '1,3' && t1ReadB === '1';
    console.log(
      cycle
        ? `all three committed: T1 -rw-> T2 (T1 read ${B} without T2's 2), T2 -rw-> T3 (T2 read ${A} without T3's 3), T3 -wr-> T1 (T1 read T3's 3): G2-item at SERIALIZABLE`
        : 'no cycle committed',
    );
    return cycle ? 0 : 1;
  } finally {
    gdb?.kill();
    for (const c of [setup, t1, t2, t3]) await c.end().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 2;
}
