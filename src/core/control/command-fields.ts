import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { InputError } from '../util/errors.ts';

/**
 * Fields that name a command for the control host to run: an inventory's or ledger's `proxyCommand`,
 * an ssh_config `ProxyCommand`, and ssh_config `Match exec` (which `ssh -G` runs while resolving a host).
 * Inventories, ledgers and ssh_config files may come from someone else, so such a field is used only
 * when the operator passes `--allow-proxy-command` on the command line: never from a file alone. The
 * switch is set by the CLI (src/app/cli/main.ts) before any command runs; nothing else sets it.
 */
let allowed = false;

export const ALLOW_PROXY_COMMAND_FLAG = '--allow-proxy-command';

export function allowProxyCommands(on = true): void {
  allowed = on;
}

export function proxyCommandsAllowed(): boolean {
  return allowed;
}

/** Throws the one-line refusal for a command-naming field at `file:line` unless the operator opted in. */
export function refuseCommandField(file: string, line: number | null, field: string): void {
  if (allowed) return;
  throw new InputError(
    file,
    line,
    field,
    `names a command for this host to run: refused unless ${ALLOW_PROXY_COMMAND_FLAG} is given on the command line`,
  );
}

/**
 * `Match … exec` in an ssh_config file or any file it includes (as far as the includes can be followed:
 * `~`, relative paths against ~/.ssh as ssh_config(5) says, `*` and `?` in the last segment), checked
 * before `ssh -G` is ever run on it.
 */
export function refuseMatchExec(file: string, seen = new Set<string>()): void {
  if (allowed || seen.has(file) || seen.size > 64) return;
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const m = /^(\w+)\s*(?:=\s*|\s+)(.*)$/.exec(line);
    if (!m) return;
    const key = (m[1] ?? '').toLowerCase();
    if (key === 'match' && /(^|\s|!)exec(\s|=|$)/i.test(m[2] ?? ''))
      refuseCommandField(file, i + 1, 'Match exec');
    if (key === 'include') for (const f of includedFiles(m[2] ?? '')) refuseMatchExec(f, seen);
  });
}

function includedFiles(args: string): string[] {
  const out: string[] = [];
  for (const word of args.split(/\s+/).filter(Boolean)) {
    const unquoted = word.replace(/^"|"$/g, '');
    const tilde = unquoted.startsWith('~/') ? join(homedir(), unquoted.slice(2)) : unquoted;
    const path = isAbsolute(tilde) ? tilde : join(homedir(), '.ssh', tilde);
    const dir = dirname(path);
    const last = basename(path);
    if (!/[*?[]/.test(last)) {
      if (existsSync(path)) out.push(path);
      continue;
    }
    const re = new RegExp(
      `^${last
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    try {
      for (const f of readdirSync(dir)) if (re.test(f)) out.push(join(dir, f));
    } catch {
      // A directory that does not exist includes nothing (as in OpenSSH).
    }
  }
  return out;
}
