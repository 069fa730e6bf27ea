import { clusterSshPort } from '../src/core/control/addresses.ts';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
import { errorMessage } from '../src/core/util/errors.ts';
import {
  addRulesScript,
  countersScript,
  parseCounters,
  removeFaultRulesScript,
  totalPackets,
} from './commands/iptables.ts';
import {
  netemVictimVerdict,
  type PingStats,
  parsePing,
  pingCommand,
  RATE_PROBE_BYTES,
} from './commands/ping.ts';
import {
  type Behaviors,
  CHILD_HANDLE,
  isDefaultRoot,
  listFaultlineQdiscsScript,
  netemScript,
  parseQdiscProbe,
  parseQdiscStats,
  qdiscProbeScript,
  removeRootScript,
  rootQdiscScript,
  TBF_BURST_BYTES,
  tbfScript,
} from './commands/tc.ts';
import { landingEvidence } from './landing.ts';
import { nodeAddresses } from './probe.ts';
import { substitutionFor } from './substitutes.ts';
import {
  type Capability,
  CapabilityMissingError,
  type CleanReport,
  type EvidenceSignal,
  type FaultEvidence,
  type FaultRecord,
  type InjectOptions,
  type Nemesis,
} from './types.ts';

/**
 * Packet faults (Jepsen's net/shape!): every node shapes its egress towards the targets (a target node
 * towards every other node). With netem: prio + netem + u32 filters; `tc -s` counters as evidence.
 * Without netem (as on kernels lacking sch_netem): `loss` becomes an iptables `statistic` DROP and
 * `rate` a tbf, each marked as a substitution in the evidence; delay, duplicate, reorder and corrupt
 * have no substitute and inject throws CapabilityMissingError naming the node and the missing qdisc.
 *
 * params: behaviors (see commands/tc.ts), probePort (victim probes, default the peer's SSH port),
 * sinkPort (an ack sink on the peers, see ackSinkCommand: needed for the rate victim probe).
 */

interface NodePlan {
  dev?: string;
  destinations: Record<string, string>;
  /** tc | iptables-statistic */
  method: string[];
}

interface PacketUndo extends Record<string, unknown> {
  behaviors: Behaviors;
  perNode: Record<string, NodePlan>;
  substitutions: string[];
  capabilities: Record<string, Record<string, boolean>>;
  /** The victim's ping before the fault (netem only): the baseline its RTT and loss are judged against. */
  baselinePing?: PingStats | null;
}

const capCache = new WeakMap<Remote, Map<string, Record<string, { ok: boolean; error?: string }>>>();

export async function qdiscCapabilities(
  remote: Remote,
  node: string,
): Promise<Record<string, { ok: boolean; error?: string }>> {
  let perRemote = capCache.get(remote);
  if (!perRemote) {
    perRemote = new Map();
    capCache.set(remote, perRemote);
  }
  const hit = perRemote.get(node);
  if (hit) return hit;
  const r = await remote.exec(node, qdiscProbeScript(), { sudo: true, check: false });
  const parsed = parseQdiscProbe(r.stdout);
  const kinds = parsed.veth ? parsed.kinds : {};
  const stat = await remote.exec(
    node,
    'iptables -w -N FLCAP 2>/dev/null; if iptables -w -A FLCAP -m statistic --mode random --probability 0.5 -j RETURN 2>/dev/null; then echo yes; fi; iptables -w -F FLCAP 2>/dev/null; iptables -w -X FLCAP 2>/dev/null; true',
    { sudo: true, check: false },
  );
  kinds.statistic = { ok: stat.stdout.includes('yes') };
  perRemote.set(node, kinds);
  return kinds;
}

const NETEM_ONLY = ['delay', 'duplicate', 'reorder', 'corrupt'] as const;

function requested(b: Behaviors): string[] {
  return Object.entries(b)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
}

async function deviceFor(remote: Remote, node: string, address: string): Promise<string> {
  const r = await remote.exec(node, `ip -o route get ${shellQuote(address)}`, { check: false });
  const dev = /\bdev (\S+)/.exec(r.stdout)?.[1];
  if (!dev) throw new Error(`${node}: no route to ${address}`);
  return dev;
}

async function qdiscStats(remote: Remote, node: string, dev: string) {
  const r = await remote.exec(node, `tc -s qdisc show dev ${shellQuote(dev)}`, { check: false });
  return parseQdiscStats(r.stdout).find((q) => q.handle === CHILD_HANDLE);
}

