import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import test from 'ava';
import type { Command } from 'commander';
import { PACKET_BEHAVIOURS } from '../../nemeses/params.ts';
import { nemeses } from '../../nemeses/registry.ts';
import { topologies } from '../../nemeses/topology.ts';
import { buildProgram } from '../../src/app/cli/main.ts';

/**
 * Every `faultline …` command shown in README.md and docs/ (fenced blocks and inline code) is read
 * against the command definitions `--help` prints: its subcommand must exist and every `--flag` it
 * passes must be one that command (or the global options) accepts, so a documented flag that does not
 * exist fails here. docs/cli.md is generated from the same definitions and is skipped.
 */
const root = resolve(new URL('../..', import.meta.url).pathname);
const docs = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'cli.md')
    .map((f) => join(root, 'docs', f)),
];

interface Example {
  where: string;
  words: string[];
}

/** `faultline` invocations in a document: in fenced blocks (with `\` continuations) and in inline code. */
function examples(file: string): Example[] {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const out: Example[] = [];
  const take = (line: string, n: number) => {
    for (const m of line.matchAll(/(?:^|[\s;&|(`$])(?:npx\s+)?faultline\s+([^`;&|)#]*)/g)) {
      const words = (m[1] ?? '').trim().split(/\s+/).filter(Boolean);
      if (words.length === 0 || !/^[a-z-]+$/.test(words[0] as string)) continue;
      out.push({ where: `${file.slice(root.length + 1)}:${n}`, words });
    }
  };
  let fence: string | null = null;
  let info = '';
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string;
    const f = line.match(/^\s*(```+|~~~+)(\S*)/);
    if (f) {
      if (fence === null) {
        fence = f[1] as string;
        info = f[2] ?? '';
      } else if (line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence !== null) {
      // Plans, YAML, JSON, TypeScript and output listings are not commands.
      if (!/^(sh|bash|shell|console|)$/.test(info)) continue;
      const start = i + 1;
      while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]}`;
      // A comment is prose ("# sweep … anything faultline left behind").
      take(line.replace(/^\s*\$\s+/, '').replace(/(^|\s)#.*$/, ''), start);
    } else
      for (const code of line.matchAll(/(?<![`\w])`((?:npx\s+)?faultline [^`]*)`/g))
        take(code[1] as string, i + 1);
  }
  return out;
}

/** The examples each command prints after its `--help` (string literals in src/app/cli/). */
function helpExamples(): Example[] {
  const dir = join(root, 'src', 'app', 'cli');
  const files = [
    join(dir, 'main.ts'),
    ...readdirSync(join(dir, 'commands')).map((f) => join(dir, 'commands', f)),
  ];
  const out: Example[] = [];
  for (const file of files.filter((f) => f.endsWith('.ts'))) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, n) => {
        for (const m of line.matchAll(/'faultline ([^'#]*)/g)) {
          const words = (m[1] ?? '').trim().split(/\s+/).filter(Boolean);
          if (words.length > 0 && /^[a-z-]+$/.test(words[0] as string))
            out.push({ where: `${file.slice(root.length + 1)}:${n + 1}`, words });
        }
      });
  }
  return out;
}

function longFlags(cmd: Command): Set<string> {
  return new Set(cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)));
}

test('every faultline command in README, docs and --help examples names a real command and only flags it accepts', async (t) => {
  const program = await buildProgram();
  const global = longFlags(program);
  for (const f of ['--help', '-h', '--version', '-V']) global.add(f);
  const problems: string[] = [];
  let checked = 0;
  for (const list of [...docs.map(examples), helpExamples()]) {
    for (const ex of list) {
      let cmd: Command = program;
      const path = ['faultline'];
      let i = 0;
      for (; i < ex.words.length; i++) {
        const w = ex.words[i] as string;
        const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
        if (!sub) break;
        cmd = sub;
        path.push(w);
      }
      if (cmd === program && !global.has(ex.words[0] as string)) {
        problems.push(`${ex.where}: "faultline ${ex.words[0]}" is not a command`);
        continue;
      }
      if (cmd.commands.length > 0 && i < ex.words.length && !String(ex.words[i]).startsWith('-')) {
        problems.push(`${ex.where}: "${path.join(' ')} ${ex.words[i]}" is not a command`);
        continue;
      }
      const own = longFlags(cmd);
      for (const w of ex.words.slice(i)) {
        const flag = w.match(/^(--?[A-Za-z][\w-]*)/)?.[1];
        if (!flag || (!flag.startsWith('--') && flag.length > 2)) continue;
        if (!own.has(flag) && !global.has(flag))
          problems.push(`${ex.where}: ${path.join(' ')} has no option ${flag}`);
      }
      checked++;
    }
  }
  t.deepEqual(problems, []);
  t.true(checked > 50, `${checked} examples read`);
});

test('docs/plans.md names every fault kind, action, packet behaviour and partition topology a plan accepts', (t) => {
  const text = readFileSync(join(root, 'docs', 'plans.md'), 'utf8');
  const missing: string[] = [];
  const named = (w: string) => text.includes(`\`${w}\``);
  for (const kind of nemeses.names()) {
    if (!named(kind)) missing.push(`kind ${kind}`);
    for (const a of nemeses.get(kind)?.actions ?? [])
      if (a.name !== 'start' && !named(a.name)) missing.push(`${kind} action ${a.name}`);
  }
  for (const b of PACKET_BEHAVIOURS) if (!named(b)) missing.push(`packet behaviour ${b}`);
  for (const topo of topologies.names()) if (!named(topo)) missing.push(`partition topology ${topo}`);
  t.deepEqual(missing, []);
});
