import type { Nemesis } from './types.ts';

/** Every nemesis kind faultline ships, loaded on first use. */
export const NEMESIS_KINDS = ['partition', 'packet', 'process', 'clock', 'disk'] as const;
export type NemesisKind = (typeof NEMESIS_KINDS)[number];

const loaders: Record<NemesisKind, () => Promise<Nemesis>> = {
  partition: async () => (await import('./partition.ts')).partitionNemesis,
  packet: async () => (await import('./packet.ts')).packetNemesis,
  process: async () => (await import('./process.ts')).processNemesis,
  clock: async () => (await import('./clock.ts')).clockNemesis,
  disk: async () => (await import('./disk.ts')).diskNemesis,
};

export async function nemesisOfKind(kind: string): Promise<Nemesis> {
  const load = loaders[kind as NemesisKind];
  if (!load) throw new Error(`no nemesis of kind "${kind}" (expected ${NEMESIS_KINDS.join(', ')})`);
  return load();
}

export async function allNemeses(): Promise<Nemesis[]> {
  return Promise.all(NEMESIS_KINDS.map((k) => loaders[k]()));
}
