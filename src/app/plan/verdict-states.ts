/** The 10 verdict states of spec §2, spelled exactly, and the 5 session verdicts. */
export const VERDICTS = [
  'PASS-smoke',
  'PASS-hardening',
  'FAIL-reproducible',
  'FAIL-nondeterministic',
  'INCONCLUSIVE-env',
  'INCONCLUSIVE-oracle-too-weak',
  'INCONCLUSIVE-fault-not-proven',
  'PARTIAL-surface',
  'PARTIAL-model',
  'NOT-RUN',
] as const;
export type Verdict = (typeof VERDICTS)[number];

export const SESSION_VERDICTS = ['FAIL', 'DONE', 'DONE_WITH_CONCERNS', 'INCONCLUSIVE', 'BLOCKED'] as const;
export type SessionVerdict = (typeof SESSION_VERDICTS)[number];

export type TierMet = 'smoke' | 'hardening' | 'release' | null;

export const isPass = (v: Verdict): boolean => v.startsWith('PASS-');
export const isFail = (v: Verdict): boolean => v.startsWith('FAIL-');
export const isPartial = (v: Verdict): boolean => v.startsWith('PARTIAL-');
export const isInconclusive = (v: Verdict): boolean => v.startsWith('INCONCLUSIVE-');
