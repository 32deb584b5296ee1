import { readFileSync } from 'node:fs';
import path from 'node:path';
import { git } from '../harness/git';
import { parseManifest, MANIFEST_FILE, type Manifest } from '../harness/manifest';
import type { NamedProfile } from './profile';
import { shQuote } from './quote';

/**
 * Job scripts from the harness's templates: `jobs/<name>.sbatch` in the harness at the
 * version's commit, else the manifest's `jobs.<name>` (command, cwd, env, timeout_minutes).
 * `{{name}}` placeholders are escaped for where they stand (see renderTemplate), and in
 * `#SBATCH` lines become the value with anything but [A-Za-z0-9._,:=/@+-] replaced by "_"
 * (sbatch reads those lines itself).
 */

export class TemplateError extends Error {}

export interface TemplateSource {
  /** Where it came from, for messages: "jobs/train.sbatch@abc1234" or "evotrainer.yaml jobs.train". */
  origin: string;
  text: string;
  /** From the manifest's timeout_minutes. */
  timeoutMinutes?: number;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** Values a template may use: version, commit, run, workdir, jobdir, job, profile.*, and the caller's vars (also as vars.*). */
export function templateValues(base: Record<string, string | number | undefined | null>, profile: NamedProfile, vars: Record<string, string> = {}): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(base)) if (v !== undefined && v !== null) m.set(k, String(v));
  const flat = (prefix: string, o: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined || v === null) continue;
      if (typeof v === 'object' && !Array.isArray(v)) flat(`${prefix}${k}.`, v as Record<string, unknown>);
      else m.set(`${prefix}${k}`, Array.isArray(v) ? v.join(' ') : String(v));
    }
  };
  flat('profile.', profile as unknown as Record<string, unknown>);
  for (const [k, v] of Object.entries(vars)) {
    m.set(`vars.${k}`, v);
    if (!m.has(k)) m.set(k, v);
  }
  return m;
}

const directiveSafe = (v: string) => v.replace(/[^A-Za-z0-9._,:=/@+-]/g, '_');

type Context = 'word' | 'single' | 'double' | 'comment' | 'heredoc' | 'heredoc-literal';

