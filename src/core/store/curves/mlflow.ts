import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { posix } from '../importers/util';
import { completeLines } from './lines';
import type { CurveItem, CurveReader } from './types';
import { consoleValue } from './verlConsole';

/**
 * MLflow's local file store (`mlruns/`, what `mlflow.log_metric` writes without a tracking
 * server): `mlruns/<experiment id>/<run id>/metrics/<key>`, one file per metric (a key
 * with `/` is a nested path), one line per logged value: `<timestamp ms> <value> <step>`
 * (MLflow's FileStore; lines of old stores have no step, which MLflow reads as 0). The
 * run's `meta.yaml` carries its name. verl's MLflow adapter logs its metrics with `@`
 * replaced by `_at_`.
 */
const METRICS_DIR = /^(.*)\/metrics\/(.+)$/;

function runDirOf(file: string): { dir: string; metric: string } | null {
  const m = METRICS_DIR.exec(posix(file));
  return m ? { dir: m[1]!, metric: m[2]! } : null;
}

export const mlflowReader: CurveReader = {
  format: 'mlflow',
  description: "MLflow's local file store: mlruns/<experiment>/<run>/metrics/<key>",
  matches(file) {
    const r = runDirOf(file);
    return r !== null && existsSync(path.join(r.dir, 'meta.yaml'));
  },
  runName(file) {
    const r = runDirOf(file);
    if (!r) return null;
    try {
      const meta = readFileSync(path.join(r.dir, 'meta.yaml'), 'utf8');
      const name = /^run_name:\s*['"]?(.+?)['"]?\s*$/m.exec(meta)?.[1];
      return name && name !== "''" ? name : path.basename(r.dir);
    } catch {
      return path.basename(r.dir);
    }
  },
  async *read(file, { startOffset, startLine, onChunk }): AsyncGenerator<CurveItem> {
    const metric = runDirOf(file)!.metric;
    for await (const l of completeLines(file, startOffset, startLine, onChunk)) {
      const at = { line: l.line, endOffset: l.endOffset };
      const parts = l.text.trim().split(' ');
      if (parts.length === 1 && parts[0] === '') continue;
      const ts = Number(parts[0]);
      const value = parts[1] === undefined ? undefined : consoleValue(parts[1]);
      const step = parts.length === 3 ? Number(parts[2]) : 0;
      if ((parts.length !== 2 && parts.length !== 3) || !Number.isInteger(ts) || value === undefined || !Number.isInteger(step)) {
        yield { bad: `expected "<timestamp ms> <value> <step>", as MLflow writes a metric line; found ${JSON.stringify(l.text.slice(0, 80))}`, at };
        continue;
      }
      yield { points: [{ step, metric, value, wallTime: ts / 1000 }], at };
    }
  },
};
