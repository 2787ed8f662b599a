/**
 * The queue room's providers. They are always registered (module options may be async), and idle unless
 * `mode: 'queue'`: no BullMQ import, no Redis connection, and the runtime's `StepScheduler` is the local
 * one. The reconciler is the runtime's (`OperationReconciler`, every mode).
 */
import type { Provider } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { LocalStepScheduler } from '../runtime/local-step-scheduler.js';
import { STEP_SCHEDULER } from '../runtime/step-scheduler.port.js';
import { LocalOperationDeltas } from '../runtime/streaming/local-operation-deltas.js';
import { OPERATION_DELTAS } from '../runtime/streaming/operation-deltas.port.js';
import { RedisOperationDeltas } from './redis-operation-deltas.js';
import { QueuedStepScheduler } from './queued-step-scheduler.js';
import { QUEUE_SETTINGS, queueSettings, type QueueSettings } from './queue-settings.js';
import { StepQueue } from './step-queue.js';
import { StepWorker } from './step-worker.js';

export const QUEUE_PROVIDERS: Provider[] = [
  { provide: QUEUE_SETTINGS, useFactory: (options: AgentHooksModuleOptions) => queueSettings(options), inject: [AGENT_HOOKS_MODULE_OPTIONS] },
  StepQueue,
  StepWorker,
  QueuedStepScheduler,
  // The one scheduler the runtime sees: the local one (the runtime's own provider) unless queue mode is on.
  {
    provide: STEP_SCHEDULER,
    useFactory: (settings: QueueSettings, queued: QueuedStepScheduler, local: LocalStepScheduler) => (settings.enabled ? queued : local),
    inject: [QUEUE_SETTINGS, QueuedStepScheduler, LocalStepScheduler],
  },
  // K5: deltas stay in the process unless queue mode is on; then they cross processes over Redis pub/sub.
  RedisOperationDeltas,
  {
    provide: OPERATION_DELTAS,
    useFactory: (settings: QueueSettings, redis: RedisOperationDeltas, local: LocalOperationDeltas) => (settings.enabled ? redis : local),
    inject: [QUEUE_SETTINGS, RedisOperationDeltas, LocalOperationDeltas],
  },
];
