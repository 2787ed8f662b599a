/**
 * The databases persistence tests run against (DESIGN §11): a real SQLite file in a temporary folder,
 * and the PostgreSQL server of `DATABASE_URL` in a schema of the file's own (created fresh, dropped in
 * `afterAll`), so test files can run in parallel. A PostgreSQL that does not answer fails the tests
 * under `CI=true`; elsewhere it is left out of the driver list with a loud warning.
 */
import type { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import type { RuntimeStores } from '../../../src/persistence/runtime-stores.js';
import type { SqlSessionWrapper } from '../../../src/persistence/sql-session.js';
import { StoreDatabase } from '../../../src/persistence/store-database.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';

export type DriverName = 'sqlite' | 'postgres';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let probe: Promise<boolean> | undefined;

async function postgresAnswers(): Promise<boolean> {
  const probe = new DataSource({ type: 'postgres', url: DATABASE_URL, connectTimeoutMS: 3000, poolSize: 1 });
  try {
    await probe.initialize();
    await probe.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    if (probe.isInitialized) await probe.destroy().catch(() => undefined);
  }
}

/** Whether the PostgreSQL of `DATABASE_URL` answers (probed once per test file). */
export function postgresAvailable(): Promise<boolean> {
  probe ??= postgresAnswers();
  return probe;
}

/** SQLite always; PostgreSQL when it answers — and always under CI, where an unreachable server must fail. */
export async function testDrivers(): Promise<DriverName[]> {
  if (await postgresAvailable()) return ['sqlite', 'postgres'];
  if (process.env.CI === 'true') return ['sqlite', 'postgres'];
  // eslint-disable-next-line no-console -- a skipped driver must be loud (DESIGN §11)
  console.warn(
    `\n!!! PostgreSQL at ${new URL(DATABASE_URL).host} does not answer: persistence tests run on SQLite ONLY.\n` +
      '!!! Start PostgreSQL (or set DATABASE_URL) to cover both drivers; under CI=true this is a failure.\n',
  );
  return ['sqlite'];
}

type DriverSuite = (driver: DriverName) => void;

/**
 * `describe.each` over the drivers of `testDrivers()`, and `describe.skip.each` over a driver left out, so
 * a PostgreSQL that does not answer shows as skipped tests in Jest's summary, not as tests that vanished.
 * Probe first, at collection time: `const describeEachDriver = await driverSuites();`.
 */
export async function driverSuites(): Promise<(title: string, suite: DriverSuite) => void> {
  const drivers = await testDrivers();
  const missing = (['sqlite', 'postgres'] as const).filter((driver) => !drivers.includes(driver));
  return (title, suite) => {
    describe.each(drivers)(title, suite);
    if (missing.length > 0) describe.skip.each(missing)(title, suite);
  };
}

/**
 * For a file that needs PostgreSQL itself: `describe` when it answers, else `describe.skip` after a loud
 * warning naming what goes untested. Under CI=true a PostgreSQL that does not answer fails the file.
 * Probe at collection time: `const describeOnPostgres = await postgresSuite('runtime/x.spec.ts', 'the x');`.
 */
export async function postgresSuite(file: string, untested: string): Promise<jest.Describe> {
  if (await postgresAvailable()) return describe;
  const where = `PostgreSQL at ${new URL(DATABASE_URL).host}`;
  if (process.env.CI === 'true') throw new Error(`${file}: ${where} does not answer (CI=true: a missing service is a failure)`);
  // Loud (DESIGN §11), and on stderr itself: Jest drops the console output of a file whose tests all skip.
  process.stderr.write(`\n!!! ${file}: ${where} does not answer: ${untested} is SKIPPED.\n!!! Start it (or set DATABASE_URL); under CI=true this is a failure.\n`);
  return describe.skip;
}

/** A fresh schema name: lowercase, unique per file and run. */
export function uniqueSchemaName(): string {
  return `agent_hooks_t_${randomBytes(6).toString('hex')}`;
}

/** The `database` option for PostgreSQL in `schema`. */
export function postgresDatabaseOption(schema: string): string {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

export interface TestDatabase {
  readonly driver: DriverName;
  /** The open, migrated DataSource (valid between beforeAll and afterAll). */
  readonly dataSource: DataSource;
  /** The `database` option it was opened with. */
  readonly option: string;
  /** PostgreSQL: the file's own schema. */
  readonly schema: string | undefined;
  /** The one store handle on `dataSource` every store of the test shares (its SQLite gate, its commit events), as the runtime's do. */
  readonly handle: StoreDatabase;
}

/** Opens a fresh database for the enclosing `describe` (beforeAll) and removes it (afterAll). */
/** `wrapSession`: the handle's SQL session as the runtime's is in a test that overrides `SQL_SESSION_WRAPPER`. */
export function useTestDatabase(driver: DriverName, settings: { migrate?: boolean; wrapSession?: SqlSessionWrapper } = {}): TestDatabase {
  let dataSource: DataSource | undefined;
  let handle: StoreDatabase | undefined;
  let option = '';
  let schema: string | undefined;
  let folder: string | undefined;

  beforeAll(async () => {
    if (driver === 'sqlite') {
      folder = await mkdtemp(join(tmpdir(), 'agent-hooks-persistence-'));
      // A nested, missing folder: opening must create it.
      option = `sqlite:${join(folder, 'nested', 'agent-hooks.sqlite')}`;
    } else {
      schema = uniqueSchemaName();
      option = postgresDatabaseOption(schema);
    }
    dataSource = await openAgentHooksDataSource(option, { migrate: settings.migrate ?? true });
    handle = new StoreDatabase(dataSource, settings.wrapSession);
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) {
      if (schema) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await dataSource.destroy();
    }
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  return {
    driver,
    get dataSource(): DataSource {
      if (!dataSource) throw new Error(`the ${driver} test database is not open (did beforeAll fail?)`);
      return dataSource;
    },
    get option() {
      return option;
    },
    get handle(): StoreDatabase {
      if (!handle) throw new Error(`the ${driver} test database is not open (did beforeAll fail?)`);
      return handle;
    },
    get schema() {
      return schema;
    },
  };
}

/** The tables of the database (SQLite) or of the DataSource's schema (PostgreSQL), sorted. */
export async function listTables(dataSource: DataSource): Promise<string[]> {
  const rows: { name: string }[] =
    dataSource.options.type === 'postgres'
      ? await dataSource.query(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = COALESCE($1, current_schema())`,
          [dataSource.options.schema ?? null],
        )
      : await dataSource.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`);
  return rows.map((row) => row.name).sort();
}

/** Drops a file's PostgreSQL schema (afterAll of tests that boot whole apps on it). */
export async function dropSchema(schema: string): Promise<void> {
  const admin = new DataSource({ type: 'postgres', url: DATABASE_URL, connectTimeoutMS: 5000, poolSize: 1 });
  await admin.initialize();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await admin.destroy();
  }
}

export interface AppDatabases {
  readonly drivers: DriverName[];
  /** `describe.each` over the drivers that answer, `describe.skip.each` (visible) over the others. */
  readonly describeEach: (title: string, suite: DriverSuite) => void;
  /** The PostgreSQL schema the apps share (for raw SQL in a test). */
  readonly schema: string;
  /** The `database` option of an app: PostgreSQL in the file's schema, or a SQLite file named `name`. */
  databaseFor(driver: DriverName, name: string): string;
}

/**
 * Databases for tests that boot whole apps (each app migrates its own): the drivers to cover, one
 * PostgreSQL schema and one temporary folder for the file, removed in `afterAll`.
 */
export async function appDatabases(prefix: string): Promise<AppDatabases> {
  const drivers = await testDrivers();
  const describeEach = await driverSuites();
  const schema = uniqueSchemaName();
  const folder = await mkdtemp(join(tmpdir(), `agent-hooks-${prefix}-`));
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
    if (drivers.includes('postgres')) await dropSchema(schema);
  }, 30_000);
  return {
    drivers,
    describeEach,
    schema,
    databaseFor: (driver, name) => (driver === 'postgres' ? postgresDatabaseOption(schema) : `sqlite:${join(folder, `${name}.sqlite`)}`),
  };
}

/** The part of `RuntimeDatabase` the read port uses, over stores built in a test: `stores()` and `current` (undefined until it opened). */
export function runtimeDatabaseOver(stores: RuntimeStores, open = true): RuntimeDatabase {
  return { stores: () => Promise.resolve(stores), current: open ? stores : undefined } as unknown as RuntimeDatabase;
}
