/**
 * Turns a validated `hooks:` entry into a callable handler (DESIGN §8): a `plugin` + `method` entry calls
 * the method on the plugin's one instance (constructed with no arguments, shared across points and runs);
 * a `ref` calls the exported function, or `Class.method` on one shared instance of that class (or a static
 * method / a method of an exported object). Problems are reported, never thrown one at a time: a plugin
 * that cannot be loaded is reported once, at its plugins.toml line; an entry that names a missing plugin or
 * method, at its agents.yaml line. A failed import names the missing module, or the error's type and the
 * first line of its message (never a stack or code frame); a failed constructor names its error type only;
 * no message carries a value from either file.
 */
import { errorType } from '../hooks/hook-errors.js';
import type { HookHandlerFn } from '../hooks/registered-hook.js';
import type { ConfigSource } from './agents-config.js';
import { formatKeyPath, type ConfigIssue, type KeyPath } from './config-error.js';
import type { HookEntry } from './hooks-section.js';
import type { ModuleReference } from './module-reference.js';
import { exportOf, MODULE_EXTENSIONS, type PluginModuleLoader } from './plugin-module-loader.js';
import type { PluginDeclaration, PluginsManifest } from './plugins-manifest.js';

type Callable = (this: unknown, arg: unknown) => unknown;

/** Where a reference was written, to report its problems there. */
interface Site {
  readonly file: string;
  readonly path: KeyPath;
  readonly line: number;
}

export class ConfigHookResolver {
  /** One instance per plugin id (`undefined`: it failed, already reported). */
  private readonly plugins = new Map<string, Promise<object | undefined>>();
  /** One instance per `module#Class` named by `ref: module:Class.method`. */
  private readonly refInstances = new Map<string, Promise<object | undefined>>();

  constructor(
    private readonly loader: PluginModuleLoader,
    private readonly manifest: PluginsManifest | undefined,
    private readonly config: ConfigSource,
    private readonly issues: ConfigIssue[],
  ) {}

  /** The entry's handler, or `undefined` when a problem was reported. */
  async handlerFor(entry: HookEntry): Promise<HookHandlerFn | undefined> {
    const { target } = entry;
    if (target.kind === 'plugin') {
      const declaration = this.manifest?.plugins.get(target.plugin);
      if (!declaration) {
        const defined = [...(this.manifest?.plugins.keys() ?? [])];
        // The id is an identifier checked by the schema (letters, digits, "_", "-"): naming it is safe (E5).
        this.reportInConfig([...entry.path, 'plugin'], `unknown plugin id ${JSON.stringify(target.plugin)} (${this.manifest?.file ?? 'the plugins file'} ${defined.length > 0 ? `defines: ${defined.join(', ')}` : 'defines no plugins'})`);
        return undefined;
      }
      const instance = await this.pluginInstance(declaration);
      if (!instance) return undefined;
      const handler = methodOf(instance, target.method);
      if (!handler) this.reportInConfig([...entry.path, 'method'], `not a method of the plugin (its methods: ${methodNames(instance).join(', ') || 'none'})`);
      return handler;
    }
    return this.refHandler(target, this.configSite([...entry.path, 'ref']));
  }

  private pluginInstance(declaration: PluginDeclaration): Promise<object | undefined> {
    let instance = this.plugins.get(declaration.id);
    if (!instance) {
      const site = { file: this.manifest!.file, path: declaration.path, line: declaration.line };
      instance = this.exported(declaration, site).then((exported) => (exported === undefined ? undefined : this.construct(exported.value, site)));
      this.plugins.set(declaration.id, instance);
    }
    return instance;
  }

  private async refHandler(reference: ModuleReference, site: Site): Promise<HookHandlerFn | undefined> {
    const exported = await this.exported(reference, site);
    if (!exported) return undefined;
    const { value, file } = exported;
    if (reference.member === undefined) {
      if (typeof value !== 'function') return this.reportAt(site, 'the export is not a function');
      if (isClass(value)) return this.reportAt(site, 'the export is a class: name one of its methods, "module/path:Class.method"');
      return ((arg: unknown) => (value as Callable)(arg)) as HookHandlerFn;
    }
    const member = reference.member;
    const prototype = typeof value === 'function' ? (value as { prototype?: unknown }).prototype : undefined;
    if (isObject(prototype) && methodOf(prototype, member)) {
      const key = `${file}#${reference.exportName}`;
      let instance = this.refInstances.get(key);
      if (!instance) {
        instance = this.construct(value, site);
        this.refInstances.set(key, instance);
      }
      const resolved = await instance;
      return resolved ? (methodOf(resolved, member) ?? this.reportAt(site, 'the export has no method of this name')) : undefined;
    }
    // A static method, or a method of an exported object.
    const handler = isObject(value) ? methodOf(value, member) : undefined;
    return handler ?? this.reportAt(site, 'the export has no method of this name');
  }

