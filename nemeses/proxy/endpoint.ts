/**
 * A client address as databases give it (`http://10.213.0.2:2379`, `redis://host:6379`, `10.213.0.2:5432`):
 * its host and port, and the same address pointed somewhere else, so a client can be sent through the proxy
 * without knowing it. IPv6 literals in brackets are kept whole.
 */
export interface Endpoint {
  host: string;
  port: number;
}

const ADDRESS =
  /^(?<scheme>[a-z][a-z0-9+.-]*:\/\/)?(?<host>\[[0-9a-f:.]+\]|[^/:\s]+):(?<port>\d{1,5})(?<rest>\/.*)?$/i;

/** The endpoint of an address, or null when it names no host:port. */
export function parseEndpoint(address: string): Endpoint | null {
  const m = ADDRESS.exec(address.trim());
  const port = Number(m?.groups?.port);
  if (!m?.groups || !(port >= 1 && port <= 65_535)) return null;
  return { host: (m.groups.host as string).replace(/^\[|\]$/g, ''), port };
}

/** The same address with its host and port replaced (scheme and path kept). */
export function pointAt(address: string, to: Endpoint): string {
  const m = ADDRESS.exec(address.trim());
  if (!m?.groups) throw new Error(`not a host:port address: ${address}`);
  const host = to.host.includes(':') ? `[${to.host}]` : to.host;
  return `${m.groups.scheme ?? ''}${host}:${to.port}${m.groups.rest ?? ''}`;
}

export function formatEndpoint(e: Endpoint): string {
  return e.host.includes(':') ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}
