/**
 * Tool-call metrics the runtime announces (SPEC F3): results that arrived after their call's deadline and
 * were discarded — a tool that ignores its abort signal. Labelled by the tool's source only (a closed set):
 * never a tool name, arguments or a result (S1).
 */
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { LateToolResults } from '../../runtime/tools/late-tool-results.js';
import { METRICS_REGISTRY } from './metrics-registry.js';

@Injectable()
export class ToolMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly lateResults: Counter<'source'>;
  private subscription: Subscription | undefined;

  constructor(
    private readonly late: LateToolResults,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.lateResults = new Counter({
      name: 'agent_hooks_tool_late_results_total',
      help: 'Tool results that arrived after their call timed out and were discarded (the tool ignored its abort signal), by tool source.',
      labelNames: ['source'],
      registers: [registry],
    });
  }

  onModuleInit(): void {
    this.subscription ??= this.late.late$.subscribe(({ source }) => this.lateResults.inc({ source }));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }
}
