/**
 * The lazy filesystem's actions, shared by its registry definition (lazyfs-definition.ts, loaded
 * eagerly) and the nemesis itself (lazyfs.ts, loaded only when a plan uses it).
 */
export const LAZYFS_ACTIONS = [
  'lose-unfsynced',
  'torn-op',
  'torn-seq',
  'eio-read',
  'eio-write',
  'fsync-fail',
  'fsync-delay',
  'slow',
] as const;
export type LazyfsAction = (typeof LAZYFS_ACTIONS)[number];
