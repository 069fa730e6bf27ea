import test from 'ava';
import { flakeyTable, parseDmCapability, parseWriteProbe } from '../../nemeses/commands/disk-commands.ts';
import {
  faketimeAffectability,
  offsetSpec,
  parseBinaryReport,
  parseDbTimeMs,
  parseProbeOffsetMs,
  wrapperScript,
} from '../../nemeses/commands/faketime.ts';
import {
  addRulesScript,
  dropRuleArgs,
  parseCounters,
  removeChainsScript,
  removeFaultRulesScript,
} from '../../nemeses/commands/iptables.ts';
import { bumpClockScript, parseStoppedNtp, restoreNtpScript } from '../../nemeses/commands/settime.ts';
import {
  isDefaultRoot,
  netemArgs,
  netemScript,
  parseQdiscProbe,
  parseQdiscStats,
  tbfScript,
} from '../../nemeses/commands/tc.ts';
import { parseConnectProbe } from '../../nemeses/probe.ts';

test('iptables: rules only in FAULTLINE chains, jump inserted first, never a flush of another chain', (t) => {
  const s = addRulesScript([{ source: '10.0.0.2' }, { destination: '10.0.0.3', probability: 0.25 }], 'w7');
  t.regex(s, /iptables -w -I INPUT 1 -j FAULTLINE/);
  t.regex(s, /iptables -w -I OUTPUT 1 -j FAULTLINE-OUT/);
  t.regex(s, /-A FAULTLINE -s 10\.0\.0\.2 -m comment --comment faultline:w7 -j DROP/);
  t.regex(s, /-A FAULTLINE-OUT -d 10\.0\.0\.3 -m statistic --mode random --probability 0\.25/);
  for (const script of [s, removeChainsScript(), removeFaultRulesScript('w7')]) {
    for (const m of script.matchAll(/ip6?tables -w -([FXNA]) (\S+)/g))
      t.regex(m[2] as string, /^FAULTLINE(-OUT)?$/, m[0]);
    for (const m of script.matchAll(/ip6?tables -w -([DI]) (INPUT|OUTPUT)( 1)? (\S+ \S+)/g))
      t.regex(m[4] as string, /^-j FAULTLINE(-OUT)?;?$/, m[0]);
    t.notRegex(script, /-F( |$)(?!FAULTLINE)/);
  }
  t.throws(() => dropRuleArgs({ source: 'x', probability: 1.5 }, 'w1'), { message: /probability/ });
  // Heal by id matches the quoted (nft) and unquoted (legacy) comment forms, and not w70.
  t.regex(removeFaultRulesScript('w7'), /--comment "\?faultline:w7"\?\( \|\$\)/);
});

test('iptables counters parse the nft -L -v -n -x layout', (t) => {
  const text =
    'FAULTLINE      12     720 DROP       0    --  *      *       10.213.3.12          0.0.0.0/0            /* faultline:w1 */\n';
  t.deepEqual(parseCounters(text), [
    { chain: 'FAULTLINE', packets: 12, bytes: 720, source: '10.213.3.12', destination: '0.0.0.0/0' },
  ]);
});

test('connect probe outcomes', (t) => {
  t.is(parseConnectProbe('FLPROBE:connected\nFLPROBE:rc=0'), 'connected');
  t.is(parseConnectProbe('bash: connect: Connection refused\nFLPROBE:rc=1'), 'refused');
  t.is(parseConnectProbe('FLPROBE:rc=124'), 'timeout');
  t.is(parseConnectProbe('FLPROBE:rc=2'), 'error');
});

test('tc: netem args with Jepsen defaults; prio+netem+u32 and htb/tbf layouts; probe and stats parsing', (t) => {
  t.is(
    netemArgs({
      delay: { timeMs: 50, jitterMs: 10, correlation: 25, distribution: 'normal' },
      loss: { percent: 20, correlation: 75 },
    }),
    'delay 50ms 10ms 25% distribution normal loss 20% 75%',
  );
  t.regex(netemArgs({ reorder: { percent: 20 } }), /^delay 50ms .* reorder 20%$/);
  const n = netemScript('eth0', ['10.0.0.2'], { loss: { percent: 5 } });
  t.regex(n, /root handle fa1: prio bands 4/);
  t.regex(n, /parent fa1:4 handle fa14: netem loss 5%/);
  t.regex(n, /u32 match ip dst 10\.0\.0\.2\/32 flowid fa1:4/);
  t.regex(
    tbfScript('eth0', ['10.0.0.2'], '1mbit', false),
    /htb default 1[\s\S]*classid fa1:4 htb[\s\S]*tbf rate 1mbit/,
  );
  t.true(isDefaultRoot('noqueue 0:'));
  t.true(isDefaultRoot('htb fa1:'));
  t.false(isDefaultRoot('htb 1:'));
  const probe = parseQdiscProbe(
    'netem=no Error: Specified qdisc kind is unknown.\nprio=no x\nhtb=yes\ntbf=yes\n',
  );
  t.deepEqual(probe.kinds.netem, { ok: false, error: 'Error: Specified qdisc kind is unknown.' });
  t.true(probe.kinds.htb?.ok);
  const stats = parseQdiscStats(
    'qdisc htb fa1: root refcnt 2 r2q 10 default 0x1\n Sent 100 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)\nqdisc tbf fa14: parent fa1:4 rate 1Mbit\n Sent 90000 bytes 60 pkt (dropped 1, overlimits 33 requeues 0)\n',
  );
  t.deepEqual(stats[1], {
    kind: 'tbf',
    handle: 'fa14:',
    sentBytes: 90000,
    sentPackets: 60,
    dropped: 1,
    overlimits: 33,
  });
});

