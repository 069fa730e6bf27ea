import { shellQuote } from '../../src/core/control/quote.ts';

/** Disk fault command builders: fill a filesystem, corrupt a file, dm-flakey tables. */

export function freeBytesCommand(dir: string): string {
  return `df -B1 --output=avail ${shellQuote(dir)} | tail -1 | tr -d ' '`;
}

export function junkPath(dir: string, id: string): string {
  return `${dir.replace(/\/+$/, '')}/.faultline-junk-${id}`;
}

/** Allocate `bytes` in one file: fallocate where the filesystem supports it, else written zeros. */
export function fillCommand(path: string, bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 0)
    throw new RangeError(`bytes must be a non-negative integer, got ${bytes}`);
  const p = shellQuote(path);
  const mib = Math.floor(bytes / 1048576);
  const rest = bytes - mib * 1048576;
  return `fallocate -l ${bytes} ${p} 2>/dev/null || { dd if=/dev/zero of=${p} bs=1048576 count=${mib} status=none 2>/dev/null; head -c ${rest} /dev/zero >> ${p} 2>/dev/null; true; }`;
}

/** Try to write `bytes` next to the data: prints `rc=N` and the error text (ENOSPC shows the fill landed). */
export function writeProbeCommand(dir: string, bytes: number): string {
  const p = shellQuote(`${dir.replace(/\/+$/, '')}/.faultline-probe`);
  return `head -c ${bytes} /dev/zero > ${p} 2>/tmp/.faultline-probe-err; rc=$?; cat /tmp/.faultline-probe-err; rm -f ${p} /tmp/.faultline-probe-err; echo rc=$rc`;
}

export function parseWriteProbe(text: string): { ok: boolean; enospc: boolean; detail: string } {
  const rc = /rc=(\d+)/.exec(text)?.[1];
  return {
    ok: rc === '0',
    enospc: /No space left on device/i.test(text),
    detail: text.replace(/rc=\d+\s*$/, '').trim() || `exit ${rc ?? '?'}`,
  };
}

/** sha256 and size of a file: `HASH SIZE`. */
export function checksumCommand(file: string): string {
  const f = shellQuote(file);
  return `echo "$(sha256sum ${f} | cut -d' ' -f1) $(stat -c %s ${f})"`;
}

export function parseChecksum(text: string): { sha256: string; size: number } | null {
  const [sha256, size] = text.trim().split(/\s+/);
  if (!sha256 || !/^[0-9a-f]{64}$/.test(sha256) || size === undefined) return null;
  return { sha256, size: Number(size) };
}

/** Regular non-empty files in a directory, sorted (the corruption target is drawn from this list). */
export function listFilesCommand(dir: string): string {
  return `find ${shellQuote(dir)} -xdev -type f -size +0c ! -name '.faultline-*' 2>/dev/null | LC_ALL=C sort`;
}

export function truncateCommand(file: string, dropBytes: number): string {
  return `truncate -s -${Math.max(0, Math.floor(dropBytes))} ${shellQuote(file)}`;
}

export interface BitFlip {
  offset: number;
  bit: number;
}

/** Flip single bits in place with od + dd (no compiled helper needed on the node). */
export function bitflipCommand(file: string, flips: readonly BitFlip[]): string {
  const f = shellQuote(file);
  return flips
    .map(
      ({ offset, bit }) =>
        `b=$(od -An -tu1 -j ${offset} -N1 ${f} | tr -d ' '); printf "$(printf '\\\\%03o' $((b ^ ${1 << bit})))" | dd of=${f} bs=1 seek=${offset} conv=notrunc status=none`,
    )
    .join('\n');
}

export function zeroChunkCommand(file: string, offset: number, length: number): string {
  return `dd if=/dev/zero of=${shellQuote(file)} bs=${length} count=1 seek=${offset} oflag=seek_bytes conv=notrunc status=none`;
}

/** Write BASE64's bytes over FILE at OFFSET, in place (the file keeps its size unless they pass its end). */
export function overwriteCommand(file: string, offset: number, base64: string): string {
  return `printf '%s' ${shellQuote(base64)} | base64 -d | dd of=${shellQuote(file)} bs=65536 seek=${Math.floor(offset)} oflag=seek_bytes conv=notrunc status=none`;
}

