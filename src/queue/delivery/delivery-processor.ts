/**
 * Posts one delivery job: the same build as a direct post (templates resolved now from this worker's
 * environment, W6; signed with the job's `webhook-id` and a fresh timestamp; the hardened client and its
 * SSRF guard). A failure is classified; the last one (410, a configuration problem, or attempts used up)
 * is recorded once in the operation's timeline as an `error` outcome with the code, never the body.
 */
import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { errorType } from '../../hooks/hook-errors.js';
import type { HookOutcomeRecord } from '../../hooks/hook-outcome.js';
import type { HookPoint } from '../../hooks/hook-points.js';
import type { WebhookSender } from '../../webhooks/webhook-sender.js';
import { attemptError, attemptFailure, type AttemptFailure } from './delivery-failure.js';
import { isDeliveryJobData, type DeliveryJobData } from './delivery-job.js';

/** Receives the record of a delivery that failed for good; may be async; errors are logged, not thrown. */
export type DeliveryFailureRecorder = (record: HookOutcomeRecord) => void | Promise<void>;

export interface DeliveryProcessorDeps {
  readonly sender: WebhookSender;
  readonly maxRetryAfterMs: number;
  readonly recordFailure?: DeliveryFailureRecorder;
}

const logger = new Logger('AgentHooksDeliveryWorker');

export function deliveryProcessor(deps: DeliveryProcessorDeps) {
  // One parameter on purpose: BullMQ makes an AbortController per job for a processor that takes its
  // signal (the third parameter), and only `worker.cancelJob` would ever fire it, which nothing here calls.
  // Each post is bounded by its own timeout instead, and closing lets posts in flight finish.
  return async (job: Job<DeliveryJobData>): Promise<void> => {
    const data: unknown = job.data;
    if (!isDeliveryJobData(data)) {
      // Not ours to guess at: nothing to post and no hook to record against.
      logger.error(`delivery job ${job.id ?? '?'} has no valid webhook data; dropped`);
      throw attemptError({ code: 'configuration', unrecoverable: true, message: 'delivery job has no valid webhook data' });
    }
    try {
      await deps.sender.post(
        { url: data.url, headers: data.headers, allowedEnvVars: data.allowedEnvVars, timeoutSeconds: data.timeoutSeconds, body: data.body, webhookId: data.webhookId, ...(data.traceContext ? { traceContext: data.traceContext } : {}) },
        { expectBody: false },
      );
    } catch (error) {
      const failure = attemptFailure(error, deps.maxRetryAfterMs);
      // BullMQ retries while attemptsMade + 1 < attempts (attemptsMade counts earlier failures).
      const final = failure.unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (final) await recordFinal(deps, job, data, failure);
      throw attemptError(failure);
    }
  };
}

async function recordFinal(deps: DeliveryProcessorDeps, job: Job, data: DeliveryJobData, failure: AttemptFailure): Promise<void> {
  logger.warn(`delivery of hook ${data.hookId} at ${data.point} failed for good after ${job.attemptsMade + 1} attempt(s) (${failure.code})`);
  if (!deps.recordFailure) return;
  const record: HookOutcomeRecord = {
    ...(data.operationId !== undefined ? { operationId: data.operationId } : {}),
    point: data.point as HookPoint,
    hookId: data.hookId,
    source: data.source ?? 'caller',
    outcome: 'error',
    errorCode: failure.code,
    // From enqueue to the final answer: what the delivery cost in all.
    latencyMs: Math.max(0, Date.now() - job.timestamp),
    transport: 'webhook',
    ...(typeof data.toolCallId === 'string' ? { toolCallId: data.toolCallId } : {}),
  };
  try {
    await deps.recordFailure(record);
  } catch (error) {
    logger.error(`could not record the failed delivery of hook ${data.hookId} (${errorType(error)})`);
  }
}
