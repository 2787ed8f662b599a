/**
 * DESIGN §6, the `database` option: the URL forms, an options object, `'host'`, and what opening a SQLite
 * file sets up (its folder, WAL, busy timeout). Errors never repeat a URL (it may carry a password).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { AGENT_HOOKS_ENTITIES } from '../../../src/persistence/agent-hooks-entities.js';
import {
  createDataSourceOptions,
  DEFAULT_DATABASE,
  isHostDatabase,
  SQLITE_BUSY_TIMEOUT_MS,
} from '../../../src/persistence/data-source-options.js';
import { OperationEntity } from '../../../src/persistence/entities/operation.entity.js';
import { AGENT_HOOKS_MIGRATIONS, AGENT_HOOKS_MIGRATIONS_TABLE } from '../../../src/persistence/migrations/agent-hooks-migrations.js';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';
import { DatabaseConfigError } from '../../../src/persistence/persistence-errors.js';
import { listTables } from './test-databases.js';

class HostThing {}

describe('createDataSourceOptions', () => {
  it("defaults to 'sqlite:./data/agent-hooks.sqlite', resolved from the base folder, WAL and busy timeout on, no synchronize", () => {
    expect(DEFAULT_DATABASE).toBe('sqlite:./data/agent-hooks.sqlite');
    const options = createDataSourceOptions(undefined, { baseDir: '/srv/app' }) as unknown as Record<string, unknown>;
    expect(options).toMatchObject({
      type: 'better-sqlite3',
      database: '/srv/app/data/agent-hooks.sqlite',
      enableWAL: true,
      timeout: SQLITE_BUSY_TIMEOUT_MS,
      synchronize: false,
      migrationsRun: false,
      migrationsTableName: AGENT_HOOKS_MIGRATIONS_TABLE,
    });
    expect(options['entities']).toEqual([...AGENT_HOOKS_ENTITIES]);
    expect(options['migrations']).toEqual([...AGENT_HOOKS_MIGRATIONS]);
  });

  it("maps 'sqlite::memory:' to an in-memory database without file settings", () => {
    const options = createDataSourceOptions('sqlite::memory:') as unknown as Record<string, unknown>;
    expect(options).toMatchObject({ type: 'better-sqlite3', database: ':memory:' });
    expect(options['enableWAL']).toBeUndefined();
  });

  it('takes absolute SQLite paths as they are, in both spellings', () => {
    expect(createDataSourceOptions('sqlite:/var/lib/a.sqlite')).toMatchObject({ database: '/var/lib/a.sqlite' });
    expect(createDataSourceOptions('sqlite:///var/lib/a.sqlite')).toMatchObject({ database: '/var/lib/a.sqlite' });
  });

  it('maps a postgres URL, moving ?schema= to the schema option and keeping the other parameters', () => {
    const options = createDataSourceOptions('postgres://app:pw@db.internal:5433/agents?schema=hooks&sslmode=require');
    expect(options).toMatchObject({ type: 'postgres', schema: 'hooks', synchronize: false });
    const url = new URL((options as { url: string }).url);
    expect(url.searchParams.get('schema')).toBeNull();
    expect(url.searchParams.get('sslmode')).toBe('require');
    expect(url.host).toBe('db.internal:5433');
    expect(createDataSourceOptions('postgresql://db/agents')).toMatchObject({ type: 'postgres', url: 'postgresql://db/agents' });
    expect((createDataSourceOptions('postgres://db/agents') as { schema?: string }).schema).toBeUndefined();
  });

  it('rejects a schema that is not a plain identifier, an unknown scheme and an empty SQLite path, without echoing the URL', () => {
    const attempts = ['postgres://u:s3cret@db/x?schema=a";drop', 'mysql://u:s3cret@db/x', 'sqlite:', 'not a url s3cret'];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        createDataSourceOptions(attempt);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(DatabaseConfigError);
      expect((caught as DatabaseConfigError).code).toBe('invalid_database');
      expect((caught as Error).message).not.toContain('s3cret');
    }
  });

  it("leaves 'host' to the module", () => {
    expect(isHostDatabase('host')).toBe(true);
    expect(isHostDatabase('sqlite::memory:')).toBe(false);
    expect(isHostDatabase(undefined)).toBe(false);
    expect(() => createDataSourceOptions('host')).toThrow(DatabaseConfigError);
  });

  it('uses an options object as given, adding our entities and migrations before the caller’s', () => {
    const options = createDataSourceOptions(
      { type: 'better-sqlite3', database: 'state/db.sqlite', entities: [HostThing, OperationEntity], timeout: 100, logging: true },
      { baseDir: '/srv/app' },
    ) as unknown as Record<string, unknown>;
    expect(options).toMatchObject({ database: '/srv/app/state/db.sqlite', timeout: 100, enableWAL: true, logging: true });
    expect(options['entities']).toEqual([...AGENT_HOOKS_ENTITIES, HostThing]);
    expect(options['migrationsTableName']).toBe(AGENT_HOOKS_MIGRATIONS_TABLE);
    const postgres = createDataSourceOptions({ type: 'postgres', host: 'db', schema: 's' }) as unknown as Record<string, unknown>;
    expect(postgres).toMatchObject({ type: 'postgres', host: 'db', schema: 's' });
    expect(() => createDataSourceOptions({ type: 'sqlite', database: 'x' })).toThrow(/better-sqlite3/);
    expect(() => createDataSourceOptions({ type: 'mysql' })).toThrow(DatabaseConfigError);
  });
});

describe('openAgentHooksDataSource on a SQLite file', () => {
  let folder: string;
  let dataSource: DataSource | undefined;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'agent-hooks-open-'));
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await rm(folder, { recursive: true, force: true });
  });

  it('creates the missing parent folders, migrates, and turns on WAL and the busy timeout', async () => {
    dataSource = await openAgentHooksDataSource('sqlite:./deep/er/agent-hooks.sqlite', { baseDir: folder });
    expect((await stat(join(folder, 'deep', 'er', 'agent-hooks.sqlite'))).isFile()).toBe(true);
    expect(await listTables(dataSource)).toContain('agent_hooks_operations');
    const [journal] = await dataSource.query('PRAGMA journal_mode');
    expect(journal.journal_mode).toBe('wal');
    const [busy] = await dataSource.query('PRAGMA busy_timeout');
    expect(Object.values(busy)[0]).toBe(SQLITE_BUSY_TIMEOUT_MS);
    const [synchronous] = await dataSource.query('PRAGMA synchronous');
    expect(synchronous.synchronous).toBe(1); // NORMAL
  });

  it('opens without migrating when asked (a host pipeline migrates)', async () => {
    const bare = await openAgentHooksDataSource('sqlite::memory:', { migrate: false });
    try {
      expect(await listTables(bare)).toEqual([]);
    } finally {
      await bare.destroy();
    }
  });
});
