/**
 * The one quoting function for every command sent to a shell (the remote login shell over
 * ssh, `sh -c` here). A POSIX single-quoted word keeps every byte but NUL literally:
 * spaces, quotes, `$()`, backticks, `;`, newlines and unicode arrive unchanged.
 */
export function shQuote(value: string): string {
  if (value.includes('\0')) throw new Error(`a shell argument cannot contain a NUL byte: ${JSON.stringify(value.slice(0, 60))}`);
  if (value !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A command line from argv: each word quoted. */
export function shJoin(argv: readonly string[]): string {
  return argv.map(shQuote).join(' ');
}

/**
 * A remote path: "~/x" is relative to the remote home (expanded by the remote shell through
 * "$HOME", the rest quoted); anything else is quoted as is.
 */
export function shPath(p: string): string {
  if (p === '~') return '"$HOME"';
  if (p.startsWith('~/')) return `"$HOME"/${shQuote(p.slice(2))}`;
  return shQuote(p);
}

/** Joins remote path segments with "/" (no normalisation of the user's part). */
export function joinRemote(base: string, ...parts: string[]): string {
  return [base.replace(/\/+$/, ''), ...parts].join('/');
}
