import type { EvidenceSignal, FaultEvidence } from './types.ts';

/**
 * The one summary of landing signals into a fault's evidence: did it land (every judged signal landed),
 * and if not, why, in the words reports and tests compare (`not landed: n1 tc -s qdisc=…; …`). Every
 * nemesis measures its own signals; this is the verdict it draws from them, for inject (`during`) and
 * after heal (`after`) alike.
 */
export interface LandingSummary {
  /** How a signal that did not land is shown in the reason (see `shownAt`). */
  show?: (s: EvidenceSignal) => string;
  /** The reason's opening words before the signals that did not land. Default `not landed`. */
  prefix?: string;
  /** A fixed reason instead of the list of signals that did not land. */
  reason?: string;
  /** The signals the verdict rests on (default all); the rest are informative. */
  judged?: readonly EvidenceSignal[];
  /** No judged signal at all counts as landed (nothing was expected to move). Default false. */
  noneLands?: boolean;
  /** Something besides the signals the fault needs to have landed (rules in force). Default true. */
  holds?: boolean;
  /** Already known reasons it did not land: they are the reason, in place of the signal list. */
  failures?: readonly string[];
  /** Said after the reason, and on its own when the fault landed (which substitution was used). */
  note?: string;
}

export function landingEvidence(signals: EvidenceSignal[], o: LandingSummary): FaultEvidence {
  const judged = o.judged ?? signals;
  const failures = o.failures ?? [];
  const landed =
    (judged.length > 0 || o.noneLands === true) &&
    judged.every((s) => s.landed) &&
    o.holds !== false &&
    failures.length === 0;
  const why =
    failures.length > 0
      ? failures.join('; ')
      : landed
        ? ''
        : (o.reason ?? notLandedReason(judged, o.show ?? shownAt('during'), o.prefix));
  const reason = [why, o.note ?? ''].filter((r) => r !== '').join('; ');
  return { landed, ...(reason !== '' && { reason }), signals };
}

/** `not landed: a; b`: the signals that did not land, each as `show` puts it. */
export function notLandedReason(
  signals: readonly EvidenceSignal[],
  show: (s: EvidenceSignal) => string,
  prefix = 'not landed',
): string {
  return `${prefix}: ${signals
    .filter((s) => !s.landed)
    .map(show)
    .join('; ')}`;
}

/** A signal as `node signal=value`, the value it had during the fault or after heal (as JSON if asked). */
export function shownAt(when: 'during' | 'after', json = false): (s: EvidenceSignal) => string {
  return (s) => `${s.node} ${s.signal}=${json ? JSON.stringify(s[when]) : String(s[when])}`;
}
