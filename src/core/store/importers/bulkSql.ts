/**
 * SQL pieces for bulk plans (see BulkPlan): DuckDB reads a format's records itself, and
 * these turn its JSON values into exactly what the format's streaming reader stores, or
 * mark the record bad (its file is then streamed) where they cannot be sure.
 */

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const ident = (k: string) => `"${k.replace(/"/g, '""')}"`;
/** json_type of a JSON number. */
export const NUMERIC = `('DOUBLE', 'BIGINT', 'UBIGINT', 'HUGEINT')`;

/**
 * A number's text as JavaScript writes it (String(n), JSON.stringify(n)), from `expr`, any
 * expression that casts to DOUBLE; null when JavaScript would write an exponent or DuckDB
 * does (beyond 1e15 or under 1e-4; then the record is left to the streaming reader), or
 * when it is not finite. DuckDB writes the shortest text that reads back as the same
 * double, like JavaScript, but keeps a `.0` on whole numbers and a sign on zero.
 */
export function jsNumber(expr: string): string {
  const d = `(${expr})::double`;
  return `(case when ${d} = 0 then '0' when isfinite(${d}) and not contains(${d}::varchar, 'e') then regexp_replace(${d}::varchar, '\\.0$', '') end)`;
}

/** A JSON string token (quotes included) and what lies outside strings, for the patterns below. */
const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/**
 * JSON text (as DuckDB writes a JSON value: no spaces) that JSON.stringify of the parsed
 * value would not write the same way: a control character escaped with upper-case hex
 * (DuckDB: \u001F, JavaScript: \u001f), or an object key that is a whole number
 * (JavaScript puts those first). `numbers` says whether a number outside strings is fine
 * (extra: its numbers are checked one by one) or not (messages: none expected).
 */
export function differsFromJs(text: string, numbers: boolean): string {
  const other = numbers ? '[^"NI]' : '[^"0-9NI]';
  const bad = [String.raw`"(?:0|[1-9][0-9]*)":`, String.raw`"(?:[^"\\]|\\.)*\\u00[01][A-F]`, numbers ? '[NI]' : '[0-9NI]'];
  return `regexp_matches(${text}, ${sqlString(`^(?:${other}|${STRING})*(?:${bad.join('|')})`)})`;
}

/** `text` with whole numbers written `N.0` (Python's json.dumps) written as JavaScript writes them, `N`. */
export function wholeNumbersAsJs(text: string): string {
  return `regexp_replace(${text}, ${sqlString(String.raw`(${STRING})|(-?[0-9]+)\.0+([,}\]])`)}, '\\1\\2\\3', 'g')`;
}
