import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { flakeyProbeCommand, parseFlakeyProbe } from '../../nemeses/commands/disk-commands.ts';
import { netemVictimVerdict, parsePing } from '../../nemeses/commands/ping.ts';
import { renderLocalInventory } from '../../src/lib/clusters/local-inventory.ts';
import { findCachedDeb, startAptProxy } from '../../src/lib/clusters/vm-apt-proxy.ts';
import { guestAptSources, readHostAptSources } from '../../src/lib/clusters/vm-apt-sources.ts';
import { guestInitScript } from '../../src/lib/clusters/vm-guest.ts';
import { qemuArgs } from '../../src/lib/clusters/vm-qemu.ts';

/** The VM cluster's parts that need no VM: apt sources, the apt proxy, qemu arguments, probe parsers. */
const tmp = mkdtempSync(join(tmpdir(), 'faultline-vm-parts-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

test('host apt sources: deb822 and one-line files, disabled stanzas and other file names ignored', (t) => {
  const etc = join(tmp, 'apt');
  mkdirSync(join(etc, 'sources.list.d'), { recursive: true });
  writeFileSync(
    join(etc, 'sources.list'),
    '# comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main contrib\n',
  );
  writeFileSync(
    join(etc, 'sources.list.d', 'debian.sources'),
    'Types: deb\nURIs: http://deb.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://deb.example/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: bookworm\n',
  );
  writeFileSync(
    join(etc, 'sources.list.d', 'x.sources.disabled'),
    'Types: deb\nURIs: http://never.example/\nSuites: x\n',
  );
  const sources = readHostAptSources(etc);
  t.deepEqual(
    sources.map((s) => s.uri),
    ['http://mirror.example/debian', 'http://deb.example/debian', 'http://deb.example/debian-security'],
  );
  const guest = guestAptSources(sources);
  t.is(guest.mirror, 'http://mirror.example/debian');
  t.deepEqual(guest.lines, [
    'deb http://mirror.example/debian bookworm main contrib',
    'deb http://mirror.example/debian bookworm-updates main contrib',
    'deb http://deb.example/debian-security bookworm-security main contrib',
  ]);
  t.deepEqual(guest.hosts, ['mirror.example', 'deb.example']);
});

test('guest apt sources need a plain-http Debian archive: a clear error otherwise', (t) => {
  const err = t.throws(() =>
    guestAptSources([
      { uri: 'https://deb.example/debian', suites: ['bookworm'], components: ['main'], file: 'f' },
    ]),
  );
  t.regex(err?.message ?? '', /plain-http Debian archive.*https:\/\/deb\.example\/debian \(f\)/);
});

test('cached .deb lookup finds apt’s epoch-encoded file names', (t) => {
  const dir = join(tmp, 'archives');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'redis-server_5%3a7.0.15-1~deb12u10_amd64.deb'), 'x');
  writeFileSync(join(dir, 'etcd-server_3.4.23-4+b4_amd64.deb'), 'y');
  t.is(
    findCachedDeb(dir, 'etcd-server_3.4.23-4+b4_amd64.deb'),
    join(dir, 'etcd-server_3.4.23-4+b4_amd64.deb'),
  );
  t.is(
    findCachedDeb(dir, 'redis-server_7.0.15-1~deb12u10_amd64.deb'),
    join(dir, 'redis-server_5%3a7.0.15-1~deb12u10_amd64.deb'),
  );
  t.is(findCachedDeb(dir, 'redis-server_7.0.16-1_amd64.deb'), null);
  t.is(findCachedDeb(dir, '../etc/passwd'), null);
});

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the apt proxy serves cached packages and refuses other hosts, methods and relative URLs', async (t) => {
  const archives = join(tmp, 'proxy-archives');
  mkdirSync(archives, { recursive: true });
  writeFileSync(join(archives, 'hello_1.0_amd64.deb'), 'deb-bytes');
  const lines: string[] = [];
  const server = await startAptProxy({
    host: '127.0.0.1',
    port: 0,
    allowHosts: ['deb.example'],
    cacheDir: join(tmp, 'proxy-cache'),
    hostArchives: archives,
    log: (l) => lines.push(l),
  });
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  writeFileSync(join(archives, 'etcd-server_3.4.23-4+b4_amd64.deb'), 'etcd-bytes');
  const escaped = await get(
    port,
    'http://deb.example/debian/pool/main/e/etcd/etcd-server_3.4.23-4%2bb4_amd64.deb',
  );
  t.deepEqual(escaped, { status: 200, body: 'etcd-bytes' }, 'apt escapes + in pool paths');
  const hit = await get(port, 'http://deb.example/debian/pool/main/h/hello/hello_1.0_amd64.deb');
  t.deepEqual(hit, { status: 200, body: 'deb-bytes' });
  t.is((await get(port, 'http://elsewhere.example/debian/x.deb')).status, 403);
  t.is((await get(port, 'http://deb.example/x', 'POST')).status, 405);
  t.is((await get(port, '/relative')).status, 400);
  t.true(lines.some((l) => l.startsWith('deny GET http://elsewhere.example/')));
});

