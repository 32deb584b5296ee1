/**
 * Rollout text is untrusted: a model can emit ANSI escapes that recolour, move the
 * cursor or retitle a terminal. Before printing, control characters other than newline
 * and tab become visible escapes: `\x1b` for C0 controls, `\u009b` for DEL and the C1
 * controls (JSON.stringify leaves those raw, and the \u form keeps such JSON valid).
 */
export function sanitizeForTerminal(s: string): string {
  return s.replace(CONTROL, visible);
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** As CONTROL, but a carriage return that ends the text or a line passes (a progress line redrawn, CRLF). */
const CONTROL_BUT_REDRAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n|$)/g;

function visible(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * What may reach a terminal of anything the command line prints: the CLI passes every
 * write to stdout and stderr through this, so untrusted text (group ids built from a
 * data source, run names, file names, error messages quoting a record) cannot drive the
 * terminal whichever command prints it. Output is unchanged unless it holds controls.
 */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL_BUT_REDRAW, visible);
}

/** One line, at most `max` characters, for tables. */
export function preview(s: string | null | undefined, max = 60): string {
  if (!s) return '';
  const flat = sanitizeForTerminal(s.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