/** A bounded burst of TCP connects; counts how many timed out (a lost SYN outlives the timeout). */
function connectBurstScript(address: string, port: number, count: number, timeoutMs: number): string {
  const inner = `exec 3<>/dev/tcp/${address}/${port}`;
  return `t=0; i=0; while [ $i -lt ${count} ]; do timeout ${(timeoutMs / 1000).toFixed(3)} bash -c ${shellQuote(inner)} 2>/dev/null; [ $? -eq 124 ] && t=$((t + 1)); i=$((i + 1)); done; echo timeouts=$t`;
}

/**
 * The rate probe's sink protocol: the sink answers one byte per 4 KiB it has *received*, so the sender
 * times delivery, not how fast its own socket buffer filled. `ackSinkCommand` starts one (Node.js). Small
 * enough that the probe's two chunks at the least take about 1 s at 64 kbit/s (a 64 KiB chunk took 16 s
 * there and ran past the probe's timeout).
 */
export const ACK_CHUNK = 4096;

/** Start the sink in the background; `output` is a shell word for where its output goes. */
export function ackSinkCommand(port: number, nodeBin = 'node', output = '/dev/null'): string {
  return `setsid ${shellQuote(nodeBin)} -e ${shellQuote(ackSinkScript(port))} </dev/null >${output} 2>&1 &`;
}

/**
 * The sink's program: acknowledge every ACK_CHUNK bytes received. Port 0 lets the kernel pick a free
 * port, which the sink prints once it listens (`port=N`); a listen error is printed instead, and ends it.
 */
function ackSinkScript(port: number): string {
  return `const srv=require('net').createServer((s)=>{let n=0;s.on('data',(d)=>{const before=Math.floor(n/${ACK_CHUNK});n+=d.length;const k=Math.floor(n/${ACK_CHUNK})-before;if(k>0)s.write(Buffer.alloc(k,97));});s.on('error',()=>{});});srv.on('error',(e)=>{console.log('error='+e.message);process.exit(1);});srv.listen(${port},()=>console.log('port='+srv.address().port))`;
}

/** How long a sink may take to listen: Node.js itself can take seconds to start on a loaded node. */
const SINK_START_S = 20;

type AckSink = { port: number; stop(): Promise<void> };

/**
 * A short-lived ack sink on `node` for one rate probe (when the plan gives no sinkPort): Node.js from the
 * node's PATH, on a port the kernel picks, stopped by the caller right after the probe, so nothing
 * outlives the evidence. When there is none, `missing` says whether the node lacks Node.js (a capability)
 * or the sink failed to start (with what it printed), so the evidence names the cause.
 */
async function startAckSink(remote: Remote, node: string): Promise<AckSink | { missing: string }> {
  const bin = (
    await remote.exec(node, 'command -v node || command -v nodejs', { check: false })
  ).stdout.trim();
  if (!bin) return { missing: `capability missing: no Node.js on ${node}'s PATH to start an ack sink with` };
  // One command starts the sink and waits for it to listen or exit, so a slow start is waited for
  // rather than taken for a failure, and its output (the port, or the error) is read back in full.
  const r = await remote.exec(
    node,
    `f=$(mktemp) || exit 1; ${ackSinkCommand(0, bin, '"$f"')} pid=$!; ` +
      `for i in $(seq ${SINK_START_S * 10}); do grep -q '^port=' "$f" && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done; ` +
      'echo pid=$pid; head -c 400 "$f"; rm -f "$f"',
    { check: false, timeoutMs: (SINK_START_S + 10) * 1000 },
  );
  const pid = Number(/^pid=(\d+)$/m.exec(r.stdout)?.[1] ?? 0);
  const port = Number(/^port=(\d+)$/m.exec(r.stdout)?.[1] ?? 0);
  const stop = async () => {
    if (pid > 1) await remote.exec(node, `kill ${pid} 2>/dev/null; true`, { check: false });
  };
  if (port > 0) return { port, stop };
  await stop();
  const said = `${r.stdout.replace(/^pid=\d+$/m, '')}${r.stderr}`.replace(/\s+/g, ' ').trim();
  return {
    missing: `the ack sink (${bin}) on ${node} did not listen within ${SINK_START_S} s: ${said || `exit ${r.code}, no output`}`,
  };
}

