import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/**
 * Replaces every known secret (SSH and sudo passwords read from the environment) with `***` before a
 * string reaches a log line or an error message. Short values are skipped: masking "a" everywhere would
 * destroy the log without protecting anything.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    if (secret && secret.length >= 3) this.secrets.add(secret);
  }

  apply(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }
}

export interface CommandLogEntry {
  node: string;
  command: string;
  code: number | null;
  durationMs: number;
  sudo: boolean;
  envKeys: string[];
  /**
   * How it reached the node: a runner of the login user, a root runner (sudo asked once for many
   * commands), or an exec channel of its own (stdin, every runner busy, or none on that node).
   */
  via?: 'runner' | 'root runner' | 'exec';
  outcome: 'ok' | 'nonzero' | 'timeout' | 'channel-error' | 'upload' | 'download';
}

/**
 * One append-only JSON-lines file per node in the run's log directory (`<dir>/<node>.commands.jsonl`):
 * every command with its exit code and duration. Stdin and environment values are never written,
 * only the names of the variables.
 */
export class CommandLog {
  private readonly streams = new Map<string, WriteStream>();

  constructor(
    private readonly dir: string | undefined,
    private readonly redactor: Redactor,
  ) {
    if (dir) mkdirSync(dir, { recursive: true });
  }

  /** The node's command log file, or null when commands are not logged. */
  pathOf(node: string): string | null {
    return this.dir ? join(this.dir, `${node}.commands.jsonl`) : null;
  }

  write(entry: CommandLogEntry): void {
    if (!this.dir) return;
    let stream = this.streams.get(entry.node);
    if (!stream) {
      stream = createWriteStream(this.pathOf(entry.node) as string, { flags: 'a' });
      this.streams.set(entry.node, stream);
    }
    const line = { time: new Date().toISOString(), ...entry, command: this.redactor.apply(entry.command) };
    stream.write(`${JSON.stringify(line)}\n`);
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.streams.values()].map((s) => new Promise<void>((resolve) => s.end(() => resolve()))),
    );
    this.streams.clear();
  }
}
