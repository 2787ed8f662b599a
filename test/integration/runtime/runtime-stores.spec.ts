/**
 * Issue 13 item 5 — persistence as providers: the runtime's database opens on first use and then builds
 * every store once, on one `StoreDatabase` handle of the app's own (`RuntimeDatabase.stores()`); two apps in
 * one process share no handle and no store; "not found" reaches the runtime as one error type.
 */
import { RuntimeDatabase, type RuntimeStores } from '../../../src/persistence/runtime-database.js';
import type { StoreDatabase } from '../../../src/persistence/store-database.js';
import { UnknownOperationError } from '../../../src/runtime/runtime-errors.js';
import { bootRuntime, guardUnhandledRejections, rejectionOf, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

guardUnhandledRejections();

const CONFIG = scriptedConfig({
  system: 'runtime-stores',
  models: {
    plain: [answer('done')],
  },
  agents: {
    plain: { model: 'plain' },
  },
});

/** The handle a store was built on (every store keeps it as `db`). */
const handleOf = (store: object): StoreDatabase => (store as { db: StoreDatabase }).db;

const STORES = ['operations', 'callerHooks', 'messages', 'commits', 'outcomes', 'interventions', 'waits', 'placeholders', 'owed', 'leases', 'retention'] as const;

describe('the runtime database builds its stores once, per app', () => {
  const apps: RuntimeApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
  });

  it('opens on first use only: booting an app that has not run anything opens no database', async () => {
    const app = await bootRuntime({ config: CONFIG });
    apps.push(app);
    const database = app.moduleRef.get(RuntimeDatabase);
    expect(database.current).toBeUndefined();
    expect(database.mayHoldWork()).toBe(false);
    await within(app.runtime.run('hi', { agentId: 'plain' }), 'run');
    expect(database.current).toBeDefined();
    expect(database.mayHoldWork()).toBe(true);
  });

  it('one bundle per opening: every store is built on the one handle of that DataSource', async () => {
    const app = await bootRuntime({ config: CONFIG });
    apps.push(app);
    const database = app.moduleRef.get(RuntimeDatabase);
    const stores = await database.stores();
    expect(await database.stores()).toBe(stores);
    expect(stores.database.dataSource).toBe(stores.dataSource);
    for (const name of STORES) expect({ name, same: handleOf(stores[name]) === stores.database }).toEqual({ name, same: true });
  });

  it('two apps in one process build separate bundles; closing one leaves the other working', async () => {
    const first = await bootRuntime({ config: CONFIG });
    const second = await bootRuntime({ config: CONFIG });
    apps.push(first, second);
    const [a, b]: RuntimeStores[] = await Promise.all([first, second].map((app) => app.moduleRef.get(RuntimeDatabase).stores()));
    expect(a).not.toBe(b);
    expect(a!.database).not.toBe(b!.database);
    for (const name of STORES) expect(a![name]).not.toBe(b![name]);

    await first.close();
    const result = await within(second.runtime.run('hi', { agentId: 'plain' }), 'run after the other app closed');
    expect(result).toMatchObject({ reason: 'done', content: 'done' });
    expect((await second.store.messages(result.operationId)).map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it('"not found" is one type at the runtime store port: UnknownOperationError, never the persistence error', async () => {
    const app = await bootRuntime({ config: CONFIG });
    apps.push(app);
    const commit = await rejectionOf(app.store.commit('no-such-operation', 0, undefined, { stepIndex: 1 }));
    expect(commit).toBeInstanceOf(UnknownOperationError);
    expect(commit).toMatchObject({ operationId: 'no-such-operation', code: 'not_found' });
    expect(await rejectionOf(app.store.pause('no-such-operation'))).toBeInstanceOf(UnknownOperationError);
    expect(await app.store.getOperation('no-such-operation')).toBeNull();
  });
});
