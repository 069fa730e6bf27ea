import dgram from 'node:dgram';

/**
 * Where the members reach the control host: the source address this host uses toward each node (a UDP
 * socket's connect only asks the routing table; nothing is sent), which must be one address for all of
 * them. It is right when the nodes reach the control host the way it reaches them (a local cluster's
 * bridge, a flat lab network); behind a jump host or NAT the members could not dial it back, so the
 * database would not form, and the run says so.
 */
export async function controlHostAddress(nodeAddresses: Record<string, string>): Promise<string> {
  const seen = new Map<string, string[]>();
  for (const [node, address] of Object.entries(nodeAddresses)) {
    const local = await sourceToward(address).catch((err: Error) => {
      throw new Error(`${node}: no route from the control host to ${address} (${err.message})`);
    });
    seen.set(local, [...(seen.get(local) ?? []), node]);
  }
  if (seen.size !== 1)
    throw new Error(
      `the control host reaches the nodes from different addresses (${[...seen].map(([a, ns]) => `${a} for ${ns.join(', ')}`).join('; ')}): the members' peer traffic needs one address they all reach it at`,
    );
  return [...seen.keys()][0] as string;
}

function sourceToward(address: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(address.includes(':') ? 'udp6' : 'udp4');
    sock.once('error', (err) => {
      sock.close();
      reject(err);
    });
    sock.connect(9, address, () => {
      const local = sock.address().address;
      sock.close();
      resolve(local);
    });
  });
}
