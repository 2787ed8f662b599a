/**
 * The `database` option of `AgentHooksModule.forRoot` (DESIGN §6) → TypeORM `DataSourceOptions`:
 * - `'sqlite:./data/agent-hooks.sqlite'` (the default) — an embedded file, relative to `baseDir` (the cwd);
 *   WAL journal (readers never wait for the writer) and a busy timeout (another process's write waits
 *   instead of failing with SQLITE_BUSY);
 * - `'sqlite::memory:'` — one in-memory database per DataSource (tests, throwaway runs);
 * - `'postgres://…'` / `'postgresql://…'` — a shared server; an optional `?schema=NAME` query parameter
 *   becomes TypeORM's `schema` (the tables, indexes and the migrations table live there);
 * - a TypeORM options object (`type: 'better-sqlite3' | 'postgres'`) — used as given, plus our entities
 *   and migrations;
 * - `'host'` — not resolved here: the runtime uses the host app's own DataSource (`host-data-source.ts`),
 *   to which the host adds `AGENT_HOOKS_ENTITIES` and whose pipeline applies `AGENT_HOOKS_MIGRATIONS`.
 * `synchronize` stays off: the schema comes from migrations (`runAgentHooksMigrations`).
 */
import { isAbsolute, resolve } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { AGENT_HOOKS_ENTITIES } from './agent-hooks-entities.js';
import { AGENT_HOOKS_MIGRATIONS, AGENT_HOOKS_MIGRATIONS_TABLE } from './migrations/agent-hooks-migrations.js';
import { DatabaseConfigError } from './persistence-errors.js';

export const DEFAULT_DATABASE = 'sqlite:./data/agent-hooks.sqlite';
/** `database: 'host'`: use the host app's TypeORM DataSource. */
export const HOST_DATABASE = 'host';
/** How long a SQLite statement waits for another connection's write lock before SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

export type AgentHooksDatabaseOption = string | DataSourceOptions | Record<string, unknown>;

export interface DataSourceOptionsSettings {
  /** Folder relative SQLite paths resolve from; default `process.cwd()`. */
  baseDir?: string;
}

export function isHostDatabase(database: AgentHooksDatabaseOption | undefined): database is 'host' {
  return database === HOST_DATABASE;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function createDataSourceOptions(
  database: AgentHooksDatabaseOption | undefined = DEFAULT_DATABASE,
  settings: DataSourceOptionsSettings = {},
): DataSourceOptions {
  if (typeof database !== 'string') return fromOptionsObject(database as Record<string, unknown>, settings);
  if (isHostDatabase(database)) {
    throw new DatabaseConfigError(
      "database 'host' is the host app's own DataSource: the module injects it; it has no options of its own",
    );
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(database)?.[1]?.toLowerCase();
  if (scheme === 'sqlite') return sqliteOptions(database.slice('sqlite:'.length), settings);
  if (scheme === 'postgres' || scheme === 'postgresql') return postgresOptions(database);
  throw new DatabaseConfigError(
    `database must be 'sqlite:PATH', 'sqlite::memory:', 'postgres://…', a TypeORM options object or 'host' (got ${scheme ? `a '${scheme}:' URL` : 'an unrecognised value'})`,
  );
}

/** Fresh arrays per call: a caller may extend the options it gets back. */
const common = () => ({
  entities: [...AGENT_HOOKS_ENTITIES],
  migrations: [...AGENT_HOOKS_MIGRATIONS],
  migrationsTableName: AGENT_HOOKS_MIGRATIONS_TABLE,
  migrationsRun: false,
  synchronize: false,
  logging: false,
});

function sqliteOptions(location: string, settings: DataSourceOptionsSettings): DataSourceOptions {
  if (location === ':memory:') return { ...common(), type: 'better-sqlite3', database: ':memory:' };
  // `sqlite:///abs/path` (URL style) names the same file as `sqlite:/abs/path`.
  const path = location.startsWith('//') ? location.slice(2) : location;
  if (path.trim() === '') throw new DatabaseConfigError("database 'sqlite:' needs a file path or ':memory:'");
  const file = isAbsolute(path) ? path : resolve(settings.baseDir ?? process.cwd(), path);
  return { ...common(), ...sqliteFileDefaults(), type: 'better-sqlite3', database: file };
}

function sqliteFileDefaults() {
  return {
    enableWAL: true,
    timeout: SQLITE_BUSY_TIMEOUT_MS,
    // In WAL mode NORMAL is still safe against a crashed process (only a power loss can drop the last
    // commits), and it spares an fsync per commit: a step commits several times.
    prepareDatabase: (db: { pragma(source: string): unknown }) => {
      db.pragma('synchronous = NORMAL');
    },
  };
}

function postgresOptions(database: string): DataSourceOptions {
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    throw new DatabaseConfigError('database is not a valid postgres:// URL');
  }
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new DatabaseConfigError('the ?schema= of a postgres:// database must be a plain identifier (letters, digits, _)');
  }
  url.searchParams.delete('schema');
  return { ...common(), type: 'postgres', url: url.toString(), ...(schema ? { schema } : {}) };
}

function fromOptionsObject(given: Record<string, unknown>, settings: DataSourceOptionsSettings): DataSourceOptions {
  const type = given['type'];
  if (type === 'sqlite') throw new DatabaseConfigError("TypeORM 1 has no 'sqlite' driver: use type 'better-sqlite3'");
  if (type !== 'better-sqlite3' && type !== 'postgres') {
    throw new DatabaseConfigError("a database options object needs type 'better-sqlite3' or 'postgres'");
  }
  let sqliteFile: Record<string, unknown> = {};
  if (type === 'better-sqlite3') {
    const file = given['database'];
    if (typeof file !== 'string' || file.trim() === '') {
      throw new DatabaseConfigError("a 'better-sqlite3' options object needs a database file or ':memory:'");
    }
    if (file !== ':memory:') {
      // Our file defaults apply unless the caller set them; a relative path resolves like the URL form.
      const database = isAbsolute(file) ? file : resolve(settings.baseDir ?? process.cwd(), file);
      sqliteFile = { ...sqliteFileDefaults(), ...pick(given, ['enableWAL', 'timeout', 'prepareDatabase']), database };
    }
  }
  return {
    ...given,
    ...sqliteFile,
    entities: union(AGENT_HOOKS_ENTITIES, given['entities']),
    migrations: union(AGENT_HOOKS_MIGRATIONS, given['migrations']),
    migrationsTableName: given['migrationsTableName'] ?? AGENT_HOOKS_MIGRATIONS_TABLE,
  } as unknown as DataSourceOptions;
}

function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]));
}

/** Ours first, then the caller's (an array or a name → class map, as TypeORM accepts), without duplicates. */
function union(ours: readonly unknown[], theirs: unknown): unknown[] {
  const list = Array.isArray(theirs) ? theirs : theirs && typeof theirs === 'object' ? Object.values(theirs) : [];
  return [...ours, ...list.filter((item) => !ours.includes(item))];
}