/** Escapes a value for where it stands in the script, so it always arrives as its exact bytes. */
function escapeFor(ctx: Context, v: string): string {
  switch (ctx) {
    case 'word':
      return shQuote(v);
    case 'single':
      return v.replace(/'/g, `'\\''`);
    case 'double':
      return v.replace(/[\\$`"]/g, (m) => `\\${m}`);
    case 'heredoc':
      return v.replace(/[\\$`]/g, (m) => `\\${m}`);
    case 'heredoc-literal':
    case 'comment':
      return v.replace(/[\r\n]+/g, ' ');
  }
}

/**
 * Renders a template. Each `{{name}}` is escaped for its place in the script, found by
 * scanning the shell's quoting as it goes: a bare word gets a quoted word, inside '…' or
 * "…" the value is escaped for those quotes, inside a here-document for it; `#SBATCH`
 * lines get a value sbatch reads as one token. `$(…)`, backticks, quotes and newlines in a
 * value stay data.
 */
export function renderTemplate(src: TemplateSource, values: Map<string, string>): string {
  const lines = src.text.split('\n');
  let quote: 'single' | 'double' | null = null;
  let heredoc: { end: string; literal: boolean; strip: boolean } | null = null;
  const out: string[] = [];
  lines.forEach((line, i) => {
    const lookup = (name: string) => {
      const v = values.get(name);
      if (v === undefined) throw new TemplateError(`${src.origin}:${i + 1}: unknown placeholder {{${name}}}; known: ${[...values.keys()].sort().join(', ')} (pass others with --var ${name}=VALUE)`);
      return v;
    };
    if (heredoc) {
      const h = heredoc;
      if ((h.strip ? line.replace(/^\t+/, '') : line) === h.end) heredoc = null;
      out.push(line.replace(PLACEHOLDER, (_m, name: string) => escapeFor(h.literal ? 'heredoc-literal' : 'heredoc', lookup(name))));
      return;
    }
    if (!quote && /^\s*#SBATCH\b/.test(line)) {
      out.push(line.replace(PLACEHOLDER, (_m, name: string) => directiveSafe(lookup(name))));
      return;
    }
    let res = '';
    let comment = false;
    let k = 0;
    while (k < line.length) {
      PLACEHOLDER.lastIndex = k;
      const m = PLACEHOLDER.exec(line);
      if (m && m.index === k) {
        res += escapeFor(comment ? 'comment' : (quote ?? 'word'), lookup(m[1]!));
        k += m[0].length;
        continue;
      }
      const ch = line[k]!;
      if (!comment) {
        if (quote === 'single') {
          if (ch === "'") quote = null;
        } else if (quote === 'double') {
          if (ch === '\\') {
            res += line.slice(k, k + 2);
            k += 2;
            continue;
          }
          if (ch === '"') quote = null;
        } else if (ch === '\\') {
          res += line.slice(k, k + 2);
          k += 2;
          continue;
        } else if (ch === "'") quote = 'single';
        else if (ch === '"') quote = 'double';
        else if (ch === '#' && (k === 0 || /\s/.test(line[k - 1]!))) comment = true;
      }
      res += ch;
      k++;
    }
    out.push(res);
    if (!quote) {
      const hd = /<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(line.replace(/(^|\s)#.*$/, ''));
      if (hd) heredoc = { end: hd[3]!, literal: hd[2] !== '', strip: hd[1] === '-' };
    }
  });
  return out.join('\n');
}

/** Finds the template `name` in the harness at `commit` (or in the working tree when commit is null). */
export async function loadTemplate(harness: string, commit: string | null, name: string): Promise<TemplateSource> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new TemplateError(`job template name "${name}" must be letters, digits, ".", "_" or "-"`);
  const file = `jobs/${name}.sbatch`;
  let text: string | null = null;
  let manifestText: string | null = null;
  if (commit) {
    const r = await git(harness, ['show', `${commit}:${file}`], { allowFail: true });
    if (r.code === 0) text = r.stdout;
    const m = await git(harness, ['show', `${commit}:${MANIFEST_FILE}`], { allowFail: true });
    if (m.code === 0) manifestText = m.stdout;
  } else {
    try {
      text = readFileSync(path.join(harness, file), 'utf8');
    } catch {
      /* none */
    }
    try {
      manifestText = readFileSync(path.join(harness, MANIFEST_FILE), 'utf8');
    } catch {
      /* none */
    }
  }
  const manifest: Manifest | null = manifestText === null ? null : parseManifest(manifestText, `${MANIFEST_FILE}${commit ? `@${commit.slice(0, 7)}` : ''}`);
  const job = manifest?.jobs?.[name as 'train' | 'rollout' | 'eval' | 'backtest'];
  if (text !== null) return { origin: `${file}${commit ? `@${commit.slice(0, 7)}` : ''}`, text, timeoutMinutes: job?.timeout_minutes };
  if (!job) {
    throw new TemplateError(`no job template "${name}" in ${harness}${commit ? ` at ${commit.slice(0, 7)}` : ''}: add ${file}, or jobs.${name} (command, cwd, env, timeout_minutes) to ${MANIFEST_FILE}`);
  }
  const lines = ['#!/bin/bash'];
  if (job.cwd) lines.push(`cd {{workdir}}/${shQuote(job.cwd)} || exit 1`);
  for (const [k, v] of Object.entries(job.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new TemplateError(`${MANIFEST_FILE} jobs.${name}.env: "${k}" is not a valid environment variable name`);
    // The value is data: placeholders in it expand inside the quotes.
    lines.push(`export ${k}=${shQuote(v)}`);
  }
  lines.push(job.command);
  return { origin: `${MANIFEST_FILE} jobs.${name}`, text: lines.join('\n') + '\n', timeoutMinutes: job.timeout_minutes };
}

/** Puts the prelude after the leading comment block (shebang and #SBATCH lines must stay first). */
export function withPrelude(script: string, prelude: string[]): string {
  const lines = script.split('\n');
  let i = 0;
  while (i < lines.length && (/^\s*#/.test(lines[i]!) || !lines[i]!.trim())) i++;
  const head = lines.slice(0, i);
  if (!head.length || !head[0]!.startsWith('#!')) head.unshift('#!/bin/bash');
  return [...head, ...prelude, ...lines.slice(i)].join('\n');
}
