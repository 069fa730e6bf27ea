import { shellQuote } from '../../src/core/control/quote.ts';

/**
 * iptables command builders. faultline's rules live only in its own chains, FAULTLINE (jumped to from
 * INPUT) and FAULTLINE-OUT (jumped to from OUTPUT); no other rule or chain is ever flushed or edited.
 * The jumps are inserted at position 1 so the DROPs run before any `ESTABLISHED,RELATED -j ACCEPT` rule:
 * established connections are cut too, not only new ones (jepsen#102). Every rule carries a comment
 * naming its fault id, so one fault heals without disturbing another.
 */
export const IN_CHAIN = 'FAULTLINE';
export const OUT_CHAIN = 'FAULTLINE-OUT';
const HOOKS = [
  [IN_CHAIN, 'INPUT'],
  [OUT_CHAIN, 'OUTPUT'],
] as const;

export function iptablesBin(address: string): string {
  return address.includes(':') ? 'ip6tables' : 'iptables';
}

export function faultComment(id: string): string {
  return `faultline:${id}`;
}

type Hook = (typeof HOOKS)[number];

/**
 * Create the chains (if missing) and make sure each is jumped to first from its hook. Idempotent. Only
 * the hooks a fault needs are touched (a partition needs INPUT only), which keeps inject fast.
 */
export function ensureChainsScript(
  bins: readonly string[] = ['iptables'],
  hooks: readonly Hook[] = HOOKS,
): string {
  const lines: string[] = [];
  for (const bin of bins)
    for (const [chain, hook] of hooks) {
      lines.push(`${bin} -w -N ${chain} 2>/dev/null || true`);
      // Keep exactly one jump, at position 1: delete any others, then insert if rule 1 is not ours.
      lines.push(
        `first=$(${bin} -w -S ${hook} 2>/dev/null | sed -n 2p); if [ "$first" != "-A ${hook} -j ${chain}" ]; then while ${bin} -w -D ${hook} -j ${chain} 2>/dev/null; do :; done; ${bin} -w -I ${hook} 1 -j ${chain}; fi`,
      );
    }
  return lines.join('\n');
}

export interface DropRule {
  /** Drop packets arriving from this address (INPUT side). */
  source?: string;
  /** Drop packets leaving for this address (OUTPUT side). */
  destination?: string;
  /** iptables `statistic` match: drop only this fraction (the netem-loss substitute). */
  probability?: number;
}

/** The argument list of one rule (without -A/-D), comment included. */
export function dropRuleArgs(rule: DropRule, id: string): string[] {
  const args: string[] = [];
  if (rule.source) args.push('-s', rule.source);
  if (rule.destination) args.push('-d', rule.destination);
  if (rule.probability !== undefined) {
    if (typeof rule.probability !== 'number' || !(rule.probability > 0 && rule.probability <= 1))
      throw new RangeError(`loss probability must be in (0, 1], got ${rule.probability}`);
    args.push('-m', 'statistic', '--mode', 'random', '--probability', String(rule.probability));
  }
  args.push('-m', 'comment', '--comment', faultComment(id), '-j', 'DROP');
  return args;
}

function chainFor(rule: DropRule): string {
  return rule.destination && !rule.source ? OUT_CHAIN : IN_CHAIN;
}

function addressOf(rule: DropRule): string {
  return rule.source ?? rule.destination ?? '';
}

/**
 * Append a fault's rules: chains ensured, then every rule in one `iptables-restore --noflush` call per
 * address family (appends only, no chain declarations, so nothing else in the table is flushed).
 */
export function addRulesScript(rules: readonly DropRule[], id: string): string {
  const lines: string[] = [];
  for (const bin of ['iptables', 'ip6tables']) {
    const mine = rules.filter((r) => iptablesBin(addressOf(r)) === bin);
    if (mine.length === 0) continue;
    const hooks = HOOKS.filter(([chain]) => mine.some((r) => chainFor(r) === chain));
    lines.push(ensureChainsScript([bin], hooks));
    const body = mine.map((r) => `-A ${chainFor(r)} ${dropRuleArgs(r, id).map(shellQuote).join(' ')}`);
    lines.push(
      `${bin}-restore -w --noflush <<'FAULTLINE_RULES'\n*filter\n${body.join('\n')}\nCOMMIT\nFAULTLINE_RULES`,
    );
  }
  return lines.join('\n');
}

