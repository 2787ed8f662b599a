/**
 * The queue room's providers. They are always registered (module options may be async), and idle unless
 * `mode: 'queue'`: no BullMQ import, no Redis connection, no scheduler for the runtime. The reconciler is
 * the runtime's (`OperationReconciler`, every mode).
 */
import type { Provider } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { STEP_SCHEDULER } from '../runtime/step-scheduler.port.js';
import { QUEUE_SETTINGS, queueSettings, type QueueSettings } from './queue-settings.js';
import { StepQueue } from './step-queue.js';
import { StepWorker } from './step-worker.js';

export const QUEUE_PROVIDERS: Provider[] = [
  { provide: QUEUE_SETTINGS, useFactory: (options: AgentHooksModuleOptions) => queueSettings(options), inject: [AGENT_HOOKS_MODULE_OPTIONS] },
  StepQueue,
  StepWorker,
  {
    provide: STEP_SCHEDULER,
    useFactory: (settings: QueueSettings, queue: StepQueue) => (settings.enabled ? queue : null),
    inject: [QUEUE_SETTINGS, StepQueue],
  },
];
