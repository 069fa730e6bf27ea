import { basename, extname } from 'node:path';
import { type ParsedYaml, parseYamlDocument, yamlLine } from '../../core/util/yaml.ts';
import { bindingSchema, normaliseBindingInput } from './binding.ts';
import {
  fenceAt,
  heading,
  type Line,
  normKey,
  stripInline,
  type Table,
  tableRecords,
  tables,
  toLines,
} from './markdown-blocks.ts';
import { type Problem, problem } from './problem.ts';
import type { Arm, ModelBlock, PlanInput, SurfaceBlock } from './schema.ts';

/**
 * The Markdown plan format of spec §1, parsed into a PlanInput. Tolerates the documented drift of older
 * templates: `### S01: name` headings, a bare `#### §7.M`, `Nemesis:` for `Faults:`, `Skeleton: as S01`,
 * and `Exit criteria:` instead of budgets. It never throws on content: what is missing or malformed is
 * returned as a Problem for `checkPlan` to report alongside everything else.
 */

type ScenarioField =
  | 'falsifies'
  | 'closes'
  | 'technique'
  | 'workload'
  | 'faults'
  | 'oracle'
  | 'expectedVerdict'
  | 'observabilityRequired'
  | 'smokeBudget'
  | 'hardeningBudget'
  | 'releaseBudget'
  | 'exitCriteria'
  | 'targetTestFile'
  | 'skeletonLanguage'
  | 'skeleton';

type Target =
  | { block: 'scenario'; field: ScenarioField }
  | { block: 'model'; field: keyof Omit<ModelBlock, 'line'> }
  | { block: 'surface'; field: keyof Omit<SurfaceBlock, 'line'> };

/**
 * Every label and its synonyms, in one table: the spec's spelling, plus the drift aliases. A third
 * element is where the label goes under a §7.M heading instead (the older template's bare `Nemesis:`
 * there is its "Nemesis + landing evidence"; above it, the scenario's faults). Longest first so
 * prefixes do not win.
 */
const LABELS: [string, Target, Target?][] = (
  [
    ['Falsifies if it FAILs', { block: 'scenario', field: 'falsifies' }],
    ['Falsifies', { block: 'scenario', field: 'falsifies' }],
    ['Closes', { block: 'scenario', field: 'closes' }],
    ['Technique', { block: 'scenario', field: 'technique' }],
    ['Workload', { block: 'scenario', field: 'workload' }],
    ['Faults', { block: 'scenario', field: 'faults' }],
    ['Nemesis', { block: 'scenario', field: 'faults' }, { block: 'model', field: 'nemesisLandingEvidence' }],
    ['Oracle', { block: 'scenario', field: 'oracle' }],
    ['Expected verdict', { block: 'scenario', field: 'expectedVerdict' }],
    ['Observability required', { block: 'scenario', field: 'observabilityRequired' }],
    ['Smoke budget', { block: 'scenario', field: 'smokeBudget' }],
    ['Hardening budget', { block: 'scenario', field: 'hardeningBudget' }],
    ['Release budget', { block: 'scenario', field: 'releaseBudget' }],
    ['Exit criteria', { block: 'scenario', field: 'exitCriteria' }],
    ['Target test file', { block: 'scenario', field: 'targetTestFile' }],
    ['Skeleton language', { block: 'scenario', field: 'skeletonLanguage' }],
    ['Skeleton', { block: 'scenario', field: 'skeleton' }],
    ['Model under test', { block: 'model', field: 'modelUnderTest' }],
    ['Operation history', { block: 'model', field: 'operationHistory' }],
    ['Checker', { block: 'model', field: 'checker' }],
    ['Nemesis + landing evidence', { block: 'model', field: 'nemesisLandingEvidence' }],
    ['Ambiguous outcomes', { block: 'model', field: 'ambiguousOutcomes' }],
    ['Reduction plan', { block: 'model', field: 'reductionPlan' }],
    ['Surfaces', { block: 'surface', field: 'surfaces' }],
    ['Operations', { block: 'surface', field: 'operations' }],
    ['Adversarial inputs', { block: 'surface', field: 'adversarialInputs' }],
    ['Positive controls', { block: 'surface', field: 'positiveControls' }],
    ['Negative controls', { block: 'surface', field: 'negativeControls' }],
    ['Delayed / async paths', { block: 'surface', field: 'delayedAsyncPaths' }],
    ['Observability paths', { block: 'surface', field: 'observabilityPaths' }],
    ['Scenario arms', { block: 'surface', field: 'scenarioArms' }],
  ] as [string, Target, Target?][]
).sort((a, b) => b[0].length - a[0].length);