test('ping statistics parse, and the netem victim verdict follows each behaviour', (t) => {
  const base = parsePing(
    '10 packets transmitted, 10 received, 0% packet loss, time 912ms\nrtt min/avg/max/mdev = 0.412/0.700/1.200/0.100 ms\n',
  );
  t.deepEqual(base, {
    sent: 10,
    received: 10,
    duplicates: 0,
    lossPercent: 0,
    minMs: 0.412,
    avgMs: 0.7,
    maxMs: 1.2,
  });
  const delayed = parsePing(
    '30 packets transmitted, 30 received, 0% packet loss\nrtt min/avg/max/mdev = 90.1/101.5/112.0/5.0 ms',
  );
  t.true(netemVictimVerdict({ delay: { timeMs: 100 } }, base, delayed, null, null).landed);
  t.false(netemVictimVerdict({ delay: { timeMs: 100 } }, base, base, null, null).landed);
  const dup = parsePing(
    '30 packets transmitted, 30 received, +9 duplicates, 0% packet loss\nrtt min/avg/max/mdev = 0.3/0.5/0.9/0.1 ms',
  );
  t.is(dup?.duplicates, 9);
  t.true(netemVictimVerdict({ duplicate: { percent: 50 } }, base, dup, null, null).landed);
  const lossy = parsePing(
    '30 packets transmitted, 19 received, 36.6667% packet loss, time 3000ms\nrtt min/avg/max/mdev = 0.3/0.5/0.9/0.1 ms',
  );
  t.true(netemVictimVerdict({ loss: { percent: 40 } }, base, lossy, null, null).landed);
  t.false(netemVictimVerdict({ corrupt: { percent: 40 } }, base, base, null, null).landed);
  const reordered = parsePing(
    '30 packets transmitted, 30 received, 0% packet loss\nrtt min/avg/max/mdev = 0.4/55.0/101.0/40.0 ms',
  );
  t.true(
    netemVictimVerdict({ delay: { timeMs: 100 }, reorder: { percent: 50 } }, base, reordered, null, null)
      .landed,
  );
  t.false(
    netemVictimVerdict({ delay: { timeMs: 100 }, reorder: { percent: 50 } }, base, delayed, null, null)
      .landed,
  );
  const slow = parsePing(
    '5 packets transmitted, 5 received, 0% packet loss\nrtt min/avg/max/mdev = 60/70/80/5 ms',
  );
  t.true(netemVictimVerdict({ rate: '1mbit' }, base, base, slow, 1e6).landed);
  t.false(netemVictimVerdict({ rate: '1mbit' }, base, base, base, 1e6).landed);
  t.false(netemVictimVerdict({ delay: { timeMs: 100 } }, base, null, null, null).landed);
});

test('the dm-flakey victim probe reads a failed write and a differing read-back', (t) => {
  t.regex(flakeyProbeCommand('faultline-data'), /oflag=direct,dsync/);
  t.deepEqual(
    parseFlakeyProbe(
      'mount=/var/lib/faultline\nwrite=err dd: error writing: Input/output error\nreadback=differs\n',
    ),
    {
      mount: '/var/lib/faultline',
      write: 'err dd: error writing: Input/output error',
      readback: 'differs',
    },
  );
  t.is(parseFlakeyProbe('mount=none\n').mount, null);
});

test('qemu arguments carry the cluster marker, the tap, fw_cfg files and no default route source', (t) => {
  const args = qemuArgs({
    cluster: 'vm-x',
    node: 'n2',
    accel: { accel: 'tcg', cpu: 'max', reason: '', probedAt: '', bootId: '' },
    memory: '512M',
    kernel: '/k',
    initrd: '/i',
    rootDisk: '/r.qcow2',
    dataDisk: '/d.qcow2',
    tap: 'fltabc1',
    mac: '52:54:00:ab:cd:01',
    consoleLog: '/c.log',
    pidFile: '/q.pid',
    fwCfg: { init: '/fw/init' },
  });
  const line = args.join(' ');
  t.regex(line, /-name faultline-vm\/vm-x\/n2,/);
  t.regex(line, /-accel tcg,tb-size=128 -cpu max/);
  t.regex(line, /tap,id=net0,ifname=fltabc1,script=no,downscript=no/);
  t.regex(line, /-fw_cfg name=opt\/faultline\/init,file=\/fw\/init/);
  const init = guestInitScript({
    name: 'n2',
    address: '10.213.9.12',
    prefixLength: 24,
    aptProxy: 'http://10.213.9.1:3142/',
  });
  t.regex(init, /ip addr add 10\.213\.9\.12\/24 dev eth0/);
  t.notRegex(init, /route add|default via/, 'VM nodes get no default route');
  t.regex(init, /Acquire::http::Proxy "http:\/\/10\.213\.9\.1:3142\/"/);
});

test('a VM inventory says the nodes have their own kernel clocks', (t) => {
  const text = renderLocalInventory({
    name: 'vm-x',
    inventoryPath: '/i',
    knownHostsPath: '/k',
    identityFile: '/id',
    subnet: '10.213.9.0/24',
    nodes: [{ name: 'n1', host: '10.213.9.11', port: 22, user: 'root', labels: { address: '10.213.9.11' } }],
    kind: 'vm',
  });
  t.regex(text, /faultline VM cluster "vm-x"/);
  t.regex(text, /sharedKernelClock: false/);
});