/** Push `bytes` (a multiple of ACK_CHUNK) and wait for every ack: elapsed ms, or -1 on failure. */
function pushScript(address: string, port: number, bytes: number): string {
  const acks = bytes / ACK_CHUNK;
  const inner = `exec 3<>/dev/tcp/${address}/${port} && head -c ${bytes} /dev/zero >&3 && test "$(head -c ${acks} <&3 | wc -c)" -eq ${acks}`;
  return `a=$(date +%s%N); if timeout 20 bash -c ${shellQuote(inner)} 2>/dev/null; then b=$(date +%s%N); echo ms=$(((b - a) / 1000000)); else echo ms=-1; fi`;
}

function parseRate(rate: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|bps|kbps|mbps)?$/i.exec(rate.trim());
  if (!m) throw new Error(`cannot read rate "${rate}"`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'bit').toLowerCase();
  const mult: Record<string, number> = {
    bit: 1,
    kbit: 1e3,
    mbit: 1e6,
    gbit: 1e9,
    bps: 8,
    kbps: 8e3,
    mbps: 8e6,
  };
  return n * (mult[unit] ?? 1);
}

export const packetNemesis: Nemesis & { kind: 'packet' } = {
  kind: 'packet',

  async capabilities(remote, node): Promise<Capability[]> {
    const k = await qdiscCapabilities(remote, node);
    const netem = k.netem?.ok === true;
    const missing = (name: string) =>
      `the netem qdisc (sch_netem) is missing on ${node} (${k.netem?.error ?? 'not probed'}): ${name} cannot be emulated and has no substitute; needs a kernel with CONFIG_NET_SCH_NETEM`;
    const caps: Capability[] = NETEM_ONLY.map((b) => ({
      name: `packet-${b}`,
      available: netem,
      ...(!netem && { reason: missing(b) }),
    }));
    caps.push({
      name: 'packet-loss',
      available: netem || k.statistic?.ok === true,
      ...(!netem &&
        (k.statistic?.ok
          ? { substitute: 'iptables statistic match (random DROP)' }
          : { reason: 'neither netem nor the iptables statistic match is available' })),
    });
    const tbf = k.tbf?.ok === true && (k.prio?.ok === true || k.htb?.ok === true);
    caps.push({
      name: 'packet-rate',
      available: netem || tbf,
      ...(!netem &&
        (tbf ? { substitute: 'tbf' } : { reason: 'neither netem nor tbf (with prio or htb) is available' })),
    });
    return caps;
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const p = spec.params ?? {};
    const behaviors = (p.behaviors ?? {}) as Behaviors;
    const wanted = requested(behaviors);
    if (wanted.length === 0) throw new Error('packet: params.behaviors names no behaviour');
    const all = remote.nodes.map((n) => n.name);
    const targets = Array.isArray(spec.targets)
      ? spec.targets
      : typeof spec.targets === 'string'
        ? [spec.targets]
        : all;
    const addresses = await nodeAddresses(remote, all);
    // Probed once per node and cached; in parallel, as each probe is several commands on a slow node.
    await Promise.all(all.map((n) => qdiscCapabilities(remote, n)));
    const perNode: Record<string, NodePlan> = {};
    const substitutions = new Set<string>();
    const capabilities: PacketUndo['capabilities'] = {};
    for (const node of all) {
      const dests = targets.includes(node)
        ? all.filter((n) => n !== node)
        : targets.filter((t) => t !== node);
      if (dests.length === 0) continue;
      const k = await qdiscCapabilities(remote, node);
      capabilities[node] = Object.fromEntries(Object.entries(k).map(([n, v]) => [n, v.ok]));
      const plan: NodePlan = {
        destinations: Object.fromEntries(dests.map((d) => [d, addresses[d] as string])),
        method: [],
      };
      const netem = k.netem?.ok === true && k.prio?.ok === true;
      if (netem) plan.method.push('tc-netem');
      else {
        for (const b of NETEM_ONLY)
          if (wanted.includes(b))
            throw new CapabilityMissingError(
              node,
              `netem ${b}`,
              `the netem qdisc (sch_netem) is missing on this kernel (${k.netem?.error ?? 'unknown qdisc'}); ${b} has no substitute`,
            );
        if (behaviors.loss) {
          if (!k.statistic?.ok)
            throw new CapabilityMissingError(
              node,
              'netem loss',
              'netem is missing and the iptables statistic match too',
            );
          plan.method.push('iptables-statistic');
          substitutions.add('loss: iptables statistic random DROP (netem missing)');
        }
        if (behaviors.rate) {
          if (!(k.tbf?.ok && (k.prio?.ok || k.htb?.ok)))
            throw new CapabilityMissingError(
              node,
              'netem rate',
              'netem is missing and tbf (with prio or htb) too',
            );
          plan.method.push(k.prio?.ok ? 'tc-tbf-prio' : 'tc-tbf-htb');
          substitutions.add(
            `rate: tbf${k.prio?.ok ? '' : ' under htb classes (prio missing)'} (netem missing)`,
          );
        }
      }
      if (plan.method.some((m) => m.startsWith('tc'))) {
        plan.dev = await deviceFor(remote, node, Object.values(plan.destinations)[0] as string);
        const root = (await remote.exec(node, rootQdiscScript(plan.dev), { check: false })).stdout;
        if (!isDefaultRoot(root))
          throw new Error(
            `${node}: ${plan.dev} already has a root qdisc (${root.trim()}) that is not faultline's; refusing to replace it`,
          );
      }
      perNode[node] = plan;
    }
    const undo: PacketUndo = { behaviors, perNode, substitutions: [...substitutions], capabilities };
    const [probeNode, probePlan] = Object.entries(perNode)[0] ?? [];
    if (probeNode && probePlan?.method.includes('tc-netem')) {
      const dest = Object.values(probePlan.destinations)[0] as string;
      const r = await remote.exec(probeNode, pingCommand(dest, 10), {
        sudo: true,
        check: false,
        timeoutMs: 30_000,
      });
      undo.baselinePing = parsePing(r.stdout);
    }
    const used = Object.values(perNode).flatMap((n) => n.method);
    const substituted = [
      ...(used.includes('iptables-statistic') ? [substitutionFor('packet loss')] : []),
      ...(used.some((m) => m.startsWith('tc-tbf')) ? [substitutionFor('packet rate')] : []),
    ];
    const record: FaultRecord = {
      id,
      spec,
      nodes: Object.keys(perNode),
      injectedAt: new Date().toISOString(),
      undo,
      ...(substituted.length > 0 && { substitutions: substituted }),
    };
    await opts?.beforeApply?.(record);
    await Promise.all(
      Object.entries(perNode).map(async ([node, plan]) => {
        const dests = Object.values(plan.destinations);
        for (const m of plan.method) {
          if (m === 'tc-netem')
            await remote.exec(node, netemScript(plan.dev as string, dests, behaviors), { sudo: true });
          else if (m.startsWith('tc-tbf'))
            await remote.exec(
              node,
              tbfScript(plan.dev as string, dests, behaviors.rate as string, m === 'tc-tbf-prio'),
              {
                sudo: true,
              },
            );
          else if (m === 'iptables-statistic')
            await remote.exec(
              node,
              addRulesScript(
                dests.map((d) => ({ destination: d, probability: (behaviors.loss?.percent ?? 20) / 100 })),
                id,
              ),
              { sudo: true },
            );
        }
      }),
    );
    return record;
  },

  async evidence(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as PacketUndo;
    const p = record.spec.params ?? {};
    const signals: EvidenceSignal[] = [];
    // Probe from one shaped node towards one of its destinations: enough to show the shaping bites.
    const [node, plan] = Object.entries(undo.perNode)[0] ?? [];
    if (!node || !plan) return { landed: false, reason: 'no node shapes any traffic', signals };
    const [dest, address] = Object.entries(plan.destinations)[0] as [string, string];
    const probePort = typeof p.probePort === 'number' ? p.probePort : clusterSshPort(remote.node(dest));
    if (plan.method.includes('iptables-statistic')) {
      let timeouts = 0;
      let tries = 0;
      // Bounded: at most 5 bursts of 20 connects, stopping at the first dropped SYN.
      for (let i = 0; i < 5 && timeouts === 0; i++) {
        const r = await remote.exec(node, connectBurstScript(address, probePort, 20, 200), {
          check: false,
          timeoutMs: 30_000,
        });
        timeouts += Number(/timeouts=(\d+)/.exec(r.stdout)?.[1] ?? 0);
        tries += 20;
      }
      const counters = parseCounters(
        (await remote.exec(node, countersScript(record.id), { sudo: true, check: false })).stdout,
      );
      signals.push({
        side: 'injector',
        node,
        signal: `iptables statistic DROP packets (substitute for netem loss ${undo.behaviors.loss?.percent}%)`,
        before: 0,
        during: totalPackets(counters),
        landed: totalPackets(counters) > 0,
        note: 'substitution',
      });
      signals.push({
        side: 'victim',
        node,
        signal: `tcp connects ${node}→${dest}:${probePort} timed out`,
        during: `${timeouts}/${tries}`,
        landed: timeouts > 0,
      });
    }
    if (plan.method.includes('tc-netem')) {
      const ping = async (count: number, interval: number, size?: number) =>
        parsePing(
          (
            await remote.exec(node, pingCommand(address, count, interval, size), {
              sudo: true,
              check: false,
              timeoutMs: 60_000,
            })
          ).stdout,
        );
      const during = await ping(30, 0.1);
      const rateProbe = undo.behaviors.rate ? await ping(5, 0.2, RATE_PROBE_BYTES) : null;
      const verdict = netemVictimVerdict(
        undo.behaviors,
        undo.baselinePing ?? null,
        during,
        rateProbe,
        undo.behaviors.rate ? parseRate(undo.behaviors.rate) : null,
      );
      signals.push({
        side: 'victim',
        node,
        signal: `ping ${node}→${dest} (${address}): RTT and loss`,
        before: undo.baselinePing ?? undefined,
        during: rateProbe ? { ...during, rateProbe } : during,
        landed: verdict.landed,
        note: verdict.why.join('; '),
      });
    }
    if (plan.dev && plan.method.some((m) => m.startsWith('tc'))) {
      const before = await qdiscStats(remote, node, plan.dev);
      let victim: EvidenceSignal | null = null;
      // Under netem the ping victim above already times a large echo; the push probe needs a sink.
      if (undo.behaviors.rate && !(plan.method.includes('tc-netem') && typeof p.sinkPort !== 'number')) {
        const started =
          typeof p.sinkPort === 'number'
            ? null
            : await startAckSink(remote, dest).catch((err: unknown) => ({
                missing: `the ack sink on ${dest} could not be started: ${errorMessage(err)}`,
              }));
        const sink = started && 'port' in started ? started : null;
        const sinkPort = typeof p.sinkPort === 'number' ? p.sinkPort : sink?.port;
        if (typeof sinkPort === 'number') {
          const bps = parseRate(undo.behaviors.rate);
          // The bucket passes at line rate, then ~1 s at the shaped rate: an unshaped local link moves
          // all of it in milliseconds.
          const burst = plan.method.some((m) => m.startsWith('tc-tbf')) ? TBF_BURST_BYTES : 0;
          const bytes = Math.ceil((burst + bps / 8) / ACK_CHUNK) * ACK_CHUNK;
          const r = await remote
            .exec(node, pushScript(address, sinkPort, bytes), { check: false, timeoutMs: 30_000 })
            .finally(() => sink?.stop());
          const ms = Number(/ms=(-?\d+)/.exec(r.stdout)?.[1] ?? -1);
          const expectedMs = (((bytes - burst) * 8) / bps) * 1000;
          victim = {
            side: 'victim',
            node,
            signal: `push ${bytes} bytes ${node}→${dest}:${sinkPort} (ms)`,
            during: ms,
            landed: ms >= expectedMs * 0.5,
            note: `expected ≥ ${Math.round(expectedMs * 0.5)} ms at ${undo.behaviors.rate}`,
          };
        } else {
          victim = {
            side: 'victim',
            node,
            signal: 'throughput probe',
            landed: false,
            note: `no params.sinkPort, and ${started && 'missing' in started ? started.missing : 'no ack sink'}: nothing to push bytes to`,
          };
        }
      }
      const during = await qdiscStats(remote, node, plan.dev);
      signals.push({
        side: 'injector',
        node,
        signal: `tc -s qdisc ${CHILD_HANDLE} on ${plan.dev} (${during?.kind ?? 'missing'})`,
        before: before && {
          packets: before.sentPackets,
          overlimits: before.overlimits,
          dropped: before.dropped,
        },
        during: during && {
          packets: during.sentPackets,
          overlimits: during.overlimits,
          dropped: during.dropped,
        },
        landed: during !== undefined && during.sentPackets > 0,
        ...(undo.substitutions.length > 0 && { note: 'substitution' }),
      });
      if (victim) signals.push(victim);
    }
    return landingEvidence(signals, {
      show: (s) => `${s.signal}=${JSON.stringify(s.during ?? s.note)}`,
      ...(undo.substitutions.length > 0 && { note: `substitution: ${undo.substitutions.join('; ')}` }),
    });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<PacketUndo>;
    const entries = undo.perNode
      ? Object.entries(undo.perNode)
      : remote.nodes.map((n) => [n.name, undefined] as const);
    await Promise.all(
      entries.map(async ([node, plan]) => {
        if (plan?.dev) await remote.exec(node, removeRootScript(plan.dev), { sudo: true });
        await remote.exec(node, removeFaultRulesScript(record.id), { sudo: true });
      }),
    );
  },

  /**
   * After heal: the faultline qdisc (or statistic rules) gone from the shaped node, and the victim's
   * probe back to normal (every echo answered, no connect timing out).
   */
  async evidenceAfterHeal(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as PacketUndo;
    const signals: EvidenceSignal[] = [];
    const [node, plan] = Object.entries(undo.perNode)[0] ?? [];
    if (!node || !plan) return { landed: true, reason: 'no node shaped any traffic', signals };
    const [dest, address] = Object.entries(plan.destinations)[0] as [string, string];
    const p = record.spec.params ?? {};
    const probePort = typeof p.probePort === 'number' ? p.probePort : clusterSshPort(remote.node(dest));
    if (plan.method.includes('iptables-statistic')) {
      const counters = parseCounters(
        (await remote.exec(node, countersScript(record.id), { sudo: true, check: false })).stdout,
      );
      signals.push({
        side: 'injector',
        node,
        signal: `iptables statistic DROP packets (substitute for netem loss ${undo.behaviors.loss?.percent}%)`,
        after: counters.length === 0 ? 'rules removed' : `${counters.length} rule(s) left`,
        landed: counters.length === 0,
      });
      const r = await remote.exec(node, connectBurstScript(address, probePort, 20, 1000), {
        check: false,
        timeoutMs: 60_000,
      });
      const timeouts = Number(/timeouts=(\d+)/.exec(r.stdout)?.[1] ?? -1);
      signals.push({
        side: 'victim',
        node,
        signal: `tcp connects ${node}→${dest}:${probePort} timed out`,
        after: `${timeouts}/20`,
        landed: timeouts === 0,
      });
    }
    if (plan.method.includes('tc-netem')) {
      const r = await remote.exec(node, pingCommand(address, 10, 0.1), {
        sudo: true,
        check: false,
        timeoutMs: 60_000,
      });
      const after = parsePing(r.stdout);
      const base = undo.baselinePing?.avgMs ?? null;
      const delayMs = undo.behaviors.delay?.timeMs ?? null;
      // Back to normal: every echo answered, and no longer carrying the configured delay.
      const back =
        after !== null &&
        after.lossPercent === 0 &&
        after.duplicates === 0 &&
        (delayMs === null || after.avgMs === null || after.avgMs < (base ?? 0) + delayMs / 2);
      signals.push({
        side: 'victim',
        node,
        signal: `ping ${node}→${dest} (${address}): RTT and loss`,
        after: after ?? 'no ping output',
        landed: back,
      });
    }
    if (plan.dev && plan.method.some((m) => m.startsWith('tc'))) {
      const left = await qdiscStats(remote, node, plan.dev);
      signals.push({
        side: 'injector',
        node,
        signal: `tc -s qdisc ${CHILD_HANDLE} on ${plan.dev}`,
        after: left ? `still present (${left.kind})` : 'removed',
        landed: left === undefined,
      });
    }
    return landingEvidence(signals, {
      noneLands: true,
      prefix: 'not back after heal',
      show: (s) => `${s.signal}=${JSON.stringify(s.after)}`,
    });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const list = async () =>
      (await remote.exec(node, listFaultlineQdiscsScript(), { sudo: true, check: false })).stdout
        .split('\n')
        .filter((l) => l.trim() !== '');
    const found = await list();
    const fixed: string[] = [];
    for (const line of found) {
      const dev = line.split(':')[0] as string;
      await remote.exec(node, removeRootScript(dev), { sudo: true });
      fixed.push(`removed faultline root qdisc on ${dev}`);
    }
    const left = found.length > 0 ? await list() : [];
    // iptables statistic rules live in the FAULTLINE chains: the partition sweep removes those.
    return { clean: left.length === 0, fixed, found: [...found, ...left.map((l) => `still present: ${l}`)] };
  },
};
