/**
 * The console's built files (dist/console/, made by `npm run build` from console/): listed once at start,
 * so a request can only ever name one of them — no path from a URL reaches the file system.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Next to the compiled server: dist/server/console/ → dist/console/. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

export interface ConsoleFiles {
  /** The absolute path of a file by its path under /console/ (`index.html`, `assets/index-….js`). */
  readonly files: ReadonlyMap<string, string>;
  /** False when the console was not built (a server run from sources): /console says so. */
  readonly built: boolean;
}

export function listConsoleFiles(dir: string = CONSOLE_DIR): ConsoleFiles {
  const files = new Map<string, string>();
  if (!existsSync(join(dir, 'index.html'))) return { files, built: false };
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.set(relative(dir, path).split(sep).join('/'), path);
    }
  };
  walk(dir);
  return { files, built: true };
}
