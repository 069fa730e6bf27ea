import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Toolbox discovery (spec §7 item 2): before any scenario runs, scan the SUT repository for the tools,
 * harnesses and runbooks it already has, so the session log can list them and the operator can reuse
 * them instead of rebuilding what exists.
 */
export interface ToolboxEntry {
  /** Path relative to the SUT repository root. */
  path: string;
  role: string;
  /** True for an existing test harness (chaos / stability / integration suites, Jepsen projects). */
  harness: boolean;
}

const DIRS: ReadonlyArray<{ path: string; role: string; harness: boolean }> = [
  { path: 'tools', role: 'project tools', harness: false },
  { path: 'scripts', role: 'project scripts', harness: false },
  { path: 'bin', role: 'project executables', harness: false },
  { path: 'tests/integration', role: 'integration tests', harness: true },
  { path: 'tests/stability', role: 'stability tests', harness: true },
  { path: 'tests/chaos', role: 'chaos tests', harness: true },
  { path: 'test/integration', role: 'integration tests', harness: true },
  { path: 'jepsen', role: 'Jepsen test project', harness: true },
  { path: 'docs/runbooks', role: 'runbooks', harness: false },
  { path: 'docs/testing', role: 'testing docs', harness: false },
  { path: 'docs/testing-plans', role: 'test plans', harness: false },
];

const FILES: ReadonlyArray<{ path: string; role: string }> = [
  { path: 'docs/stability-test-plan.md', role: 'stability test plan' },
  { path: 'Makefile', role: 'make targets' },
  { path: 'justfile', role: 'just recipes' },
  { path: 'Justfile', role: 'just recipes' },
  { path: '.cargo/config.toml', role: 'cargo aliases (xtask)' },
];

/** Words that mark a build target or CI step as fault wiring worth reusing. */
const FAULT_WORDS =
  /\b(chaos|jepsen|nemesis|partition|iptables|netem|toxiproxy|faketime|fault|failpoint|stability|soak)\b/i;

const CI_FILES = ['.github/workflows', '.gitlab-ci.yml', '.circleci/config.yml', 'Jenkinsfile', '.buildkite'];

export function discoverToolbox(repo: string): ToolboxEntry[] {
  const found: ToolboxEntry[] = [];
  for (const d of DIRS) {
    const full = join(repo, d.path);
    if (isDir(full)) {
      const count = countFiles(full, 2000);
      found.push({
        path: `${d.path}/`,
        role: `${d.role} (${count} file${count === 1 ? '' : 's'})`,
        harness: d.harness,
      });
    }
  }
  for (const f of FILES) {
    const full = join(repo, f.path);
    if (!existsSync(full) || isDir(full)) continue;
    const targets = faultTargets(readFileSync(full, 'utf8'));
    found.push({
      path: f.path,
      role: targets.length ? `${f.role}; fault-related: ${targets.join(', ')}` : f.role,
      harness: targets.length > 0,
    });
  }
  if (isDir(join(repo, 'xtask')))
    found.push({ path: 'xtask/', role: 'cargo xtask commands', harness: false });
  for (const ci of CI_FILES) {
    const full = join(repo, ci);
    if (!existsSync(full)) continue;
    for (const file of isDir(full) ? listFiles(full, 200) : [full]) {
      const text = readFileSync(file, 'utf8');
      if (FAULT_WORDS.test(text)) {
        found.push({ path: relative(repo, file), role: 'CI file with fault wiring', harness: true });
      }
    }
  }
  return found;
}

/** Make/just targets whose name or recipe mentions fault injection. */
function faultTargets(text: string): string[] {
  const targets: string[] = [];
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const head = /^([A-Za-z0-9_.-]+)\s*:(?!=)/.exec(line);
    if (head) {
      current = head[1];
      if (current && FAULT_WORDS.test(current)) targets.push(current);
    } else if (current && /^\s/.test(line) && FAULT_WORDS.test(line) && !targets.includes(current)) {
      targets.push(current);
    }
  }
  return targets;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function listFiles(dir: string, limit: number): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length && out.length < limit) {
    const d = stack.pop()!;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === '.git') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) out.push(p);
    }
  }
  return out;
}

function countFiles(dir: string, limit: number): number {
  return listFiles(dir, limit).length;
}
