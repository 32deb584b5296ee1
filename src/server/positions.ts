import type { Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';

/**
 * The range of an engine problem given as 1-based line and column plus a length in
 * characters. A span running over several lines is cut at the end of its first line, so
 * a missing key under a mapping underlines the mapping's first line, not the whole file.
 */
export function rangeAt(doc: TextDocument, line: number, column: number, length = 1): Range {
  const text = doc.getText();
  const start = doc.offsetAt({ line: Math.max(0, line - 1), character: Math.max(0, column - 1) });
  let end = Math.min(text.length, start + Math.max(1, length));
  const eol = text.slice(start, end).search(/\r?\n/);
  if (eol > 0) end = start + eol;
  return { start: doc.positionAt(start), end: doc.positionAt(Math.max(end, start)) };
}

/** The text of a 1-based line, without its indentation and trailing blanks. */
export function lineRange(doc: TextDocument, line: number): Range {
  const l = Math.min(Math.max(0, line - 1), doc.lineCount - 1);
  const text = doc.getText({ start: { line: l, character: 0 }, end: { line: l + 1, character: 0 } }).replace(/\r?\n$/, '');
  const first = text.search(/\S/);
  if (first === -1) return { start: { line: l, character: 0 }, end: { line: l, character: Math.max(1, text.length) } };
  return { start: { line: l, character: first }, end: { line: l, character: text.trimEnd().length } };
}

/** The line of `doc` up to `character`. */
export function lineBefore(doc: TextDocument, line: number, character: number): string {
  return doc.getText({ start: { line, character: 0 }, end: { line, character } });
}

export function lineText(doc: TextDocument, line: number): string {
  return doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } }).replace(/\r?\n$/, '');
}
