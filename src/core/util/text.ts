/**
 * Rollout text is untrusted: a model can emit ANSI escapes that recolour, move the
 * cursor or retitle a terminal. Before printing, control characters other than newline
 * and tab become visible escapes.
 */
export function sanitizeForTerminal(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** One line, at most `max` characters, for tables. */
export function preview(s: string | null | undefined, max = 60): string {
  if (!s) return '';
  const flat = sanitizeForTerminal(s.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
