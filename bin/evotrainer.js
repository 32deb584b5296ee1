#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const cli = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(cli)) {
  process.stderr.write(`evotrainer: ${cli} is not built yet. Run \`npm install\` (it builds) or \`npm run build\` in ${path.dirname(__dirname)}.\n`);
  process.exit(1);
}
require(cli).main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`evotrainer: ${err && err.stack ? err.stack : err}\n`); process.exitCode = 1; },
);
