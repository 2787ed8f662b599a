/**
 * Hook metrics from the dispatcher's outcome records (`HookDispatcher.outcomes$`, one record per hook
 * invocation): invocations by point, source and outcome; latency by point; webhook errors by point and code.
 * Labels come from closed sets only (points, sources, outcomes, error codes): never a hook id (caller hooks
 * bring their own), a tool name with arguments, a payload or a secret (S1).
 */
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { HookDispatcher } from '../../hooks/hook-dispatcher.js';
import type { HookOutcomeRecord } from '../../hooks/hook-outcome.js';
import type { WebhookErrorCode } from '../../webhooks/webhook-error.js';
import { METRICS_REGISTRY } from './metrics-registry.js';

/**
 * The codes a failed webhook invocation records (a `Record` so a new `WebhookErrorCode` must be listed);
 * anything else — a stray `code` of some thrown error — is counted as `other`, keeping the label set closed.
 */
const WEBHOOK_ERROR_CODES: Readonly<Record<WebhookErrorCode, true>> = {
  configuration: true,
  http_error: true,
  network_error: true,
  timeout: true,
  invalid_response: true,
  response_too_large: true,
  cancelled: true,
  queue_unavailable: true,
};

function webhookErrorCode(code: string | undefined): string {
  return code !== undefined && Object.hasOwn(WEBHOOK_ERROR_CODES, code) ? code : 'other';
}

/** Seconds. In-process hooks take microseconds, webhooks milliseconds to their timeout (30 s by default). */
const LATENCY_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

@Injectable()
export class HookMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly invocations: Counter<'point' | 'source' | 'outcome'>;
  private readonly latency: Histogram<'point'>;
  private readonly webhookErrors: Counter<'point' | 'code'>;
  private subscription: Subscription | undefined;

  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.invocations = new Counter({
      name: 'agent_hooks_hook_invocations_total',
      help: 'Hook invocations by hook point, source (decorator, config, caller, environment) and outcome.',
      labelNames: ['point', 'source', 'outcome'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'agent_hooks_hook_latency_seconds',
      help: 'Hook invocation latency by hook point (handler call or webhook round trip).',
      labelNames: ['point'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.webhookErrors = new Counter({
      name: 'agent_hooks_webhook_errors_total',
      help: 'Failed webhook hook invocations by hook point and error code.',
      labelNames: ['point', 'code'],
      registers: [registry],
    });
  }

  /** Subscribed once per app, for its whole life. */
  onModuleInit(): void {
    this.subscription ??= this.dispatcher.outcomes$.subscribe((record) => this.observe(record));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private observe(record: HookOutcomeRecord): void {
    this.invocations.inc({ point: record.point, source: record.source, outcome: record.outcome });
    this.latency.observe({ point: record.point }, record.latencyMs / 1000);
    if (record.outcome === 'error' && record.transport === 'webhook') {
      this.webhookErrors.inc({ point: record.point, code: webhookErrorCode(record.errorCode) });
    }
  }
}
