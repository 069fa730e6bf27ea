import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { discoverToolbox } from '../../src/app/run/toolbox.ts';

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'fl-toolbox-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test('finds the spec paths, fault-related make targets and CI fault wiring', (t) => {
  const root = repo({
    'scripts/deploy.sh': 'echo hi',
    'tests/chaos/partition_test.go': 'package chaos',
    'docs/runbooks/failover.md': '# failover',
    Makefile:
      'build:\n\tgo build\nchaos-test:\n\tgo test ./tests/chaos\nsoak: build\n\t./bin/run --iptables\n',
    '.github/workflows/nightly.yml': 'steps:\n  - run: sudo tc qdisc add dev eth0 root netem delay 100ms\n',
    '.github/workflows/lint.yml': 'steps:\n  - run: make lint\n',
  });
  const found = discoverToolbox(root);
  const byPath = new Map(found.map((e) => [e.path, e]));
  t.truthy(byPath.get('scripts/'));
  t.true(byPath.get('tests/chaos/')?.harness);
  t.truthy(byPath.get('docs/runbooks/'));
  t.regex(byPath.get('Makefile')?.role ?? '', /fault-related: chaos-test, soak/);
  t.true(byPath.get('.github/workflows/nightly.yml')?.harness);
  t.false(byPath.has('.github/workflows/lint.yml'));
});

test('an empty repository yields nothing', (t) => {
  t.deepEqual(discoverToolbox(repo({ 'README.md': 'x' })), []);
});
