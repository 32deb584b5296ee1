/**
 * A document worker (a worker thread; see documentWorkers.ts): reads one whole-document
 * file (a trajectory) at a time, hashes its bytes, runs its importer and hands back the
 * records with their text columns already serialized, so that the importing thread only
 * appends. Bundled as dist/store-worker.js.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { recordText, type RecordText } from './documentText';
import { importerFor } from './importers';
import type { FormatName, TableReader } from './importers/types';
import { isBad, type RolloutRecord, type SourcePosition } from './rows';
import type { Split } from '../model';

export interface DocumentTask {
  id: number;
  file: string;
  format: FormatName;
  split?: Split;
  verdicts?: string;
}

/** A record as it crosses threads: prompt and response travel as text only (see RecordText). */
export type WireItem = { at: SourcePosition; record: RolloutRecord; text: RecordText } | { at: SourcePosition; bad: { file: string; line: number | null; reason: string; raw?: string } };

export type DocumentReply =
  | { id: number; ok: true; hash: string; items: WireItem[] }
  | { id: number; ok: false; error: { message: string; importError?: { file: string; line: number | null; reason: string; raw?: string } } };

/** Marks the worker data of a document worker (the entry does nothing when loaded otherwise). */
export const DOCUMENT_WORKER = 'evotrainer-document-worker';

const noTables: TableReader = {
  readParquet() {
    throw new Error('columnar files are read on the importing thread');
  },
};

export async function parseDocument(task: DocumentTask): Promise<DocumentReply> {
  try {
    const content = readFileSync(task.file);
    const hash = createHash('sha256').update(content).digest('hex');
    const items: WireItem[] = [];
    let last: RecordText | undefined;
    for await (const item of importerFor(task.format).read(task.file, { split: task.split, verdicts: task.verdicts, tables: noTables, content })) {
      if (isBad(item)) {
        const e = item.error;
        items.push({ at: item.at, bad: { file: e.file, line: e.line, reason: e.reason, raw: e.raw } });
        continue;
      }
      const text = recordText(item.record, last);
      last = text;
      items.push({ at: item.at, record: { ...item.record, prompt: '', response: '' }, text });
    }
    return { id: task.id, ok: true, hash, items };
  } catch (err) {
    const e = err as Error & { file?: string; line?: number | null; reason?: string; raw?: string };
    const importError = e.name === 'ImportError' && typeof e.file === 'string' && typeof e.reason === 'string' ? { file: e.file, line: e.line ?? null, reason: e.reason, raw: e.raw } : undefined;
    return { id: task.id, ok: false, error: { message: e.message ?? String(err), importError } };
  }
}

if (parentPort && workerData === DOCUMENT_WORKER) {
  const port = parentPort;
  port.on('message', (task: DocumentTask) => {
    void parseDocument(task).then((reply) => port.postMessage(reply));
  });
  port.postMessage('ready');
}