/** Delete every rule of one fault (matched by its comment) from faultline's chains; nothing else. */
export function removeFaultRulesScript(id: string): string {
  const comment = faultComment(id);
  const lines: string[] = [];
  for (const bin of ['iptables', 'ip6tables'])
    for (const [chain] of HOOKS)
      lines.push(
        `${bin} -w -S ${chain} 2>/dev/null | grep -E -- ${shellQuote(`--comment "?${comment}"?( |$)`)} | sed 's/^-A /-D /' | while read -r r; do eval "${bin} -w $r"; done`,
      );
  // A chain left empty by this heal is unlinked and deleted, so a healed node looks untouched.
  for (const bin of ['iptables', 'ip6tables'])
    for (const [chain, hook] of HOOKS)
      lines.push(
        `if ${bin} -w -S ${chain} >/dev/null 2>&1 && [ "$(${bin} -w -S ${chain} | wc -l)" -le 1 ]; then while ${bin} -w -D ${hook} -j ${chain} 2>/dev/null; do :; done; ${bin} -w -X ${chain} 2>/dev/null || true; fi`,
      );
  return lines.join('\n');
}

/** Heal-all: empty faultline's chains, remove the jumps and delete the chains. Nothing else is touched. */
export function removeChainsScript(): string {
  const lines: string[] = [];
  for (const bin of ['iptables', 'ip6tables'])
    for (const [chain, hook] of HOOKS) {
      lines.push(`while ${bin} -w -D ${hook} -j ${chain} 2>/dev/null; do :; done`);
      lines.push(`${bin} -w -F ${chain} 2>/dev/null || true`);
      lines.push(`${bin} -w -X ${chain} 2>/dev/null || true`);
    }
  return lines.join('\n');
}

/** Lists what faultline has in iptables on a node: one line per chain, jump and rule. Empty when clean. */
export function listFaultlineStateScript(): string {
  const lines: string[] = [];
  for (const bin of ['iptables', 'ip6tables'])
    for (const [chain, hook] of HOOKS) {
      lines.push(`${bin} -w -S ${chain} 2>/dev/null | sed 's/^/${bin}: /'`);
      lines.push(`${bin} -w -S ${hook} 2>/dev/null | grep -F -- '-j ${chain}' | sed 's/^/${bin}: /'`);
    }
  return lines.join('\n');
}

/** Counters of one fault's rules: `iptables -L -v -n -x` lines carrying the comment. */
export function countersScript(
  id: string,
  bins: readonly string[] = ['iptables', 'ip6tables'],
  chains: readonly string[] = [IN_CHAIN, OUT_CHAIN],
): string {
  const comment = faultComment(id);
  const lines: string[] = [];
  for (const bin of bins)
    for (const chain of chains)
      lines.push(
        `${bin} -w -L ${chain} -v -n -x 2>/dev/null | grep -E -- ${shellQuote(`/\\* ${comment} \\*/`)} | sed 's/^/${chain} /'`,
      );
  return lines.join('\n');
}

export interface RuleCounter {
  chain: string;
  packets: number;
  bytes: number;
  source: string;
  destination: string;
}

/** Parses countersScript output: `CHAIN pkts bytes target prot opt in out source destination …`. */
export function parseCounters(text: string): RuleCounter[] {
  const out: RuleCounter[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const packets = Number(f[1]);
    const bytes = Number(f[2]);
    if (!Number.isFinite(packets) || !Number.isFinite(bytes)) continue;
    out.push({ chain: f[0] as string, packets, bytes, source: f[8] as string, destination: f[9] as string });
  }
  return out;
}

export function totalPackets(counters: readonly RuleCounter[]): number {
  return counters.reduce((s, c) => s + c.packets, 0);
}
