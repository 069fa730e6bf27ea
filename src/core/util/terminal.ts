/**
 * Text bound for a terminal that came from a history, a plan or a session store: every control
 * character except newline and tab (C0, DEL, C1, so ESC and CSI sequences too) is shown as `\xNN`
 * instead of being sent, so a value cannot clear the screen, move the cursor, retitle the window or
 * hide a line of the output it appears in.
 */
export function terminalText(s: string): string {
  return s.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