const LABEL_RES: [RegExp, Target, Target | undefined][] = LABELS.map(([label, target, underModel]) => {
  const esc = label.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replace(/\\\/ /g, '\\/ ?');
  // `- **Oracle:** x`, `- \`Oracle:\` x`, `- Oracle: x`, `**Oracle**: x`
  return [
    new RegExp(`^[*_\`]*${esc}\\s*:[*_\`]*\\s*|^[*_\`]*${esc}[*_\`]+\\s*:\\s*`, 'i'),
    target,
    underModel,
  ];
});

/** A field label at the start of a line; `inModel`: the line is under a §7.M heading. */
function matchLabel(text: string, inModel: boolean): { target: Target; value: string } | null {
  const body = text.replace(/^\s*(?:[-*+]|\d+\.)\s+/, '');
  for (const [re, target, underModel] of LABEL_RES) {
    const m = body.match(re);
    if (m) return { target: (inModel && underModel) || target, value: body.slice(m[0].length).trim() };
  }
  return null;
}

const SCENARIO_HEADING = /^(?:Scenario\s+)?(S\d+)\s*(?::|—|–|-|\.)\s*(.+)$/i;
const ARM_ID = /\b(S\d+\/[A-Za-z0-9_.-]+)/;
const MODEL_NA = /§7\.M\s*:\s*not applicable/i;
const SURFACE_NA = /§7\.M\.S\s*:\s*not applicable/i;

interface Section {
  key: string;
  title: string;
  line: number;
  lines: Line[];
}

export interface MarkdownParse {
  plan: PlanInput;
  problems: Problem[];
}