test('faketime: Go, static and jemalloc binaries are classified with the reason', (t) => {
  const base =
    'lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1\nshim=/lib/x86_64-linux-gnu/libc_malloc_debug.so.0\nexists=1\n';
  const go = parseBinaryReport(
    '/usr/bin/etcd',
    `${base}ldd:\tlibc.so.6 => /lib/libc.so.6\ngo=1\njemalloc-static=0\n`,
  );
  t.regex(faketimeAffectability(go).reason ?? '', /Go binary/);
  const stat = parseBinaryReport(
    '/bin/x',
    `${base}ldd:\tnot a dynamic executable\ngo=0\njemalloc-static=0\n`,
  );
  t.regex(faketimeAffectability(stat).reason ?? '', /statically linked/);
  const je = parseBinaryReport(
    '/usr/bin/redis-server',
    `${base}ldd:\tlibjemalloc.so.2 => /lib/libjemalloc.so.2\ngo=0\njemalloc-static=0\n`,
  );
  t.deepEqual(faketimeAffectability(je), {
    affectable: true,
    mallocShim: '/lib/x86_64-linux-gnu/libc_malloc_debug.so.0',
  });
  const nolib = parseBinaryReport('/bin/x', 'exists=1\nldd:\tlibc.so.6\ngo=0\n');
  t.regex(faketimeAffectability(nolib).reason ?? '', /libfaketime is not installed/);
  t.is(offsetSpec(3_600_000), '+3600');
  t.is(offsetSpec(-1500), '-1.5');
  t.is(offsetSpec(250, 2), '+0.25 x2');
  t.regex(
    wrapperScript('/usr/bin/redis-server', '/l/libfaketime.so.1', '/run/x.rc', '/l/shim.so'),
    /export LD_PRELOAD='\/l\/shim\.so \/l\/libfaketime\.so\.1'\n[\s\S]*FAKETIME_NO_CACHE=1[\s\S]*exec \/usr\/bin\/redis-server "\$@"/,
  );
  t.is(parseProbeOffsetMs('100.000 3700.000 100.010'), 3599995);
  t.is(parseDbTimeMs('1796010000 250000'), 1796010000250);
  t.is(parseDbTimeMs('1796010000.5'), 1796010000500);
  t.is(parseDbTimeMs('ERR'), null);
});

test('settime scripts: integer ns arithmetic, NTP stopped and restored by name', (t) => {
  t.regex(bumpClockScript(-1500), /date -s '-1\.500 seconds'/);
  t.regex(bumpClockScript(300000), /date -s '\+300\.000 seconds'/);
  t.throws(() => bumpClockScript(1.5), { message: /integer/ });
  t.deepEqual(parseStoppedNtp('ntp=yes\nactive=chrony\n'), { services: ['chrony'], timedatectlNtp: true });
  t.is(
    restoreNtpScript(['chrony', 'rm -rf /'], true),
    'systemctl start chrony || true\ntimedatectl set-ntp true 2>/dev/null || true\ntrue',
  );
});

test('disk: write probe, dm capability messages, flakey table from a linear one', (t) => {
  t.deepEqual(parseWriteProbe('head: error writing: No space left on device\nrc=1'), {
    ok: false,
    enospc: true,
    detail: 'head: error writing: No space left on device',
  });
  t.regex(
    parseDmCapability('control=no\ndmsetup=yes\n').reason ?? '',
    /device-mapper is not available in this kernel/,
  );
  t.regex(
    parseDmCapability('control=yes\ndmsetup=yes\ntargets:linear v1\n').reason ?? '',
    /dm-flakey target is not loaded/,
  );
  t.true(parseDmCapability('control=yes\ndmsetup=yes\ntargets:flakey v1.5.0\n').available);
  t.is(
    flakeyTable('0 204800 linear 7:0 0', 'drop_writes', 0, 3600),
    '0 204800 flakey 7:0 0 0 3600 1 drop_writes',
  );
  t.throws(() => flakeyTable('0 1 striped', 'drop_writes', 0, 1), {
    message: /not a single-target linear table/,
  });
});
