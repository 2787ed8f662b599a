/**
 * The runtime's database, opened (and migrated) on first use: an app that only uses hooks never opens
 * one. Closing flushes the timeline batcher before the DataSource goes. With `database: 'host'` the
 * DataSource is the host app's (see `host-data-source.ts`): checked, never migrated, never closed here.
 */
import { existsSync } from 'node:fs';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Subject, type Observable } from 'rxjs';
import type { DataSource } from 'typeorm';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { CallerHookStore } from './caller-hook.store.js';
import { createDataSourceOptions, isHostDatabase, type AgentHooksDatabaseOption } from './data-source-options.js';
import { HookOutcomeStore } from './hook-outcome.store.js';
import { hostDataSource } from './host-data-source.js';
import { MessageStore } from './message.store.js';
import { openAgentHooksDataSource } from './open-data-source.js';
import { OperationStore } from './operation.store.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import { STEP_COMMIT_FAILPOINTS, StepCommitStore, type StepCommitFailpoints } from './step-commit.store.js';

export interface RuntimeStores {
  dataSource: DataSource;
  operations: OperationStore;
  callerHooks: CallerHookStore;
  messages: MessageStore;
  commits: StepCommitStore;
  outcomes: HookOutcomeStore;
  timeline: OutcomeBatcher;
}

@Injectable()
export class RuntimeDatabase {
  private readonly logger = new Logger('AgentHooksDatabase');
  private opening: Promise<RuntimeStores> | undefined;
  private opened: RuntimeStores | undefined;
  private readonly openedSubject = new Subject<DataSource>();
  /**
   * The DataSource each time the database opened (never on subscribe: nothing opens it just for
   * listening); what follows its committed changes (`OperationEventsService`) starts then.
   */
  readonly opened$: Observable<DataSource> = this.openedSubject.asObservable();

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) private readonly options: AgentHooksModuleOptions,
    private readonly moduleRef: ModuleRef,
    @Inject(STEP_COMMIT_FAILPOINTS) private readonly failpoints: StepCommitFailpoints,
  ) {}

  /** True when the DataSource is the host app's: it opens and closes it, not us. */
  get hostOwned(): boolean {
    return isHostDatabase(this.options.database);
  }

  /** The stores, opening the database and running migrations the first time (a host's DataSource: checking it). */
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
    const outcomes = new HookOutcomeStore(dataSource);
    const stores: RuntimeStores = {
      dataSource,
      operations: new OperationStore(dataSource),
      callerHooks: new CallerHookStore(dataSource),
      messages: new MessageStore(dataSource),
      commits: new StepCommitStore(dataSource, { failpoints: this.failpoints }),
      outcomes,
      timeline: new OutcomeBatcher(outcomes),
    };
    this.opened = stores;
    this.openedSubject.next(dataSource);
    return stores;
  }
}
