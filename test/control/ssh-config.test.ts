import { homedir } from 'node:os';
import test from 'ava';
import { concreteHosts, parseSshConfig, resolveSshHost } from '../../src/core/control/ssh-config.ts';
import { InputError } from '../../src/core/util/errors.ts';

const CONFIG = `
# global options come first and apply to everyone
IdentitiesOnly yes

Host n? !n9
    HostName 10.0.0.%h
    user   admin
Host n1
    HostName=192.168.1.1
    Port = 2201
    IdentityFile "~/keys/with space/id"
Host n*
    User ignored-because-first-wins
    Port 22
    ProxyJump jump@bastion:2222
Match host n2
    User never-applied
Host *
    IdentityFile ~/.ssh/id_default
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
`;

test('first value wins across matching blocks; quotes, =, %h and ~ are understood', (t) => {
  const cfg = parseSshConfig(CONFIG, 'cfg');
  const n1 = resolveSshHost(cfg, 'n1');
  // HostName from `Host n? !n9` came first and uses %h = the alias.
  t.is(n1.hostName, '10.0.0.n1');
  t.is(n1.user, 'admin');
  t.is(n1.port, 2201);
  t.is(n1.identityFile, `${homedir()}/keys/with space/id`);
  t.is(n1.proxyJump, 'jump@bastion:2222');
  t.is(n1.strictHostKeyChecking, 'no');
  t.is(n1.userKnownHostsFile, '/dev/null');
});

test('negated patterns exclude, Match blocks are skipped, unmatched hosts use Host *', (t) => {
  const cfg = parseSshConfig(CONFIG, 'cfg');
  const n9 = resolveSshHost(cfg, 'n9');
  t.is(n9.hostName, 'n9');
  t.is(n9.user, 'ignored-because-first-wins');
  const n2 = resolveSshHost(cfg, 'n2');
  t.is(n2.user, 'admin');
  const other = resolveSshHost(cfg, 'db');
  t.is(other.hostName, 'db');
  t.is(other.user, undefined);
  t.is(other.identityFile, `${homedir()}/.ssh/id_default`);
  t.deepEqual(concreteHosts(cfg), ['n1']);
});

test('malformed files name file:line', (t) => {
  const e1 = t.throws(() => parseSshConfig('Host a\n  HostName\n', 'cfg'), { instanceOf: InputError });
  t.is(e1?.message, 'cfg:2: HostName: keyword has no value');
  const e2 = t.throws(() => parseSshConfig('Host a\n  IdentityFile "/x\n', 'cfg'), {
    instanceOf: InputError,
  });
  t.is(e2?.line, 2);
  const e3 = t.throws(() => parseSshConfig('Host a\n  ??? what\n', 'cfg'), { instanceOf: InputError });
  t.is(e3?.line, 2);
  const cfg = parseSshConfig('Host a\n  Port eighty\n', 'cfg');
  const e4 = t.throws(() => resolveSshHost(cfg, 'a'), { instanceOf: InputError });
  t.is(e4?.message, 'cfg:2: Port: invalid port "eighty"');
});
