#!/usr/bin/env node
// Prints the longest functions (declarations, methods, arrows, function expressions) in src/, nemeses/
// and checkers/, in lines from the first to the last line of the function. `--max N` exits 1 when one is
// longer than N (nested functions count inside their parent too). Usage: node scripts/function-lengths.mjs [--top 15] [--max 150]
// `functionLengths()` is also what scripts/shape.mjs counts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../', import.meta.url));

function files(dir) {
  const out = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) out.push(...files(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Every function in src/, nemeses/ and checkers/ with its length in lines, longest first. */
export function functionLengths() {
const rows = [];
for (const file of ['src', 'nemeses', 'checkers'].flatMap(files)) {
  const text = readFileSync(join(root, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name =
        node.name?.getText(sf) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(sf) : '(anonymous)');
      rows.push({ file: relative(root, join(root, file)), line: start + 1, name, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
rows.sort((a, b) => b.lines - a.lines);
return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const top = arg('--top', 15);
const max = arg('--max', Number.POSITIVE_INFINITY);
const rows = functionLengths();
for (const r of rows.slice(0, top)) console.log(`${String(r.lines).padStart(5)}  ${r.file}:${r.line}  ${r.name}`);
const over = rows.filter((r) => r.lines > max);
if (over.length > 0) {
  console.log(`${over.length} function(s) over ${max} lines`);
  process.exit(1);
}
}
