/**
 * The delivery slice of `AgentHooksModule` as queue mode wires it: dispatcher → `WebhookDeliveryService` →
 * the built-in queued-delivery port (`QUEUED_DELIVERY_PROVIDERS`) → BullMQ, and the delivery worker host
 * (`DELIVERY_WORKER_PROVIDERS`) posting to a loopback receiver. Optionally the real runtime database and
 * timeline sink, so a final failure can be read back from the operation's timeline.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../../src/agent-hooks.module-definition.js';
import { TRACING_PROVIDERS } from '../../../src/tracing/tracing.providers.js';
import type { AgentHooksModuleOptions } from '../../../src/agent-hooks.options.js';
import { HookDispatcher } from '../../../src/hooks/hook-dispatcher.js';
import { DISPATCH_PROVIDERS } from '../../../src/hooks/dispatch.providers.js';
import type { HookOutcomeRecord } from '../../../src/hooks/hook-outcome.js';
import { CALLER_HOOK_VALIDATOR, HOOK_OUTCOME_SINK, WEBHOOK_DELIVERY } from '../../../src/hooks/hook-ports.js';
import { HookRegistry } from '../../../src/hooks/hook-registry.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { NO_SQL_SESSION_WRAPPER, SQL_SESSION_WRAPPER } from '../../../src/persistence/sql-session.js';
import { TimelineSink } from '../../../src/persistence/timeline-sink.js';
import { QUEUED_DELIVERY_OPTIONS, resolveDeliverySettings, type QueuedDeliveryOptions } from '../../../src/queue/delivery/delivery-settings.js';
import { DELIVERY_WORKER_PROVIDERS, QUEUED_DELIVERY_PROVIDERS } from '../../../src/queue/delivery/queued-delivery.providers.js';
import { WebhookDeliveryWorkerHost } from '../../../src/queue/delivery/webhook-delivery-worker.host.js';
import { redisConnection } from '../../../src/queue/queue-connection.js';
import { WebhookCallerHookValidator } from '../../../src/webhooks/webhook-config.schema.js';
import { WebhookDeliveryService } from '../../../src/webhooks/webhook-delivery.service.js';
import { until } from '../../support/eventually.js';

export const SIGNING_SECRET = `whsec_${Buffer.from('queued-delivery-test-key-32-byte').toString('base64')}`;

export interface DeliveryHarness {
  readonly moduleRef: TestingModule;
  readonly dispatcher: HookDispatcher;
  readonly registry: HookRegistry;
  readonly workers: WebhookDeliveryWorkerHost;
  /** Records the outcome sink received (empty when the real timeline is used). */
  readonly records: HookOutcomeRecord[];
  /** Resolves once no delivery job is left that is not over (waiting, delayed for a retry, running): no attempt can follow. */
  settled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly mode?: 'local' | 'queue';
  readonly redis?: string;
  readonly tuning: QueuedDeliveryOptions;
  /** The real runtime database and timeline sink instead of a recording sink. */
  readonly timeline?: boolean;
  /** Whether the delivery worker starts with the app (`queue.worker`, default true). */
  readonly worker?: boolean;
}

export async function bootDelivery(options: HarnessOptions): Promise<DeliveryHarness> {
  const records: HookOutcomeRecord[] = [];
  const moduleOptions: AgentHooksModuleOptions = {
    mode: options.mode ?? 'queue',
    ...(options.redis !== undefined ? { redis: options.redis } : {}),
    queue: { worker: options.worker ?? true },
    webhooks: { allowNetworks: ['127.0.0.0/8'], signingSecret: SIGNING_SECRET },
    ...(options.timeline ? { database: 'sqlite::memory:' } : {}),
  };
  const sink = options.timeline
    ? [RuntimeDatabase, { provide: SQL_SESSION_WRAPPER, useValue: NO_SQL_SESSION_WRAPPER }, TimelineSink, { provide: HOOK_OUTCOME_SINK, useExisting: TimelineSink }]
    : [{ provide: HOOK_OUTCOME_SINK, useValue: { record: (record: HookOutcomeRecord) => records.push(record) } }];
  const moduleRef = await Test.createTestingModule({
    providers: [
      { provide: AGENT_HOOKS_MODULE_OPTIONS, useValue: moduleOptions },
      { provide: QUEUED_DELIVERY_OPTIONS, useValue: options.tuning },
      { provide: CALLER_HOOK_VALIDATOR, useValue: new WebhookCallerHookValidator() },
      HookRegistry,
      ...DISPATCH_PROVIDERS,
      WebhookDeliveryService,
      { provide: WEBHOOK_DELIVERY, useExisting: WebhookDeliveryService },
      // SPEC O2: the trace context of the dispatching work goes with every delivery.
      ...TRACING_PROVIDERS,
      ...QUEUED_DELIVERY_PROVIDERS,
      ...DELIVERY_WORKER_PROVIDERS,
      ...sink,
    ],
  }).compile();
  await moduleRef.init();
  return {
    moduleRef,
    dispatcher: moduleRef.get(HookDispatcher),
    registry: moduleRef.get(HookRegistry),
    workers: moduleRef.get(WebhookDeliveryWorkerHost),
    records,
    settled: (timeoutMs) => deliveriesSettled(resolveDeliverySettings(moduleOptions, options.tuning), timeoutMs),
    close: () => moduleRef.close(),
  };
}

async function deliveriesSettled(settings: ReturnType<typeof resolveDeliverySettings>, timeoutMs = 15_000): Promise<void> {
  const { Queue } = await import('bullmq');
  const queue = new Queue(settings.queueName, { connection: redisConnection(settings.redisUrl), prefix: settings.prefix });
  try {
    await until(
      () => queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children'),
      (counts) => Object.values(counts).every((count) => count === 0),
      'the delivery jobs to settle',
      timeoutMs,
    );
  } finally {
    await queue.close();
  }
}

