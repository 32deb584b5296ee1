/**
 * SQL pieces for bulk plans (see BulkPlan): DuckDB reads a format's records itself, and
 * these turn its JSON values into exactly what the format's streaming reader stores, or
 * mark the record bad (its file is then streamed) where they cannot be sure.
 */

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const ident = (k: string) => `"${k.replace(/"/g, '""')}"`;
/** json_type of a JSON number. */
export const NUMERIC = `('DOUBLE', 'BIGINT', 'UBIGINT', 'HUGEINT')`;

/** A JSON string token (quotes included) and what lies outside strings, for the patterns below. */
const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/**
 * JSON text (as DuckDB writes a JSON value: no spaces) that JSON.stringify of the parsed
 * value would not write the same way: a control character escaped with upper-case hex
 * (DuckDB: \u001F, JavaScript: \u001f), or an object key that is a whole number
 * (JavaScript puts those first). `numbers` says whether a number outside strings is fine
 * (extra: its numbers are checked one by one, and a string holding `.0` before `,` `}` or
 * `]`, which wholeNumbersAsJs would change, is reported) or not (messages: none expected).
 */
export function differsFromJs(text: string, numbers: boolean): string {
  const other = numbers ? '[^"NI]' : '[^"0-9NI]';
  const bad = [String.raw`"(?:0|[1-9][0-9]*)":`, String.raw`"(?:[^"\\]|\\.)*\\u00[01][A-F]`, numbers ? '[NI]' : '[0-9NI]'];
  // Text with numbers goes through wholeNumbersAsJs, which would change such a string too.
  if (numbers) bad.push(String.raw`"(?:[^"\\]|\\.)*\.0[,}\]]`);
  return `regexp_matches(${text}, ${sqlString(`^(?:${other}|${STRING})*(?:${bad.join('|')})`)})`;
}

/**
 * `text` (JSON as DuckDB writes it, see differsFromJs) with whole numbers written `N.0` (as
 * DuckDB writes a whole double) written as JavaScript writes them, `N`. DuckDB writes the
 * shortest text that reads back as the same double, so a whole number ends in exactly `.0`
 * and only a number puts `.0` before `,` `}` or `]` outside strings: each `.0` before one of
 * them goes (a string holding such text is reported by differsFromJs(text, true)). One
 * pass of the regular expression: DuckDB's replace() copies the text per pattern, and three
 * of them cost 2.7 times this one (prime-rl's extra, 20,000 rows).
 */
export function wholeNumbersAsJs(text: string): string {
  return `regexp_replace(${text}, '\\.0([,}\\]])', '\\1', 'g')`;
}

/**
 * What json_type says of a value DuckDB's reader gives as JSON ('VARCHAR', 'ARRAY',
 * 'OBJECT', 'NULL' for JSON null; 'OTHER' for a number or boolean), from the first
 * character of its text, which DuckDB writes without spaces: json_type would parse the
 * whole text again (a message list is kilobytes).
 */
export function jsonKind(column: string): string {
  const text = `${column}::varchar`;
  return `(case when ${column} is null then 'NULL' when prefix(${text}, '"') then 'VARCHAR' when prefix(${text}, '[') then 'ARRAY' when prefix(${text}, '{') then 'OBJECT' else 'OTHER' end)`;
}

/**
 * The text JavaScript writes for a value DuckDB's reader gives as JSON (`column`, or an
 * element json_extract gives) when it is a finite number; null otherwise. The value's key
 * must be one of the plan's `jsonText` (see ShapeCheck): the file's scan then streams a file
 * where a number is written otherwise than JavaScript writes it (an exponent, more digits
 * than a double holds, -0), but for a `.0` fraction, which DuckDB keeps on a whole number
 * (it writes the shortest text that reads back as the same double, as JavaScript does) and
 * this drops.
 */
export function numberAsJs(column: string): string {
  const text = `${column}::varchar`;
  return `(case when ${jsonKind(column)} = 'OTHER' and ${text} not in ('null', 'true', 'false', 'NaN', 'Infinity', '-Infinity') then (case when suffix(${text}, '.0') then left(${text}, length(${text}) - 2) else ${text} end) end)`;
}
