import { spawn } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';

const bin = join(import.meta.dirname, '../../bin/faultline.js');

/** Run the CLI with its stdout read once and then closed, as `faultline … | head -1` does. */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('output into a closed pipe (`| head -1`) ends quietly with the command’s own exit code', async (t) => {
  // --help is long enough (several KiB) to still be writing when the reader goes away.
  const r = await runIntoClosedPipe(['--help']);
  t.is(r.code, 0);
  t.notRegex(r.stderr, /EPIPE|Unhandled 'error' event|at .*\.js:\d+/);
});
