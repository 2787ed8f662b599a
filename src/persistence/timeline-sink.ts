/**
 * The hook timeline: outcome records of operations go to the database in batches, so persisting them does
 * not dominate a step's cost (issue: outcome batching). Nothing is written while the runtime has not
 * opened its database (an app that only uses hooks has no timeline).
 */
import { Injectable } from '@nestjs/common';
import type { HookOutcomeRecord } from '../hooks/hook-outcome.js';
import type { HookOutcomeSink } from '../hooks/hook-ports.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class TimelineSink implements HookOutcomeSink {
  constructor(private readonly database: RuntimeDatabase) {}

  /** Records are kept only once the runtime has opened its database. */
  get active(): boolean {
    return this.database.current !== undefined;
  }

  record(outcome: HookOutcomeRecord): void {
    if (outcome.operationId === undefined) return;
    this.database.current?.timeline.record(outcome);
  }
}
