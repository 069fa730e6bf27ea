import test from 'ava';
import { linearizabilityOptionsSchema } from '../../checkers/linearizability/options.ts';

/** The hand-written options check accepts what the checker understands and names every bad field. */
const parse = (v: unknown) => linearizabilityOptionsSchema.safeParse(v);
const firstIssue = (v: unknown) => {
  const r = parse(v);
  return r.success ? undefined : r.error.issues[0];
};

test('valid options come back as data', (t) => {
  const full = {
    model: 'cas-register',
    initialValue: 0,
    nilRead: 'value',
    failedCas: 'mismatch',
    timeoutMs: 0,
    htmlPath: 'x.html',
    htmlBudgetMs: 10,
    workers: 2,
  };
  t.deepEqual(parse(full), { success: true, data: full });
  t.deepEqual(parse({ model: 'kv', timeoutMs: undefined }), {
    success: true,
    data: { model: 'kv', timeoutMs: undefined },
  });
});

test('each bad field is an issue at its path', (t) => {
  t.deepEqual(firstIssue({})?.path, ['model']);
  t.regex(firstIssue({ model: 'mongo' })?.message ?? '', /unknown model; known: .*cas-register/);
  t.deepEqual(firstIssue({ model: 'kv', nilRead: 'maybe' })?.path, ['nilRead']);
  t.deepEqual(firstIssue({ model: 'kv', failedCas: 1 })?.path, ['failedCas']);
  for (const key of ['timeoutMs', 'htmlBudgetMs', 'workers']) {
    for (const bad of [-1, 1.5, '10', Number.NaN])
      t.deepEqual(firstIssue({ model: 'kv', [key]: bad })?.path, [key]);
  }
  t.deepEqual(firstIssue({ model: 'kv', htmlPath: '' })?.path, ['htmlPath']);
  t.regex(firstIssue({ model: 'kv', extra: 1 })?.message ?? '', /unrecognized key: "extra"/);
  t.regex(firstIssue(null)?.message ?? '', /expected an object/);
  t.regex(firstIssue([])?.message ?? '', /expected an object/);
});
