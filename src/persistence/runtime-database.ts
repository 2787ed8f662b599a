/**
 * The runtime's database, opened (and migrated) on first use: an app that only uses hooks never opens
 * one. Closing flushes the timeline batcher before the DataSource goes. With `database: 'host'` the
 * DataSource is the host app's (see `host-data-source.ts`): checked, never migrated, never closed here.
 */
import { existsSync } from 'node:fs';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Subject, type Observable } from 'rxjs';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { createDataSourceOptions, isHostDatabase, type AgentHooksDatabaseOption } from './data-source-options.js';
import { hostDataSource } from './host-data-source.js';
import { openAgentHooksDataSource } from './open-data-source.js';
import { createRuntimeStores, type RuntimeStores } from './runtime-stores.js';
import { SQL_SESSION_WRAPPER, type SqlSessionWrapper } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';

export type { RuntimeStores } from './runtime-stores.js';

@Injectable()
export class RuntimeDatabase {
  private readonly logger = new Logger('AgentHooksDatabase');
  private opening: Promise<RuntimeStores> | undefined;
  private opened: RuntimeStores | undefined;
  private readonly openedSubject = new Subject<StoreDatabase>();
  /**
   * The stores' handle each time the database opened (never on subscribe: nothing opens it just for
   * listening); what follows its committed changes (`OperationEventsService`) starts then.
   */
  readonly opened$: Observable<StoreDatabase> = this.openedSubject.asObservable();

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) private readonly options: AgentHooksModuleOptions,
    private readonly moduleRef: ModuleRef,
    @Inject(SQL_SESSION_WRAPPER) private readonly wrapSession: SqlSessionWrapper,
  ) {}

  /** True when the DataSource is the host app's: it opens and closes it, not us. */
  get hostOwned(): boolean {
    return isHostDatabase(this.options.database);
  }

  /**
   * Every store of this app's database (`RuntimeStores`), opening the database and running migrations the
   * first time (a host's DataSource: checking it). Built once per opening, on one `StoreDatabase` handle
   * of this app's own: two apps in one process never share a handle, a gate or a store.
   */
  stores(): Promise<RuntimeStores> {
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined; // a later call may retry (e.g. PostgreSQL was still starting)
      throw error;
    });
    return this.opening;
  }

  /**
   * Whether the database may hold work to recover, without opening it: an open one, a host's or a
   * PostgreSQL one may; a SQLite file that does not exist yet, or an in-memory one never opened, cannot — a
   * reconcile pass must not create a database an app that only uses hooks never asked for.
   */
  mayHoldWork(): boolean {
    if (this.opened || this.opening || this.hostOwned) return true;
    try {
      const options = createDataSourceOptions(this.options.database as AgentHooksDatabaseOption | undefined);
      if (options.type !== 'better-sqlite3') return true;
      return options.database !== ':memory:' && existsSync(options.database);
    } catch {
      return false; // a bad database option is reported by whoever opens it
    }
  }

  /** The stores if the database is already open, without opening it. */
  get current(): RuntimeStores | undefined {
    return this.opened;
  }

  /** Flushes the timeline and closes our DataSource (a host's stays open); the `ShutdownCoordinator` calls it last (G4). */
  async close(): Promise<void> {
    const stores = this.opened ?? (this.opening ? await this.opening.catch(() => undefined) : undefined);
    if (!stores) return;
    await stores.timeline.close().catch(() => this.logger.error('could not flush the hook timeline'));
    if (!this.hostOwned) await stores.dataSource.destroy();
    this.opened = undefined;
    this.opening = undefined;
  }

  private async open(): Promise<RuntimeStores> {
    const dataSource = this.hostOwned
      ? await hostDataSource(this.moduleRef)
      : await openAgentHooksDataSource(this.options.database, { migrate: true });
    const stores = createRuntimeStores(dataSource, { wrapSession: this.wrapSession });
    this.opened = stores;
    this.openedSubject.next(stores.database);
    return stores;
  }
}
