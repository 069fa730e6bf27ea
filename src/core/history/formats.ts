/** The history formats faultline reads (see ./read.ts for how each is recognised). */
export const HISTORY_FORMATS = ['jsonl', 'json', 'edn', 'porcupine-etcd', 'porcupine-kv'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];
