import { shellQuote } from '../../src/core/control/quote.ts';

/**
 * libfaketime helpers. A DB is started through a wrapper script that preloads libfaketime and points
 * it at a per-process offset file (FAKETIME_TIMESTAMP_FILE, re-read on every call with
 * FAKETIME_NO_CACHE=1); bump / strobe / reset only rewrite that file.
 *
 * Two things decide whether it can work at all, and faultline checks both on the node:
 * - the binary must be dynamically linked and read the clock through libc: a static binary, or a Go
 *   binary (Go's runtime reads the clock through the vDSO / raw syscalls, e.g. etcd), never sees the
 *   preload;
 * - libfaketime 0.9.10 (Debian 12) deadlocks during its own initialisation in jemalloc-linked programs
 *   (e.g. Debian's redis-server): jemalloc's init calls clock_gettime before libfaketime is ready. When
 *   jemalloc is a shared library, preloading glibc's libc_malloc_debug.so.0 first routes malloc to
 *   glibc's allocator and the clash disappears; with a statically bundled jemalloc there is no way out.
 */

const LIB_DIRS = [
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/usr/lib64',
  '/usr/lib',
  '/usr/local/lib',
];
export const FAKETIME_LIB_CANDIDATES = LIB_DIRS.map((d) => `${d}/faketime/libfaketime.so.1`);
export const MALLOC_SHIM_CANDIDATES = [
  '/lib/x86_64-linux-gnu/libc_malloc_debug.so.0',
  '/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0',
  '/lib/aarch64-linux-gnu/libc_malloc_debug.so.0',
  '/usr/lib/aarch64-linux-gnu/libc_malloc_debug.so.0',
  '/usr/lib64/libc_malloc_debug.so.0',
];

function firstReadable(tag: string, paths: readonly string[]): string {
  return `for f in ${paths.map(shellQuote).join(' ')}; do if [ -r "$f" ]; then echo "${tag}=$f"; break; fi; done`;
}

/** Prints `lib=…`, `shim=…`, `ldd:…` lines, `go=N` and `jemalloc-static=N` for one binary. */
export function binaryReportCommand(binary: string): string {
  const b = shellQuote(binary);
  return [
    firstReadable('lib', FAKETIME_LIB_CANDIDATES),
    firstReadable('shim', MALLOC_SHIM_CANDIDATES),
    `if [ -r ${b} ]; then echo exists=1; else echo exists=0; fi`,
    `ldd ${b} 2>&1 | sed 's/^/ldd:/'`,
    // The Go linker writes "\\xff Go buildinf:" at the start of .go.buildinfo in every Go binary.
    `echo go=$(grep -c -a 'Go buildinf:' ${b} 2>/dev/null)`,
    `echo jemalloc-static=$(grep -c -a 'je_malloc_conf' ${b} 2>/dev/null)`,
  ].join('\n');
}

export interface BinaryReport {
  binary: string;
  exists: boolean;
  lib?: string;
  mallocShim?: string;
  dynamic: boolean;
  go: boolean;
  jemallocShared: boolean;
  jemallocStatic: boolean;
}

export function parseBinaryReport(binary: string, text: string): BinaryReport {
  const lines = text.split('\n');
  const val = (k: string) => lines.find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1);
  const ldd = lines.filter((l) => l.startsWith('ldd:')).map((l) => l.slice(4));
  const dynamic =
    ldd.length > 0 && !ldd.some((l) => /not a dynamic executable|statically linked|not regular file/.test(l));
  const jemallocShared = ldd.some((l) => /libjemalloc\.so/.test(l));
  const lib = val('lib');
  const shim = val('shim');
  return {
    binary,
    exists: val('exists') === '1',
    ...(lib && { lib }),
    ...(shim && { mallocShim: shim }),
    dynamic,
    go: Number(val('go') ?? 0) > 0,
    jemallocShared,
    jemallocStatic: !jemallocShared && Number(val('jemalloc-static') ?? 0) > 0,
  };
}

export interface Affectability {
  affectable: boolean;
  reason?: string;
  /** Preload glibc's malloc first (jemalloc as a shared library). */
  mallocShim?: string;
}