/** device-mapper and the flakey target: prints `control=yes|no` and `dmsetup targets` output. */
export function dmCapabilityCommand(): string {
  return `if grep -qw device-mapper /proc/misc 2>/dev/null; then echo control=yes; else echo control=no; fi; command -v dmsetup >/dev/null && echo dmsetup=yes || echo dmsetup=no; dmsetup targets 2>&1 | sed 's/^/targets:/'`;
}

export function parseDmCapability(text: string): { available: boolean; reason?: string } {
  const lines = text.split('\n');
  if (lines.includes('dmsetup=no'))
    return { available: false, reason: 'dmsetup is not installed (apt-get install -y dmsetup)' };
  if (lines.includes('control=no'))
    return {
      available: false,
      reason:
        'device-mapper is not available in this kernel (no device-mapper in /proc/misc, so /dev/mapper/control cannot be opened; needs CONFIG_BLK_DEV_DM)',
    };
  const targets = lines.filter((l) => l.startsWith('targets:')).map((l) => l.slice(8));
  if (!targets.some((t) => /^flakey\s/.test(t)))
    return {
      available: false,
      reason: `the dm-flakey target is not loaded (modprobe dm-flakey; dmsetup targets: ${targets.map((t) => t.split(/\s+/)[0]).join(', ') || 'none'})`,
    };
  return { available: true };
}

export const FLAKEY_MODES = ['drop_writes', 'error_writes', 'corrupt_bio_byte'] as const;

/**
 * A flakey table over the same device and sectors as a linear table (`0 SIZE linear DEV OFFSET`):
 * up `upSeconds` then flaky `downSeconds`, with the feature chosen.
 */
export function flakeyTable(
  linearTable: string,
  mode: (typeof FLAKEY_MODES)[number],
  upSeconds: number,
  downSeconds: number,
): string {
  const m = /^(\d+)\s+(\d+)\s+linear\s+(\S+)\s+(\d+)\s*$/.exec(linearTable.trim());
  if (!m) throw new Error(`not a single-target linear table: ${linearTable.trim()}`);
  const [, start, size, dev, offset] = m;
  const feature = mode === 'corrupt_bio_byte' ? '5 corrupt_bio_byte 1 w 0 0' : `1 ${mode}`;
  return `${start} ${size} flakey ${dev} ${offset} ${upSeconds} ${downSeconds} ${feature}`;
}

export function loadTableCommand(name: string, table: string): string {
  const n = shellQuote(name);
  // --nolockfs: no filesystem freeze (and flush) first, which fails while the device errors writes.
  return `dmsetup suspend --nolockfs ${n} && dmsetup load ${n} --table ${shellQuote(table)} && dmsetup resume ${n}`;
}

/**
 * The victim's view of a flakey device: on the filesystem mounted from it, write one random 4 KiB block
 * with O_DIRECT|O_DSYNC and read it back with O_DIRECT (both bypass the page cache, so they reach the
 * device). error_writes makes the write fail; drop_writes and corrupt_bio_byte make the read-back
 * differ. Prints `mount=`, `write=ok|err <message>`, `readback=same|differs`.
 */
export function flakeyProbeCommand(device: string): string {
  const dev = shellQuote(`/dev/mapper/${device}`);
  return [
    `m=$(findmnt -n -o TARGET --source ${dev} 2>/dev/null | head -1)`,
    'if [ -z "$m" ]; then echo mount=none; exit 0; fi',
    'echo "mount=$m"',
    'f="$m/.faultline-flakey-probe"; a=/tmp/.flakey-a.$$; b=/tmp/.flakey-b.$$',
    'head -c 4096 /dev/urandom > "$a"',
    'if err=$(dd if="$a" of="$f" bs=4096 count=1 oflag=direct,dsync status=none 2>&1); then echo write=ok; else echo "write=err $err"; fi',
    'if dd if="$f" of="$b" bs=4096 count=1 iflag=direct status=none 2>/dev/null && cmp -s "$a" "$b"; then echo readback=same; else echo readback=differs; fi',
    'rm -f "$a" "$b" "$f"; true',
  ].join('\n');
}

export function parseFlakeyProbe(text: string): { mount: string | null; write: string; readback: string } {
  const get = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  const mount = get('mount');
  return { mount: mount && mount !== 'none' ? mount : null, write: get('write'), readback: get('readback') };
}
