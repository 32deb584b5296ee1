// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'test-results/**', 'demo-workspace/**', 'harness-templates/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // The engine is a library with no editor in it: the CLI and headless loop run it without VS Code.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'src/core must not depend on the editor; put editor code in src/extension.' }],
        patterns: [{ group: ['**/extension/**', '**/webview/**', '**/cli/**', '**/server/**'], message: 'src/core depends on nothing above it.' }],
      }],
    },
  },
  {
    // Only the store touches its DuckDB connection: everyone else reads and writes through RolloutStore's methods.
    files: ['src/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['src/core/store/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: '@duckdb/node-api', allowTypeImports: true, message: 'only src/core/store opens DuckDB connections; use RolloutStore (all/one, ensureDerivedViews, withScopedViews, withTempTables, execute).' }],
        patterns: [{ group: ['**/store/instances', '**/store/derived', '**/store/ingest', '**/store/queries'], message: "the store's internals (its connection) stay in src/core/store; import RolloutStore from store/store." }],
      }],
    },
  },
  {
    // The CLI and the language server run without the editor: what they share with it lives in src/core or src/viewer.
    files: ['src/cli/**/*.ts', 'src/server/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'src/cli and src/server run without the editor; put editor code in src/extension.' }],
        patterns: [{ group: ['**/extension/**', '**/extension', '**/webview/**'], message: 'src/cli and src/server import nothing of the editor: move what they share to src/core or src/viewer.' }],
      }],
    },
  },
  {
    // The viewer layer (explorer backend, protocols, page shell, transport) is shared by the editor's panels and `evotrainer view`.
    files: ['src/viewer/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'src/viewer is editor-free: `evotrainer view` serves it without VS Code; put editor code in src/extension.' }],
        patterns: [{ group: ['**/extension/**', '**/extension', '**/webview/**', '**/cli/**', '**/server/**'], message: 'src/viewer depends only on src/core.' }],
      }],
    },
  },
  {
    // Webview apps talk to the host only by messages.
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'Webviews run in a browser frame; talk to the host through the protocol.' }],
        patterns: [{ group: ['**/core/**', '**/cli/**', '**/extension/**', '**/viewer/*/backend', '**/viewer/*/server', 'node:*'], message: 'Webviews import only protocol types and browser code.' }],
      }],
    },
  },
);