export function parseMarkdownPlan(text: string, path: string): MarkdownParse {
  const lines = toLines(text);
  const problems: Problem[] = [];
  let slug: string | null = null;
  const header: Record<string, string | null> = {};
  const sections: Section[] = [];
  let current: Section | null = null;

  for (const l of lines) {
    const h = heading(l);
    if (h?.level === 1 && slug === null) {
      const m = h.text.match(/^Test Plan:\s*(.+)$/i);
      slug = m ? stripInline(m[1]!) : null;
      if (!m) problems.push(problem(null, 'title', 'expected "# Test Plan: <slug>"', 'warning', l.n));
      continue;
    }
    if (h?.level === 2) {
      const m = h.text.match(/^§?\s*(\d+[a-z]?)[.):]?\s+(.*)$/i);
      current = m ? { key: m[1]!.toLowerCase(), title: m[2]!, line: l.n, lines: [] } : null;
      if (current) sections.push(current);
      continue;
    }
    if (current) current.lines.push(l);
    else if (!l.fenced) readHeaderKey(l.text, header);
  }
  if (slug === null) {
    slug = basename(path, extname(path));
    problems.push(problem(null, 'title', `no "# Test Plan: <slug>" heading; using "${slug}"`, 'warning', 1));
  }

  const plan: PlanInput = {
    slug,
    header: {
      date: header.date ?? null,
      planMode: header['plan mode'] ?? null,
      sut: header.sut ?? null,
      changeUnderTest: header['change under test'] ?? null,
      planAuthor: header['plan author'] ?? null,
      status: header.status ?? null,
    },
    sections: Object.fromEntries(
      sections.map((s) => [
        s.key,
        {
          title: s.title,
          body: s.lines
            .map((l) => l.text)
            .join('\n')
            .trim(),
          line: s.line,
        },
      ]),
    ),
  };
  const section = (key: string) => sections.find((s) => s.key === key);

  const claims = section('1b');
  if (claims) {
    plan.claims = recordsOf(claims, ['id', 'claim']).map(({ record, line }) => ({
      id: record.id ?? '',
      claim: record.claim ?? '',
      category: (record.category ?? '').trim(),
      source: record.source ?? '',
      inferred: record.inferred ?? '',
      line,
    }));
  }
  const missing = section('1c');
  if (missing) plan.missingClaims = recordsOf(missing, ['id']).map((r) => r.record);
  const inventory = section('3');
  if (inventory) plan.testInventory = recordsOf(inventory, ['subsystem']).map((r) => r.record);
  const matrix = section('5');
  if (matrix) {
    plan.coverageMatrix = recordsOf(matrix, ['claim', 'verdict']).map(({ record, line }) => ({
      claim: record.claim ?? '',
      hypothesis: record.hypothesis ?? '',
      existingTests: record['existing tests'] ?? '',
      verdict: record.verdict ?? '',
      gapKind: record['gap kind'] ?? '',
      recommendedScenario: record['recommended scenario'] ?? '',
      line,
    }));
  }
  const hyp = section('4');
  if (hyp) plan.hypotheses = parseHypotheses(hyp.lines);
  const env = section('6b');
  if (env) {
    plan.environment = recordsOf(env, ['requirement']).map(({ record, line }) => ({
      requirement: record.requirement ?? '',
      versionFloor: record['version floor'] ?? '',
      usedBy: (record['used by scenarios'] ?? '').match(/S\d+(?:\/[A-Za-z0-9_.-]+)?/g) ?? [],
      installHint: record['install hint'] ?? '',
      broughtUpBySut: /brought up by SUT/i.test(Object.values(record).join(' ')),
      line,
    }));
  }
  const scen = section('7');
  if (scen) plan.scenarios = parseScenarios(scen.lines, problems);
  const adequacy = section('7b');
  if (adequacy) {
    plan.adequacy = recordsOf(adequacy, ['claim']).map(({ record }) => ({
      claim: record.claim ?? '',
      threatModel: record['threat model how it could fail'] ?? record['threat model'] ?? '',
      scenarios: record['scenarios that exercise the threats'] ?? record.scenarios ?? '',
      whySufficient: record['why these are sufficient'] ?? '',
    }));
  }
  const residual = section('7c');
  if (residual) plan.residualUncertainty = recordsOf(residual, ['uncertainty']).map((r) => r.record);
  const conf = section('7d');
  if (conf) {
    const aspectTable = tables(conf.lines).find((t) => t.headers.map(normKey).includes('aspect'));
    plan.confidence = {
      statement: conf.lines
        .filter((l) => !l.fenced && !l.text.trim().startsWith('|') && !/All aspects rated/i.test(l.text))
        .map((l) => l.text)
        .join('\n')
        .trim(),
      aspects: aspectTable
        ? tableRecords(aspectTable).map(({ record }) => ({
            claim: record.claim ?? '',
            aspect: record.aspect ?? '',
            confidence: (record.confidence ?? '').replace(/`/g, ''),
            reason: record.reason ?? '',
          }))
        : [],
      allHigh: conf.lines.some((l) => /All aspects rated `?high`?/i.test(l.text)),
    };
  }
  const notCovered = section('8');
  if (notCovered) plan.notCovered = plan.sections?.['8']?.body ?? '';
  const open = section('9');
  if (open) {
    plan.openQuestions = open.lines
      .filter((l) => !l.fenced && /^\s*[-*]\s+/.test(l.text))
      .map((l) => l.text.replace(/^\s*[-*]\s+/, '').trim());
  }
  return { plan, problems };
}

function readHeaderKey(text: string, header: Record<string, string | null>): void {
  const m = text.match(/^\s*(?:[-*]\s+)?\*\*([^*]+?):?\*\*:?\s*(.*)$/);
  if (!m) return;
  header[m[1]!.trim().toLowerCase()] = m[2]!.trim() || null;
}

/** Rows of the first table in a section whose headers include all `required` keys. */
function recordsOf(s: Section, required: string[]) {
  const t: Table | undefined = tables(s.lines).find((tb) => {
    const keys = tb.headers.map(normKey);
    return required.every((r) => keys.includes(r));
  });
  return t ? tableRecords(t).filter(({ record }) => Object.values(record).some((v) => v !== '')) : [];
}

function parseHypotheses(lines: Line[]): PlanInput['hypotheses'] {
  const out: NonNullable<PlanInput['hypotheses']> = [];
  let cur: NonNullable<PlanInput['hypotheses']>[number] | null = null;
  for (const l of lines) {
    if (l.fenced) continue;
    const m = l.text.match(
      /^\s*(?:[-*]\s+|#{3,4}\s+)?(H\d+)[.:)]\s*(?:\*\*(.+?)\*\*)?\s*(?:[—–-]+\s*)?(.*)$/,
    );
    if (m) {
      cur = {
        id: m[1]!,
        title: (m[2] ?? m[3] ?? '').trim(),
        statement: m[2] ? m[3]!.trim() : '',
        couldFalsify: [],
        line: l.n,
      };
      out.push(cur);
      continue;
    }
    if (!cur) continue;
    const sub = l.text.replace(/^\s*[-*]\s+/, '').replace(/\*\*/g, '');
    const f = sub.match(/^Could falsify:\s*(.*)$/i);
    if (f) cur.couldFalsify = f[1]!.match(/\bC\d+\b/g) ?? [];
    const s = sub.match(/^Suspected because:\s*(.*)$/i);
    if (s) cur.suspectedBecause = s[1]!.trim();
    const ss = sub.match(/^Subsystem:\s*(.*)$/i);
    if (ss) cur.subsystem = ss[1]!.trim();
  }
  return out;
}

type ScenarioInput = NonNullable<PlanInput['scenarios']>[number];

function emptyModel(line: number): ModelBlock {
  return {
    modelUnderTest: null,
    operationHistory: null,
    checker: null,
    nemesisLandingEvidence: null,
    ambiguousOutcomes: null,
    reductionPlan: null,
    line,
  };
}

function emptySurface(line: number): SurfaceBlock {
  return {
    surfaces: null,
    operations: null,
    adversarialInputs: null,
    positiveControls: null,
    negativeControls: null,
    delayedAsyncPaths: null,
    observabilityPaths: null,
    scenarioArms: null,
    line,
  };
}

function parseScenarios(lines: Line[], problems: Problem[]): ScenarioInput[] {
  const chunks: { id: string; name: string; line: number; body: Line[] }[] = [];
  for (const l of lines) {
    const h = heading(l);
    if (h?.level === 3) {
      const m = stripInline(h.text).match(SCENARIO_HEADING);
      if (m) {
        chunks.push({ id: m[1]!, name: stripInline(m[2]!), line: l.n, body: [] });
        continue;
      }
    }
    chunks.at(-1)?.body.push(l);
  }
  return chunks.map((c) => parseScenario(c, problems));
}

function parseScenario(
  c: { id: string; name: string; line: number; body: Line[] },
  problems: Problem[],
): ScenarioInput {
  const fieldLines: Record<string, number> = {};
  const arms: Arm[] = [];
  const s: ScenarioInput = { id: c.id, name: c.name, line: c.line, fieldLines, arms };
  const values: Partial<Record<ScenarioField, string>> = {};
  let model: ModelBlock | 'not applicable' | null = null;
  let surface: SurfaceBlock | 'not applicable' | null = null;
  /** Where model/oracle fields go right now: the scenario, or an arm. */
  let arm: Arm | null = null;
  let armLevel = 99;
  /** The field a continuation line appends to. */
  let open: { set: (v: string) => void; get: () => string } | null = null;
  /** The last field read was `Skeleton:` with no value: the next fenced block is the skeleton. */
  let skeletonOpen = false;
  /** Under a §7.M heading (until the next heading that is not one). */
  let inModel = false;

  const armFor = (id: string, line: number): Arm => {
    let a = arms.find((x) => x.id === id);
    if (!a) {
      a = { id, surface: id.split('/')[1]!, oracle: null, expectedVerdict: null, model: null, line };
      arms.push(a);
    }
    return a;
  };

  for (let i = 0; i < c.body.length; i++) {
    const l = c.body[i]!;
    const fence = fenceAt(c.body, i);
    if (fence) {
      if (fence.info === 'faultline') {
        if (s.binding !== undefined) {
          problems.push(problem(c.id, 'binding', 'more than one ```faultline block', 'error', fence.line));
        } else {
          s.binding = readBinding(c.id, fence.body, fence.line, problems);
          fieldLines.binding = fence.line;
        }
      } else if (skeletonOpen && values.skeleton === '') {
        values.skeleton = fence.body;
      }
      skeletonOpen = false;
      open = null;
      i = fence.end - 1;
      continue;
    }
    const h = heading(l);
    if (h) {
      open = null;
      const t = stripInline(h.text);
      const armId = t.match(ARM_ID)?.[1];
      inModel = /§7\.M\b(?!\.S)/.test(t);
      if (/§7\.M\.S\b/.test(t)) {
        arm = null;
        if (surface === null || surface === 'not applicable') surface = emptySurface(l.n);
      } else if (armId) {
        arm = armFor(armId, l.n);
        armLevel = h.level;
        if (/§7\.M\b/.test(t)) arm.model ??= emptyModel(l.n);
      } else if (/§7\.M\b/.test(t)) {
        if (arm && h.level <= armLevel) arm = null;
        if (arm) arm.model ??= emptyModel(l.n);
        else if (model === null || model === 'not applicable') model = emptyModel(l.n);
      } else if (arm && h.level <= armLevel) arm = null;
      continue;
    }
    if (SURFACE_NA.test(l.text)) {
      if (surface === null) surface = 'not applicable';
      open = null;
      continue;
    }
    if (MODEL_NA.test(l.text)) {
      if (model === null) model = 'not applicable';
      open = null;
      continue;
    }
    const lab = matchLabel(l.text, inModel);
    const indented = /^\s{2,}\S/.test(l.text) || /^\t/.test(l.text);
    if (lab && !(indented && open)) {
      const { target, value } = lab;
      skeletonOpen = target.block === 'scenario' && target.field === 'skeleton' && value === '';
      if (target.block === 'scenario') {
        if (target.field === 'oracle' && arm) {
          arm.oracle = value;
          open = { set: (v) => (arm!.oracle = v), get: () => arm!.oracle ?? '' };
          continue;
        }
        if (target.field === 'expectedVerdict' && arm) {
          arm.expectedVerdict = value;
          open = null;
          continue;
        }
        const f = target.field;
        if (values[f] === undefined) {
          values[f] = value;
          fieldLines[f] = l.n;
        }
        open = { set: (v) => (values[f] = v), get: () => values[f] ?? '' };
      } else if (target.block === 'model') {
        let block: ModelBlock;
        if (arm) block = arm.model ??= emptyModel(l.n);
        else {
          if (model === null || model === 'not applicable') model = emptyModel(l.n);
          block = model;
        }
        const f = target.field;
        block[f] = value;
        open = { set: (v) => (block[f] = v), get: () => block[f] ?? '' };
      } else {
        if (surface === null || surface === 'not applicable') surface = emptySurface(l.n);
        const block = surface;
        const f = target.field;
        block[f] = value;
        open = { set: (v) => (block[f] = v), get: () => block[f] ?? '' };
        if (f === 'scenarioArms')
          for (const id of value.match(new RegExp(ARM_ID, 'g')) ?? []) armFor(id, l.n);
      }
      continue;
    }
    if (open && l.text.trim() !== '' && (indented || !/^\s*[-*+]\s/.test(l.text))) {
      const cont = l.text.trim();
      const prev = open.get();
      open.set(prev ? `${prev}\n${cont}` : cont);
      if (/Scenario arms/i.test(cont) || ARM_ID.test(cont)) {
        for (const id of cont.match(new RegExp(ARM_ID, 'g')) ?? []) {
          if (surface !== null && surface !== 'not applicable' && open.get() === surface.scenarioArms) {
            armFor(id, l.n);
          }
        }
      }
      continue;
    }
    if (l.text.trim() === '') continue;
    open = null;
  }

  for (const f of Object.keys(values) as ScenarioField[]) {
    const v = values[f]!;
    if (f === 'falsifies') s.falsifies = v.match(/\bC\d+\b/g) ?? [];
    else if (f === 'closes') s.closes = v.match(/\bH\d+\b/g) ?? [];
    else if (f === 'skeleton') {
      const as = v.match(/^as\s+(S\d+)\b/i);
      if (as) s.skeletonAs = as[1]!;
      else s.skeleton = v === '' ? null : v;
    } else s[f] = v;
  }
  s.model = model;
  s.surface = surface;
  return s;
}

function readBinding(id: string, body: string, line: number, problems: Problem[]): unknown {
  let parsed: ParsedYaml;
  try {
    parsed = parseYamlDocument(body, 'faultline block', line);
  } catch (err) {
    problems.push(
      problem(id, 'binding', `faultline block is not YAML: ${(err as Error).message}`, 'error', line),
    );
    return null;
  }
  const r = bindingSchema.safeParse(normaliseBindingInput(parsed.value));
  if (!r.success) {
    for (const issue of r.error.issues) {
      const field = ['binding', ...issue.path.map(String)].join('.');
      problems.push(problem(id, field, issue.message, 'error', yamlLine(parsed, issue.path) ?? line));
    }
    return null;
  }
  return r.data;
}
