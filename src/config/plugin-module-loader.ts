/**
 * Finds and imports plugin modules (DESIGN §8). A module path is relative to the base folder (the one
 * holding `plugins/`); without a known extension `.ts`, `.js`, `.mjs` are tried in that order. `.js`/`.mjs`
 * load natively with `import()`; TypeScript goes through jiti, because Node 20 cannot strip types itself.
 * jiti is imported only when a `.ts` plugin is, and it leaves packages (such as `nest-agent-hooks` itself)
 * to Node, so a plugin shares the host's copy of the package. One loader per config load: a module
 * imported twice in one load is imported once.
 */
import { statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Tried in this order when a module path has no extension (DESIGN §8). */
export const MODULE_EXTENSIONS = ['.ts', '.js', '.mjs'] as const;
const KNOWN_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

export type ModuleNamespace = Readonly<Record<string, unknown>>;

interface Jiti {
  import(id: string): Promise<unknown>;
}

export class PluginModuleLoader {
  private readonly modules = new Map<string, Promise<ModuleNamespace>>();
  private jiti: Promise<Jiti> | undefined;

  constructor(readonly baseDir: string) {}

  /** The file a module path names, or `undefined` when no candidate exists. */
  resolve(modulePath: string): string | undefined {
    const base = resolve(this.baseDir, modulePath);
    if (KNOWN_EXTENSIONS.has(extname(base))) return isFile(base) ? base : undefined;
    return MODULE_EXTENSIONS.map((extension) => base + extension).find(isFile);
  }

  /** Imports a resolved file once per loader. */
  import(file: string): Promise<ModuleNamespace> {
    let loaded = this.modules.get(file);
    if (!loaded) {
      loaded = TYPESCRIPT.has(extname(file)) ? this.importTypeScript(file) : (import(pathToFileURL(file).href) as Promise<ModuleNamespace>);
      this.modules.set(file, loaded);
    }
    return loaded;
  }

  private async importTypeScript(file: string): Promise<ModuleNamespace> {
    this.jiti ??= import('jiti').then(({ createJiti }) => createJiti(import.meta.url) as Jiti);
    return (await (await this.jiti).import(file)) as ModuleNamespace;
  }
}

/**
 * An export by name. A CommonJS module imported natively may hold it only on `module.exports` (its default
 * export) when Node could not detect the name statically.
 */
export function exportOf(module: ModuleNamespace, name: string): unknown {
  const direct = module[name];
  if (direct !== undefined || name === 'default') return direct;
  const fallback = module.default;
  return isPlainObject(fallback) && Object.hasOwn(fallback, name) ? fallback[name] : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
