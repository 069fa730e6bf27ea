/**
 * Go Porcupine beside faultline in bench:linearizability (`--go`): builds ./go-porcupine/main.go (this
 * repository's harness: its own parsers and models, Porcupine's CheckEventsTimeout) against a local
 * Porcupine source and runs one pass over the 109 fixtures per call. Nothing of Porcupine is in this
 * repository: the source comes from FAULTLINE_PORCUPINE_SRC, a checkout or a git directory of
 * github.com/anishathalye/porcupine. Where Go or the source is absent the bench says which, and the
 * figure is written as skipped with that reason.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface GoPass {
  wallMs: number;
  cpuMs: number;
  mismatches: string[];
}

/** One history checked under a budget (`--one`): Porcupine's CheckResult and the check's own time. */
export interface GoOne {
  result: 'ok' | 'illegal' | 'unknown';
  wallMs: number;
  cpuMs: number;
}

export type GoPorcupine =
  | { run: () => GoPass; checkOne: (etcdLog: string, budgetMs: number) => GoOne; version: string }
  | { skipped: string };

function sh(cmd: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv) {
  return spawnSync(cmd, args, { cwd, env: env ?? process.env, encoding: 'utf8', maxBuffer: 1 << 24 });
}

/** Builds the harness, or says why it cannot (no Go, no Porcupine source). */
export function goPorcupine(fixturesDir = ''): GoPorcupine {
  const go = sh('go', ['version']);
  if (go.error || go.status !== 0)
    return { skipped: 'Go is not installed (Debian: apt-get install golang-go)' };
  const src = process.env.FAULTLINE_PORCUPINE_SRC;
  if (!src)
    return {
      skipped:
        "Porcupine's source is absent: set FAULTLINE_PORCUPINE_SRC to a checkout or git directory of github.com/anishathalye/porcupine",
    };
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-go-'));
  let porcupine = src;
  if (!existsSync(join(src, 'go.mod'))) {
    // A git directory (bare or not): its HEAD, unpacked.
    porcupine = join(dir, 'porcupine');
    mkdirSync(porcupine);
    const archive = spawnSync(
      'sh',
      ['-c', 'git --git-dir="$1" archive HEAD | tar -x -C "$2"', 'sh', src, porcupine],
      {
        encoding: 'utf8',
      },
    );
    if (archive.status !== 0 || !existsSync(join(porcupine, 'go.mod')))
      return {
        skipped: `FAULTLINE_PORCUPINE_SRC=${src} is neither a Porcupine checkout nor a git directory of one`,
      };
  }
  const harness = join(dir, 'harness');
  cpSync(fileURLToPath(new URL('./go-porcupine/', import.meta.url)), harness, { recursive: true });
  const env = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', GOCACHE: join(dir, 'cache') };
  const edit = sh(
    'go',
    ['mod', 'edit', '-replace', `github.com/anishathalye/porcupine=${porcupine}`],
    harness,
    env,
  );
  if (edit.status !== 0) throw new Error(`go mod edit failed: ${edit.stderr}`);
  const bin = join(dir, 'go-porcupine');
  const build = sh('go', ['build', '-o', bin, '.'], harness, env);
  if (build.status !== 0) throw new Error(`building the Go Porcupine harness failed: ${build.stderr}`);
  return {
    version: go.stdout.trim(),
    run: () => {
      const out = sh(bin, [fixturesDir, '1']);
      if (out.status !== 0) throw new Error(`Go Porcupine harness failed: ${out.stderr}`);
      const r = JSON.parse(out.stdout) as {
        passes: { wallMs: number; cpuMs: number }[];
        mismatches: string[];
      };
      const p = r.passes[0];
      if (!p) throw new Error('Go Porcupine harness: no pass reported');
      return { wallMs: p.wallMs, cpuMs: p.cpuMs, mismatches: r.mismatches };
    },
    checkOne: (etcdLog, budgetMs) => {
      const out = sh(bin, ['--one', etcdLog, String(budgetMs)]);
      if (out.status !== 0) throw new Error(`Go Porcupine harness failed on ${etcdLog}: ${out.stderr}`);
      return JSON.parse(out.stdout) as GoOne;
    },
  };
}
