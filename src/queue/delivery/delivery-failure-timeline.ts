/**
 * Puts the final failure of a queued delivery in its operation's timeline through the `HookOutcomeSink`
 * (the timeline sink persists it). A delivery worker may not have opened the runtime database yet (no
 * step ran in this process): it is opened first, so the record is kept rather than dropped.
 */
import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { errorType } from '../../hooks/hook-errors.js';
import type { HookOutcomeRecord } from '../../hooks/hook-outcome.js';
import { HOOK_OUTCOME_SINK, type HookOutcomeSink } from '../../hooks/hook-ports.js';
import { RuntimeDatabase } from '../../persistence/runtime-database.js';

@Injectable()
export class DeliveryFailureTimeline implements OnModuleInit {
  private readonly logger = new Logger('AgentHooksDeliveryWorker');

  constructor(
    @Optional() @Inject(HOOK_OUTCOME_SINK) private sink?: HookOutcomeSink,
    @Optional() private readonly database?: RuntimeDatabase,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {}

  /** A host app may provide the outcome sink in any of its modules. */
  onModuleInit(): void {
    if (this.sink || !this.moduleRef) return;
    try {
      this.sink = this.moduleRef.get<HookOutcomeSink>(HOOK_OUTCOME_SINK, { strict: false });
    } catch {
      // none provided: the failure is only logged
    }
  }

  async record(record: HookOutcomeRecord): Promise<void> {
    if (!this.sink) return;
    if (record.operationId !== undefined && this.database && !this.database.current) {
      try {
        await this.database.stores();
      } catch (error) {
        this.logger.error(`could not open the database to record a failed delivery (${errorType(error)})`);
        return;
      }
    }
    this.sink.record(record);
  }
}
