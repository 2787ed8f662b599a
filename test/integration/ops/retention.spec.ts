/**
 * Issue 7 retention: the periodic purge of `serve --purge-older-than` (RetentionScheduler) on a real SQLite
 * file. Completed operations older than the age go with every child row; newer, running and waiting ones stay.
 */
import type { StoreDatabase } from '../../../src/persistence/store-database.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { openAgentHooksDataSource } from '../../../src/persistence/open-data-source.js';
import type { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { createRuntimeStores } from '../../../src/persistence/runtime-stores.js';
import { RetentionScheduler } from '../../../src/server/ops/retention-scheduler.js';
import { SqlDatabaseMaintenance } from '../../../src/persistence/sql-database-maintenance.js';
import { rowsOf, seedOperation, NO_ROWS } from './retention-seed.js';
import { eventually } from '../../support/eventually.js';

const DAY = 86_400_000;
const NOW = new Date('2030-06-01T00:00:00.000Z');

let dir: string;
let dataSource: DataSource;
let scheduler: RetentionScheduler;
/** The stores' handle on `dataSource`: what the seeds and reads use too. */
let handle: StoreDatabase;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-hooks-retention-'));
  dataSource = await openAgentHooksDataSource(`sqlite:${join(dir, 'db.sqlite')}`);
  // The scheduler's port, as the module binds it: over the runtime database's `stores()`.
  const stores = createRuntimeStores(dataSource);
  handle = stores.database;
  const database = { stores: async () => stores } as unknown as RuntimeDatabase;
  scheduler = new RetentionScheduler(new SqlDatabaseMaintenance(database));
});

afterEach(async () => {
  await scheduler.beforeApplicationShutdown();
  await dataSource.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('RetentionScheduler (serve --purge-older-than)', () => {
  it('purges at start: completed operations older than the age with all child rows; newer, running and waiting stay', async () => {
    const old = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 60 * DAY), completedAt: new Date(NOW.getTime() - 40 * DAY) });
    const oldRunning = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 60 * DAY) });
    const oldWaiting = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 60 * DAY), waiting: true });
    const recent = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 20 * DAY), completedAt: new Date(NOW.getTime() - 10 * DAY) });

    scheduler.start({ olderThanMs: 30 * DAY, everyMs: 60_000, clock: () => NOW });
    const counts = await scheduler.purgeNow(); // joins the purge started by start()
    expect(counts).toEqual({ operations: 1, messages: 2, callerHooks: 1, hookOutcomes: 1, interventions: 1, placeholders: 1 });

    expect(await rowsOf(handle, old)).toEqual(NO_ROWS);
    for (const kept of [oldRunning, oldWaiting, recent]) expect((await rowsOf(handle, kept)).operation).not.toBeNull();
    expect((await rowsOf(handle, oldWaiting)).operation?.status).toBe('waiting');
    expect((await rowsOf(handle, recent)).messages).toBe(2);
  });

  it('purges again every interval, as operations age past the cutoff', async () => {
    let now = NOW;
    const id = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 2 * DAY), completedAt: new Date(NOW.getTime() - 2 * DAY) });
    scheduler.start({ olderThanMs: 3 * DAY, everyMs: 25, clock: () => now });
    await scheduler.purgeNow();
    expect((await rowsOf(handle, id)).operation).not.toBeNull();
    now = new Date(NOW.getTime() + 2 * DAY); // the operation is now 4 days old
    await eventually(async () => (await rowsOf(handle, id)).operation === null, 'the scheduled purge to remove the operation');
    expect(await rowsOf(handle, id)).toEqual(NO_ROWS);
  });

  it('does nothing unless started, and nothing after shutdown', async () => {
    const id = await seedOperation(handle, { createdAt: new Date(NOW.getTime() - 60 * DAY), completedAt: new Date(NOW.getTime() - 60 * DAY) });
    expect(await scheduler.purgeNow()).toBeUndefined();
    await scheduler.beforeApplicationShutdown();
    scheduler.start({ olderThanMs: DAY, everyMs: 10, clock: () => NOW });
    expect(await scheduler.purgeNow()).toBeUndefined();
    expect((await rowsOf(handle, id)).operation).not.toBeNull();
  });
});
