// Copies the README's screenshots from the e2e suite's output (test-results/e2e/, written
// by `npm run test:e2e`) to media/screenshots/, where the README and the packages take
// them from. Run after the e2e suite; commit what changed.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The README's screenshots, each written by test/e2e/backtest.test.ts. */
const README_SCREENSHOTS = ['walkthrough-done-dark.png', 'backtest-diff-dark.png', 'gate-result-reject-dark.png'];

const from = path.join(root, 'test-results', 'e2e');
const to = path.join(root, 'media', 'screenshots');
const missing = README_SCREENSHOTS.filter((f) => !existsSync(path.join(from, f)));
if (missing.length) {
  console.error(`not in test-results/e2e (run npm run test:e2e first): ${missing.join(', ')}`);
  process.exit(1);
}
mkdirSync(to, { recursive: true });
for (const f of README_SCREENSHOTS) copyFileSync(path.join(from, f), path.join(to, f));
console.log(`copied ${README_SCREENSHOTS.length} screenshots to media/screenshots/`);
