import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/util/errors.ts';
import { run, which } from './host-tools.ts';

/**
 * A non-root login user on every node of a local cluster, as on Vagrant boxes and most labs: the nodes log
 * in as this user and reach root through sudo (NOPASSWD, or with a password the control node reads from an
 * environment variable). The host's own account files are never touched: the cluster keeps copies of
 * /etc/passwd, /etc/group and /etc/shadow with the user added, and a sudoers.d of its own, and each node's
 * mount namespace binds them over the host's (with its own /home).
 */
export const LoginUserSchema = z.object({
  name: z.string(),
  uid: z.number().int(),
  /** The environment variable holding the sudo password; absent: NOPASSWD. */
  sudoPasswordEnv: z.string().optional(),
});
export type LoginUser = z.infer<typeof LoginUserSchema>;

export interface LoginUserOptions {
  name: string;
  /** Name of an environment variable holding the sudo password; without it sudo is NOPASSWD. */
  sudoPasswordEnv?: string;
}

const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FIRST_UID = 2000;

function accountNames(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length >= 3 && f[0]) out.set(f[0], Number(f[2]));
  }
  return out;
}

/** Refuses what cannot work before anything is built. */
export function checkLoginUser(o: LoginUserOptions): void {
  if (!USER_NAME.test(o.name) || o.name === 'root')
    throw new UserError(`--user ${o.name}: expected a lower-case login name other than root`);
  if (accountNames(readFileSync('/etc/passwd', 'utf8')).has(o.name))
    throw new UserError(`--user ${o.name}: this host already has that account; choose another name`);
  if (!which('sudo')) throw new UserError('--user needs sudo on this host: apt-get install -y sudo');
  if (!existsSync('/etc/sudoers.d') || !existsSync('/home'))
    throw new UserError('--user needs /etc/sudoers.d and /home on this host (mount points for the nodes)');
  if (o.sudoPasswordEnv !== undefined) {
    if (!ENV_NAME.test(o.sudoPasswordEnv))
      throw new UserError(`--sudo-password-env ${o.sudoPasswordEnv}: expected an environment variable name`);
    if (!process.env[o.sudoPasswordEnv])
      throw new UserError(`--sudo-password-env ${o.sudoPasswordEnv}: that environment variable is not set`);
  }
}

async function passwordHash(password: string): Promise<string> {
  if (!which('openssl'))
    throw new UserError('a sudo password needs openssl on this host: apt-get install -y openssl');
  return (await run('openssl', ['passwd', '-6', '-stdin'], { input: `${password}\n` })).trim();
}

/** Write the cluster's account files and sudoers.d (under `<dir>/etc`). */
export async function writeAccountFiles(dir: string, o: LoginUserOptions): Promise<LoginUser> {
  const passwd = readFileSync('/etc/passwd', 'utf8');
  const group = readFileSync('/etc/group', 'utf8');
  const shadow = readFileSync('/etc/shadow', 'utf8');
  const taken = new Set([...accountNames(passwd).values(), ...accountNames(group).values()]);
  let uid = FIRST_UID;
  while (taken.has(uid)) uid++;
  const password = o.sudoPasswordEnv ? process.env[o.sudoPasswordEnv] : undefined;
  // `*`: no password, but not locked (sshd refuses keys for a `!` locked account without PAM).
  const hash = password ? await passwordHash(password) : '*';
  const days = Math.floor(Date.now() / 86_400_000);
  const etc = join(dir, 'etc');
  mkdirSync(join(etc, 'sudoers.d'), { recursive: true, mode: 0o755 });
  chmodSync(etc, 0o755);
  const append = (text: string, line: string) => `${text.endsWith('\n') ? text : `${text}\n`}${line}\n`;
  writeFileSync(join(etc, 'passwd'), append(passwd, `${o.name}:x:${uid}:${uid}::/home/${o.name}:/bin/bash`));
  writeFileSync(join(etc, 'group'), append(group, `${o.name}:x:${uid}:`));
  writeFileSync(join(etc, 'shadow'), append(shadow, `${o.name}:${hash}:${days}:0:99999:7:::`));
  chmodSync(join(etc, 'passwd'), 0o644);
  chmodSync(join(etc, 'group'), 0o644);
  chmodSync(join(etc, 'shadow'), 0o640);
  const rule = `${o.name} ALL=(ALL:ALL) ${password ? '' : 'NOPASSWD: '}ALL\n`;
  writeFileSync(join(etc, 'sudoers.d', `90-faultline-${o.name}`), rule, { mode: 0o440 });
  chmodSync(join(etc, 'sudoers.d', `90-faultline-${o.name}`), 0o440);
  return { name: o.name, uid, ...(o.sudoPasswordEnv && { sudoPasswordEnv: o.sudoPasswordEnv }) };
}

/** The node's /home with the user's home and the cluster key in its authorized_keys. */
export function writeNodeHome(nodeDir: string, user: LoginUser, authorizedKey: string): void {
  const home = join(nodeDir, 'home', user.name);
  mkdirSync(join(home, '.ssh'), { recursive: true });
  chmodSync(join(nodeDir, 'home'), 0o755);
  writeFileSync(join(home, '.ssh', 'authorized_keys'), `${authorizedKey}\n`, { mode: 0o600 });
  // Empty start-up files, as for root: commands must not pay for a shell profile.
  writeFileSync(join(home, '.bashrc'), '');
  writeFileSync(join(home, '.profile'), '');
  for (const p of [
    home,
    join(home, '.ssh'),
    join(home, '.ssh', 'authorized_keys'),
    join(home, '.bashrc'),
    join(home, '.profile'),
  ])
    chownSync(p, user.uid, user.uid);
  chmodSync(home, 0o755);
  chmodSync(join(home, '.ssh'), 0o700);
}

/** Lines of the node's init script that bind the cluster's account files and the node's /home. */
export function loginUserMounts(dir: string, nodeDir: string, root: string): string[] {
  const etc = join(dir, 'etc');
  return [
    `mount --bind ${join(etc, 'passwd')} ${root}/etc/passwd`,
    `mount --bind ${join(etc, 'group')} ${root}/etc/group`,
    `mount --bind ${join(etc, 'shadow')} ${root}/etc/shadow`,
    `mount --bind ${join(etc, 'sudoers.d')} ${root}/etc/sudoers.d`,
    `mount --bind ${join(nodeDir, 'home')} ${root}/home`,
  ];
}
