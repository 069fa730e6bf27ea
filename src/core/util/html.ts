const ENTITY: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * The one escape for text put into HTML, SVG or XML: element content and attribute values, quoted with
 * either `"` or `'` (both quotes are escaped, so a value can never close its attribute).
 */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITY[c] as string);
}
