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
    // Webview apps talk to the host only by messages.
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'Webviews run in a browser frame; talk to the host through the protocol.' }],
        patterns: [{ group: ['**/core/**', '**/cli/**', 'node:*'], message: 'Webviews import only protocol types and browser code.' }],
      }],
    },
  },
);
