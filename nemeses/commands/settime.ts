/**
 * settime: moving a node's own kernel clock (VMs, lab machines). NTP would undo a bump within seconds,
 * so every time daemon that is running is stopped first and exactly those are restarted at heal.
 */
export const NTP_SERVICES = ['systemd-timesyncd', 'chrony', 'chronyd', 'ntp', 'ntpsec', 'openntpd'] as const;

/** Stops the running NTP daemons; prints `active=<service>` for each one it stopped and `ntp=yes|no`. */
export function stopNtpScript(): string {
  return [
    `if command -v timedatectl >/dev/null 2>&1; then echo "ntp=$(timedatectl show -p NTP --value 2>/dev/null)"; timedatectl set-ntp false 2>/dev/null || true; fi`,
    `for s in ${NTP_SERVICES.join(' ')}; do if systemctl is-active --quiet "$s" 2>/dev/null; then echo "active=$s"; systemctl stop "$s"; fi; done`,
    'true',
  ].join('\n');
}

export function parseStoppedNtp(text: string): { services: string[]; timedatectlNtp: boolean } {
  const lines = text.split('\n');
  return {
    services: lines.filter((l) => l.startsWith('active=')).map((l) => l.slice(7).trim()),
    timedatectlNtp: lines.some((l) => l.trim() === 'ntp=yes'),
  };
}

export function restoreNtpScript(services: readonly string[], timedatectlNtp: boolean): string {
  const safe = services.filter((s) => (NTP_SERVICES as readonly string[]).includes(s));
  return [
    ...safe.map((s) => `systemctl start ${s} || true`),
    ...(timedatectlNtp ? ['timedatectl set-ntp true 2>/dev/null || true'] : []),
    'true',
  ].join('\n');
}

/**
 * Shift CLOCK_REALTIME by deltaMs. The shift is relative to the time `date` itself reads just before it
 * sets the clock, so however slowly the command starts (an emulated node can take a second to fork),
 * no time is lost between reading the clock and setting it.
 */
export function bumpClockScript(deltaMs: number): string {
  if (!Number.isInteger(deltaMs)) throw new RangeError(`deltaMs must be an integer, got ${deltaMs}`);
  const secs = `${deltaMs < 0 ? '-' : '+'}${Math.floor(Math.abs(deltaMs) / 1000)}.${String(Math.abs(deltaMs) % 1000).padStart(3, '0')}`;
  return `date -s '${secs} seconds' >/dev/null && date +%s.%N`;
}

/**
 * Strobe: swing the clock by ±deltaMs every periodMs for durationMs, then leave it as found (detached
 * loop; its pid goes into a marker so heal and the sweep can stop it).
 */
export function strobeLoopScript(deltaMs: number, periodMs: number, durationMs: number): string {
  const period = (periodMs / 1000).toFixed(3);
  const rounds = Math.max(1, Math.floor(durationMs / (2 * periodMs)));
  return `i=0; while [ $i -lt ${rounds} ]; do ${bumpClockScript(deltaMs)} >/dev/null; sleep ${period}; ${bumpClockScript(-deltaMs)} >/dev/null; sleep ${period}; i=$((i + 1)); done`;
}
