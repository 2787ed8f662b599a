/**
 * Queue mode's step jobs (DESIGN §4, used by `QueuedStepScheduler`): each step of an operation is one BullMQ job. The job id is
 * the operation and the version the step starts from, so scheduling the same state twice (the runtime and
 * the reconciler, an API retry) adds one job; steps of one operation are also kept apart by the database
 * lease the worker takes. Redis only carries work: a lost job is re-enqueued from the database.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorType } from '../hooks/hook-errors.js';
import type { Queue } from 'bullmq';
import { redisConnection } from './queue-connection.js';
import { QUEUE_SETTINGS, STEP_QUEUE_NAME, type QueueSettings } from './queue-settings.js';

export interface StepJobData {
  operationId: string;
  version: number;
}

/** BullMQ refuses ':' in custom job ids. */
export function stepJobId(operationId: string, version: number): string {
  return `step-${operationId}-v${version}`;
}

@Injectable()
export class StepQueue {
  private readonly logger = new Logger('AgentHooks:StepQueue');
  private queue: Promise<Queue<StepJobData>> | undefined;

  constructor(@Inject(QUEUE_SETTINGS) private readonly settings: QueueSettings) {}

  async schedule(operationId: string, version: number): Promise<void> {
    const queue = await this.open();
    await queue.add(
      'step',
      { operationId, version },
      {
        jobId: stepJobId(operationId, version),
        removeOnComplete: true,
        removeOnFail: { count: 1000 },
        // A step handed back by a stopping worker, or failing on infrastructure, is retried elsewhere.
        attempts: 10,
        backoff: { type: 'exponential', delay: 250 },
      },
    );
  }

  /** Closes the Redis connection; the `ShutdownCoordinator` calls it after the last step (G4). */
  async close(): Promise<void> {
    const queue = await this.queue?.catch(() => undefined);
    await queue?.close();
    this.queue = undefined;
  }

  /** Opened on first use: a local-mode app never loads BullMQ nor connects to Redis. */
  private open(): Promise<Queue<StepJobData>> {
    this.queue ??= import('bullmq').then(({ Queue }) => {
      const queue = new Queue<StepJobData>(STEP_QUEUE_NAME, { connection: redisConnection(this.settings.redis), prefix: this.settings.prefix });
      // Redis going away is expected (the reconciler recovers): log the type once per error, never the details.
      queue.on('error', (error) => this.logger.warn(`step queue: ${errorType(error)}${hasCode(error) ? ` (${error.code})` : ''}`));
      return queue;
    });
    return this.queue;
  }
}

function hasCode(error: unknown): error is { code: string } {
  return typeof (error as { code?: unknown })?.code === 'string';
}
