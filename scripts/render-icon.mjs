// Renders media/icon.svg to media/icon.png (256×256, the marketplace icon: it takes no
// SVG) with the Chromium the e2e suite drives. Rerun after editing the SVG; commit both.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumPath } from './e2e-setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const svg = readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 256, height: 256 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: path.join(root, 'media', 'icon.png'), omitBackground: true });
} finally {
  await browser.close();
}
console.log('wrote media/icon.png');