export function faketimeAffectability(r: BinaryReport): Affectability {
  if (!r.lib)
    return {
      affectable: false,
      reason: 'libfaketime is not installed on the node (apt-get install -y libfaketime)',
    };
  if (!r.exists) return { affectable: false, reason: `${r.binary} does not exist on the node` };
  if (r.go)
    return {
      affectable: false,
      reason: `${r.binary} is a Go binary: the Go runtime reads the clock through the vDSO and raw syscalls, which an LD_PRELOAD library (libfaketime) cannot intercept`,
    };
  if (!r.dynamic)
    return {
      affectable: false,
      reason: `${r.binary} is statically linked: LD_PRELOAD (libfaketime) is never loaded`,
    };
  if (r.jemallocStatic)
    return {
      affectable: false,
      reason: `${r.binary} bundles jemalloc statically: libfaketime 0.9.10 deadlocks in its initialisation under jemalloc`,
    };
  if (r.jemallocShared) {
    if (!r.mallocShim)
      return {
        affectable: false,
        reason: `${r.binary} uses jemalloc, which deadlocks libfaketime 0.9.10, and glibc's libc_malloc_debug.so.0 (the workaround) is missing`,
      };
    return { affectable: true, mallocShim: r.mallocShim };
  }
  return { affectable: true };
}

/** libfaketime's relative-offset syntax: "+12.345" / "-1.5" seconds, optionally " x<rate>". */
export function offsetSpec(deltaMs: number, rate?: number): string {
  const s = (Math.abs(deltaMs) / 1000).toFixed(3).replace(/\.?0+$/, '');
  const base = `${deltaMs < 0 ? '-' : '+'}${s === '' ? '0' : s}`;
  return rate !== undefined && rate !== 1 ? `${base} x${rate}` : base;
}

export function preloadEnv(lib: string, rcFile: string, mallocShim?: string): Record<string, string> {
  return {
    LD_PRELOAD: mallocShim ? `${mallocShim} ${lib}` : lib,
    FAKETIME_TIMESTAMP_FILE: rcFile,
    FAKETIME_NO_CACHE: '1',
    // Without this a bump would be re-applied from process start, not from now.
    FAKETIME_DONT_RESET: '1',
  };
}

/** The wrapper script that starts a DB under libfaketime. */
export function wrapperScript(binary: string, lib: string, rcFile: string, mallocShim?: string): string {
  const env = preloadEnv(lib, rcFile, mallocShim);
  return [
    '#!/bin/sh',
    '# Written by faultline: runs the binary under libfaketime; the clock nemesis rewrites the offset file.',
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    `exec ${shellQuote(binary)} "$@"`,
    '',
  ].join('\n');
}

/** Plain clock, preloaded clock, plain clock: the offset is preloaded − midpoint of the two plain reads. */
export function faketimeProbeCommand(lib: string, rcFile: string): string {
  const env = Object.entries(preloadEnv(lib, rcFile))
    .map(([k, v]) => `${k}=${shellQuote(v)}`)
    .join(' ');
  return `a=$(date +%s.%N); b=$(env ${env} date +%s.%N); c=$(date +%s.%N); echo "$a $b $c"`;
}

export function parseProbeOffsetMs(text: string): number | null {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (a === undefined || b === undefined || c === undefined || [a, b, c].some((x) => !Number.isFinite(x)))
    return null;
  return Math.round((b - (a + c) / 2) * 1000);
}

/**
 * A DB's own time: Redis `TIME` prints seconds then microseconds; anything else may print epoch seconds
 * (a float). Returns epoch milliseconds, or null.
 */
export function parseDbTimeMs(text: string): number | null {
  const nums = text
    .trim()
    .split(/\s+/)
    .filter((x) => /^-?\d+(\.\d+)?$/.test(x))
    .map(Number);
  const [first, second] = nums;
  if (first === undefined) return null;
  if (
    Number.isInteger(first) &&
    second !== undefined &&
    Number.isInteger(second) &&
    second < 1e6 &&
    first > 1e9
  )
    return first * 1000 + second / 1000;
  if (first > 1e12) return first; // already milliseconds
  if (first > 1e9) return first * 1000;
  return null;
}
