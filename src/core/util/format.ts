/**
 * Numbers for evidence lines and reports: 4217 → "4,217", 1234.5678 → "1,234.568" (at most three
 * fraction digits). What `toLocaleString('en-US')` prints, without it: the first locale-aware call
 * loads ICU's number-format data, about 20 ms, paid by every `faultline check`.
 */
export function groupThousands(n: number): string {
  if (!Number.isFinite(n) || Math.abs(n) >= 1e21) return n.toLocaleString('en-US');
  const text = Number.isInteger(n) ? String(n) : n.toFixed(3).replace(/\.?0+$/, '');
  const dot = text.indexOf('.');
  const whole = dot === -1 ? text : text.slice(0, dot);
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const out = dot === -1 ? grouped : grouped + text.slice(dot);
  return out === '-0' ? '0' : out;
}
