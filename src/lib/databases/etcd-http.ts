import { z } from 'zod';

/**
 * A small client for etcd's v3 HTTP/JSON gateway (grpc-gateway: POST /v3/kv/range, /v3/kv/put, /v3/kv/txn,
 * /v3/maintenance/status, /v3/cluster/member/list), on Node's fetch. Keys and values travel base64, int64
 * fields come back as strings, and proto3 JSON omits false/zero/empty fields (a failed txn has no
 * `succeeded`, an empty range no `kvs`), which the schemas below default. It lives with the database
 * because the installer speaks it too (status, member list); the etcd client (src/lib/clients/etcd.ts)
 * sits above and imports it from here.
 */

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
const int64 = z.union([z.string(), z.number()]).transform((v) => Number(v));

const headerSchema = z.looseObject({
  revision: int64.optional(),
  raft_term: int64.optional(),
  member_id: z.string().optional(),
});

const kvSchema = z.looseObject({
  key: z.string(),
  value: z.string().optional(),
  mod_revision: int64.optional(),
  create_revision: int64.optional(),
  version: int64.optional(),
});

const rangeSchema = z.looseObject({ header: headerSchema.optional(), kvs: z.array(kvSchema).optional() });
const txnSchema = z.looseObject({
  header: headerSchema.optional(),
  succeeded: z.boolean().optional(),
  responses: z
    .array(z.looseObject({ response_range: rangeSchema.optional(), response_put: z.unknown().optional() }))
    .optional(),
});
const statusSchema = z.looseObject({ header: headerSchema.optional(), leader: z.string().optional() });
const membersSchema = z.looseObject({
  members: z.array(z.looseObject({ ID: z.string().optional(), name: z.string().optional() })).optional(),
});
const errorBodySchema = z.looseObject({
  error: z.string().optional(),
  message: z.string().optional(),
  code: z.number().optional(),
});

export interface Kv {
  key: string;
  value: string;
  modRevision: number;
  version: number;
}

export type Compare =
  | { key: string; target: 'MOD'; modRevision: number }
  | { key: string; target: 'VALUE'; value: string }
  | { key: string; target: 'VERSION'; version: number };

export type RequestOp =
  | { put: { key: string; value: string } }
  | { range: { key: string; serializable?: boolean } };

export interface TxnResult {
  succeeded: boolean;
  revision: number;
  /** One entry per request op: the kvs read (ranges) or null (puts). */
  responses: (Kv[] | null)[];
}

/** The server answered with an error (gRPC status in the body). Whether the op happened depends on it. */
export class EtcdError extends Error {
  override readonly name = 'EtcdError';
  constructor(
    message: string,
    readonly status: number,
    readonly grpcCode: number | undefined,
  ) {
    super(message);
  }
}

function toKv(kv: z.infer<typeof kvSchema>): Kv {
  return {
    key: unb64(kv.key),
    value: unb64(kv.value ?? ''),
    modRevision: kv.mod_revision ?? 0,
    version: kv.version ?? 0,
  };
}

export class EtcdHttp {
  /** `sent` counts every request handed to fetch (the wire count the hidden-retry audit reads). */
  constructor(
    readonly baseUrl: string,
    private readonly sent: { requests: number } = { requests: 0 },
  ) {}

  async call<T>(path: string, body: unknown, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    this.sent.requests++;
    const res = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal && { signal }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new EtcdError(
        `etcd ${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`,
        res.status,
        undefined,
      );
    }
    if (!res.ok) {
      const e = errorBodySchema.safeParse(json);
      const msg = e.success ? (e.data.message ?? e.data.error ?? text) : text;
      throw new EtcdError(`etcd ${path}: ${msg}`, res.status, e.success ? e.data.code : undefined);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new EtcdError(`etcd ${path}: unexpected response ${text.slice(0, 200)}`, res.status, undefined);
    return parsed.data;
  }

  async get(
    key: string,
    opts: { serializable?: boolean; signal?: AbortSignal } = {},
  ): Promise<{ kv: Kv | null; revision: number }> {
    const body: Record<string, unknown> = { key: b64(key) };
    if (opts.serializable) body.serializable = true;
    const r = await this.call('/v3/kv/range', body, rangeSchema, opts.signal);
    const kv = r.kvs?.[0];
    return { kv: kv ? toKv(kv) : null, revision: r.header?.revision ?? 0 };
  }

  async put(key: string, value: string, signal?: AbortSignal): Promise<number> {
    const r = await this.call(
      '/v3/kv/put',
      { key: b64(key), value: b64(value) },
      z.looseObject({ header: headerSchema.optional() }),
      signal,
    );
    return r.header?.revision ?? 0;
  }

  async txn(
    compare: Compare[],
    success: RequestOp[],
    failure: RequestOp[] = [],
    signal?: AbortSignal,
  ): Promise<TxnResult> {
    const cmp = compare.map((c) => {
      const base = { key: b64(c.key), target: c.target, result: 'EQUAL' };
      if (c.target === 'MOD') return { ...base, mod_revision: String(c.modRevision) };
      if (c.target === 'VERSION') return { ...base, version: String(c.version) };
      return { ...base, value: b64(c.value) };
    });
    const req = (op: RequestOp) =>
      'put' in op
        ? { request_put: { key: b64(op.put.key), value: b64(op.put.value) } }
        : { request_range: { key: b64(op.range.key), ...(op.range.serializable && { serializable: true }) } };
    const r = await this.call(
      '/v3/kv/txn',
      { compare: cmp, success: success.map(req), failure: failure.map(req) },
      txnSchema,
      signal,
    );
    return {
      succeeded: r.succeeded ?? false,
      revision: r.header?.revision ?? 0,
      responses: (r.responses ?? []).map((x) =>
        x.response_range ? (x.response_range.kvs ?? []).map(toKv) : null,
      ),
    };
  }

  /** This member's view: its id, raft term and the leader it knows of. */
  async status(signal?: AbortSignal): Promise<{ memberId: string; leader: string; raftTerm: number }> {
    const r = await this.call('/v3/maintenance/status', {}, statusSchema, signal);
    return {
      memberId: r.header?.member_id ?? '',
      leader: r.leader ?? '',
      raftTerm: r.header?.raft_term ?? 0,
    };
  }

  async members(signal?: AbortSignal): Promise<{ id: string; name: string }[]> {
    const r = await this.call('/v3/cluster/member/list', {}, membersSchema, signal);
    return (r.members ?? []).map((m) => ({ id: m.ID ?? '', name: m.name ?? '' }));
  }
}
