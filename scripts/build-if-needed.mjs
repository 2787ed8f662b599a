// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone;
// the same for the console (console/ → dist/console/, by Vite).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const stamp = 'dist/cli/agentctl.js';

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const sourcesChanged = Math.max(newest('src'), statSync('tsconfig.json').mtimeMs, statSync('tsconfig.build.json').mtimeMs);
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sourcesChanged) {
  process.stdout.write('building dist/ …\n');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}

const consoleStamp = 'dist/console/index.html';
const consoleChanged = Math.max(newest('console'), statSync('package-lock.json').mtimeMs);
if (!existsSync(consoleStamp) || statSync(consoleStamp).mtimeMs < consoleChanged) {
  process.stdout.write('building dist/console/ …\n');
  execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', 'console', '--logLevel', 'warn'], { stdio: 'inherit' });
}