  /** Resolves, imports and picks the export a reference names; reports and answers `undefined` on failure. */
  private async exported(reference: Pick<ModuleReference, 'modulePath' | 'exportName'>, site: Site): Promise<{ value: unknown; file: string } | undefined> {
    const file = this.loader.resolve(reference.modulePath);
    if (file === undefined) {
      return this.reportAt(site, `module not found (a path relative to ${this.loader.baseDir}; without an extension ${MODULE_EXTENSIONS.join(', ')} are tried)`);
    }
    let module;
    try {
      module = await this.loader.import(file);
    } catch (error) {
      return this.reportAt(site, `importing the module failed (${importFailure(error)})`);
    }
    const value = exportOf(module, reference.exportName);
    if (value === undefined) {
      const names = Object.keys(module).filter((name) => name !== 'default' && name !== '__esModule');
      return this.reportAt(site, `the module has no export of this name (its exports: ${names.join(', ') || 'none'})`);
    }
    return { value, file };
  }

  /** A plugin class is constructed once, with no arguments (DESIGN §8). */
  private async construct(value: unknown, site: Site): Promise<object | undefined> {
    if (!isConstructible(value)) return this.reportAt(site, 'the export is not a class (a plugin is a class constructed with no arguments)');
    try {
      return new value() as object;
    } catch (error) {
      return this.reportAt(site, `constructing the plugin with no arguments failed (${errorType(error)})`);
    }
  }

  private configSite(path: KeyPath): Site {
    return { file: this.config.file, path, line: this.config.lineOf(path) };
  }

  private reportInConfig(path: KeyPath, message: string): void {
    this.reportAt(this.configSite(path), message);
  }

  private reportAt(site: Site, message: string): undefined {
    this.issues.push({ file: site.file, line: site.line, path: formatKeyPath(site.path), message });
    return undefined;
  }
}

/**
 * The method bound to its object, or `undefined`. `constructor` and the members every object or function
 * inherits (`toString`, `call`…) are not hook methods, unless the plugin defines its own.
 */
function methodOf(target: object, name: string): HookHandlerFn | undefined {
  if (name === 'constructor') return undefined;
  const method = (target as Record<string, unknown>)[name];
  if (typeof method !== 'function' || method === (Object.prototype as Record<string, unknown>)[name] || method === (Function.prototype as unknown as Record<string, unknown>)[name]) {
    return undefined;
  }
  return ((arg: unknown) => (method as Callable).call(target, arg)) as HookHandlerFn;
}

/** The instance's methods, own and inherited up to `Object.prototype`, for messages. */
function methodNames(instance: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = instance; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (name !== 'constructor' && typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names];
}

function isObject(value: unknown): value is object {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

function isClass(value: unknown): boolean {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

/**
 * Functions with a prototype can be called with `new`, except generator functions (arrow functions,
 * methods and async functions have no prototype). Told apart by name: a plugin may come from another realm.
 */
function isConstructible(value: unknown): value is new () => unknown {
  if (typeof value !== 'function' || !isObject((value as { prototype?: unknown }).prototype)) return false;
  const kind = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return kind !== 'GeneratorFunction' && kind !== 'AsyncGeneratorFunction';
}

/** Longest first line of an import error that is quoted. */
const MAX_IMPORT_ERROR_LINE = 200;

/**
 * Why an import failed: the module that could not be found (a dependency the plugin needs, e.g. a package
 * not installed), else the error's type and the first line of its message — never a stack, a code frame
 * or anything else from the file.
 */
export function importFailure(error: unknown): string {
  // Duck-typed: an error thrown in another realm (a vm context, a test runner) is no `instanceof Error` here.
  const message = typeof (error as { message?: unknown } | null)?.message === 'string' ? (error as { message: string }).message : '';
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  if (missing !== undefined) return `cannot find module '${missing}'`;
  const firstLine = (message.split('\n')[0] ?? '').trim();
  if (firstLine === '') return errorType(error);
  const line = firstLine.length > MAX_IMPORT_ERROR_LINE ? `${firstLine.slice(0, MAX_IMPORT_ERROR_LINE)}…` : firstLine;
  return `${errorType(error)}: ${line}`;
}
