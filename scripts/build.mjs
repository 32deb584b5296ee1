// Builds every bundle: extension host, language client + server, CLI, one per webview.
import { build, context } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostTarget, stageNative } from './native.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const dist = path.join(root, 'dist');

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  absWorkingDir: root,
  metafile: true,
};
// DuckDB's JS API is bundled once, into dist/duckdb.js, which the other bundles require
// on first use (never at activation); it loads its native binding from dist/native/
// (this machine's here; scripts/package.mjs puts each platform's in its package).
const external = (name, to) => ({
  name: `external:${name}`,
  setup(b) {
    b.onResolve({ filter: new RegExp(`^${name.replace('/', '\\/')}$`) }, () => ({ path: to, external: true }));
  },
});
const nodeCommon = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
  plugins: [external('@duckdb/node-api', './duckdb.js')],
  define: { EVOTRAINER_VERSION: JSON.stringify(pkg.version) },
};

const webviews = readdirSync(path.join(root, 'src/webview'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'shared')
  .map((d) => d.name);

const targets = [
  { ...nodeCommon, entryPoints: { extension: 'src/extension/extension.ts' }, outdir: 'dist' },
  { ...nodeCommon, entryPoints: { client: 'src/extension/client.ts' }, outdir: 'dist' },
  { ...nodeCommon, entryPoints: { panels: 'src/extension/panels.ts' }, outdir: 'dist' },
  { ...nodeCommon, entryPoints: { server: 'src/server/server.ts' }, outdir: 'dist' },
  { ...nodeCommon, entryPoints: { cli: 'src/cli/main.ts' }, outdir: 'dist' },
  // Parses trajectories on worker threads during imports (src/core/store/documentWorkers.ts finds it).
  { ...nodeCommon, entryPoints: { 'store-worker': 'src/core/store/documentWorker.ts' }, outdir: 'dist' },
  {
    ...nodeCommon,
    entryPoints: { duckdb: path.join(root, 'node_modules/@duckdb/node-api/lib/index.js') },
    outdir: 'dist',
    plugins: [external('@duckdb/node-bindings', './native/duckdb.node')],
  },
  {
    ...common,
    platform: 'browser',
    target: 'chrome120',
    format: 'esm',
    entryPoints: Object.fromEntries(webviews.map((w) => [w, `src/webview/${w}/main.ts`])),
    outdir: 'dist/webview',
  },
];

function copyAssets() {
  const out = path.join(dist, 'webview');
  mkdirSync(out, { recursive: true });
  for (const f of ['codicon.css', 'codicon.ttf']) cpSync(path.join(root, 'node_modules/@vscode/codicons/dist', f), path.join(out, f));
  cpSync(path.join(root, 'media/webview.css'), path.join(out, 'webview.css'));
  // The backtest worker is Python the engine runs as is (src/core/backtest/pool.ts finds it).
  cpSync(path.join(root, 'src/core/backtest/worker.py'), path.join(dist, 'backtest-worker.py'));
  try {
    stageNative(hostTarget, path.join(dist, 'native'));
  } catch (err) {
    console.warn(`no DuckDB binding for ${hostTarget} (${err instanceof Error ? err.message : err}): the store will not load from dist/`);
  }
}

// Files are overwritten in place (no wipe), so a build never pulls dist/ from under a
// running test; `--clean` starts from nothing.
if (process.argv.includes('--clean')) rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
copyAssets();
if (watch) {
  for (const t of targets) await (await context(t)).watch();
  console.log('watching…');
} else {
  const results = await Promise.all(targets.map((t) => build(t)));
  const meta = { inputs: {}, outputs: {} };
  for (const r of results) {
    Object.assign(meta.inputs, r.metafile.inputs);
    Object.assign(meta.outputs, r.metafile.outputs);
  }
  // Kept for the test that pins what activation loads.
  writeFileSync(path.join(dist, 'meta.json'), JSON.stringify(meta));
  const sizes = Object.entries(meta.outputs)
    .filter(([f]) => f.endsWith('.js'))
    .map(([f, o]) => `${f} ${(o.bytes / 1024).toFixed(0)} KiB`);
  console.log(`built ${production ? '(production) ' : ''}${sizes.join(', ')}`);
}
