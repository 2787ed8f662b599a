/**
 * Operations surface of the standalone server: `/metrics` (a Prometheus registry per app), the optional
 * periodic purge, and the Redis check of `/readyz` in queue mode. Logging and graceful shutdown are process concerns, wired in
 * `bootstrap-server.ts` (`JsonLogger`, `requestLog`, `closeOnSignals`).
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { HookMetrics } from './hook-metrics.js';
import { createMetricsRegistry, METRICS_REGISTRY } from './metrics-registry.js';
import { MetricsController } from './metrics.controller.js';
import { OperationMetrics } from './operation-metrics.js';
import { READINESS_REDIS_URL, RedisReadiness } from './redis-readiness.js';
import { RetentionScheduler } from './retention-scheduler.js';
import { ToolMetrics } from './tool-metrics.js';

export interface OpsOptions {
  /** Queue mode's Redis: `/readyz` pings it. */
  redis?: string;
}

@Module({})
export class OpsModule {
  /** `agentHooks` is the server's own `AgentHooksModule.forRoot(…)` module: the same object, so one instance. */
  static forRoot(agentHooks: DynamicModule, options: OpsOptions = {}): DynamicModule {
    return {
      module: OpsModule,
      imports: [agentHooks],
      controllers: [MetricsController],
      providers: [
        { provide: METRICS_REGISTRY, useFactory: createMetricsRegistry },
        HookMetrics,
        OperationMetrics,
        ToolMetrics,
        RetentionScheduler,
        ...(options.redis !== undefined ? [{ provide: READINESS_REDIS_URL, useValue: options.redis }] : []),
        RedisReadiness,
      ],
      exports: [METRICS_REGISTRY, RetentionScheduler, RedisReadiness],
    };
  }
}
