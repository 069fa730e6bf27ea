import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The client thread (0 … concurrency-1) a client is being opened for, while its `open(node)` runs. A client
 * that resolves its addresses in `open` (rather than once for all its threads) lets the proxy give each
 * thread its own listener, so a fault can cut one group of clients and spare the others.
 */
const scope = new AsyncLocalStorage<number>();

export function inClientThread<T>(thread: number, fn: () => T): T {
  return scope.run(thread, fn);
}

/** The client thread whose open() is running, or undefined outside one. */
export function currentClientThread(): number | undefined {
  return scope.getStore();
}
