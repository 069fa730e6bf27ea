import type { Client, ClientOp, Completion } from './types.ts';

/**
 * A client that talks to nothing: every op completes `ok` with its own value, without a network round
 * trip. Used to measure the interpreter's own overhead (bench:runner) and in interpreter tests.
 */
export class NoopClient implements Client {
  readonly reusable = true;
  async open(_node: string): Promise<Client> {
    return this;
  }
  async setup(): Promise<void> {}
  invoke(op: ClientOp): Promise<Completion> {
    return Promise.resolve({ type: 'ok', value: op.value });
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}
