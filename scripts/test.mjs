#!/usr/bin/env node
// Runs the ava suite with the TAP reporter, streams it, and closes with the line CI reads:
// "N passed, N failed" (ava's own reporter prints no such line). Extra arguments go to ava.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const args = ['ava', '--tap', ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' } });
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const rl = createInterface({ input: child.stdout });
rl.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  if (/^ok \d+/.test(line)) {
    if (/# SKIP|# TODO/i.test(line)) skipped++;
    else passed++;
  } else if (/^not ok \d+/.test(line)) {
    if (/# TODO/i.test(line)) skipped++;
    else {
      failed++;
      failures.push(line);
    }
  }
});
child.on('close', (code) => {
  if (failures.length) process.stdout.write(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
  // A runner crash (uncaught exception in a test file) shows as a non-zero exit with no "not ok" line.
  if (code !== 0 && failed === 0) failed = 1;
  process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  process.exit(code ?? 1);
});
