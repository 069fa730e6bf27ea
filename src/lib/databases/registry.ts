import { z } from 'zod';
import type { DatabaseCapability } from '../../core/database/capabilities.ts';
import type { OptionsSchema } from '../../core/util/options.ts';
import { BUILT_IN, Registry } from '../../core/util/registry.ts';
import { checkArtifactOptions, type DbArtifact, dbArtifactOptions } from './artifact.ts';
import type { RedisAppendFsync } from './redis.ts';
import type { Database } from './types.ts';

/**
 * Every database faultline can set up by name (`--db`, a plan binding's `db:`): one registry. A
 * definition says how to build the adapter, which options a binding may pass it (`dbOptions`, strict:
 * a misspelt option must never silently run the safe configuration), which client talks to it when the
 * binding names none, and which options give possibly-stale reads (`faultline test --serializable-reads`).
 * Plugins add databases with `defineDatabase`; a daemon description (`daemon:`) adds one without code.
 */
export interface DatabaseDefinition {
  name: string;
  summary: string;
  /** The client used when neither the binding nor `--client` names one. */
  defaultClient: string;
  /** Schema of `dbOptions`. Absent: the database takes none. */
  options?: OptionsSchema;
  /** The `dbOptions` that make reads possibly stale (the known-unsafe configuration), if any. */
  staleReads?: Record<string, unknown>;
  /** The executable the capability probe looks for on the nodes. */
  binary?: string;
  /**
   * The capabilities (the one vocabulary, src/core/database/capabilities.ts) a plan is checked against before
   * any adapter exists: `plan check` refuses a membership fault for a database without `membership`, and
   * a proxy fault on peer links for one without `peer-address`. The adapter must have them by shape
   * (`bindDatabase` refuses one that does not); every other capability is read from the adapter alone.
   */
  capabilities?: readonly DatabaseCapability[];
  /** A fresh adapter (adapters keep per-run state: wrappers, the current primary). */
  create(options: Record<string, unknown>): Database | Promise<Database>;
}

export const databases = new Registry<DatabaseDefinition>('database');

databases.register(
  'etcd',
  {
    name: 'etcd',
    summary:
      'etcd from Debian etcd-server (or your build: tarball, sha256, binary, version), one member per node',
    defaultClient: 'etcd-http',
    options: z
      .strictObject({
        /** Serve reads from the contacted member's local state (`--consistency=s`): possibly stale. */
        serializableReads: z.boolean().optional(),
        ...dbArtifactOptions,
      })
      .superRefine(checkArtifactOptions),
    staleReads: { serializableReads: true },
    binary: 'etcd',
    capabilities: ['membership', 'peer-address'],
    async create(o) {
      const { EtcdDb } = await import('./etcd.ts');
      return new EtcdDb({ artifact: artifactOf(o) });
    },
  },
  BUILT_IN,
);

databases.register(
  'redis',
  {
    name: 'redis',
    summary:
      'Redis from Debian redis-server (or your build: tarball, sha256, binary, version): the first node primary, the others replicas',
    defaultClient: 'redis',
    options: z
      .strictObject({
        /** Send reads to the replicas instead of the primary: possibly stale. */
        readFrom: z.enum(['primary', 'replicas']).optional(),
        /**
         * Persist every node with the append-only file, fsynced by this policy (`appendfsync`): `always`
         * before each reply, `everysec` once a second, `no` when the kernel pleases. Absent: no persistence.
         */
        appendfsync: z.enum(['always', 'everysec', 'no']).optional(),
        ...dbArtifactOptions,
      })
      .superRefine(checkArtifactOptions),
    staleReads: { readFrom: 'replicas' },
    binary: 'redis-server',
    async create(o) {
      const { RedisDb } = await import('./redis.ts');
      return new RedisDb({
        artifact: artifactOf(o),
        ...(typeof o.appendfsync === 'string' && { appendfsync: o.appendfsync as RedisAppendFsync }),
      });
    },
  },
  BUILT_IN,
);

/** The artifact keys of validated `dbOptions` (the schemas above checked them). */
function artifactOf(o: Record<string, unknown>): DbArtifact {
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  return { version: str('version'), tarball: str('tarball'), sha256: str('sha256'), binary: str('binary') };
}
