/**
 * Operations by status (and completed ones by terminal reason), read from the database at scrape time.
 * A gauge over the database rather than counters on transitions: the database is the source of truth
 * shared by every process on it (queue workers, restarts), so the numbers are right whoever moved an
 * operation and survive a restart; and `waiting` is a population, not an event. The cost is one GROUP BY
 * per scrape over the (status, completed_at) index.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import { OPERATION_READER, type OperationCount, type OperationReadPort } from '../../runtime/operation-read.port.js';
import { METRICS_REGISTRY } from './metrics-registry.js';

const STATUSES = ['running', 'waiting', 'completed'] as const;

@Injectable()
export class OperationMetrics {
  private readonly logger = new Logger('Metrics');
  /** One query serves both gauges of a scrape (prom-client collects every metric at once). */
  private pending: Promise<OperationCount[] | undefined> | undefined;

  constructor(
    @Inject(OPERATION_READER) private readonly reads: OperationReadPort,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    // `collect` runs on every scrape; prom-client awaits it before rendering.
    const read = () => this.counts();
    new Gauge({
      name: 'agent_hooks_operations',
      help: 'Operations in the database by status (running, waiting, completed).',
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        const counts = await read();
        this.reset();
        if (!counts) return;
        for (const status of STATUSES) this.set({ status }, counts.filter((row) => row.status === status).reduce((sum, row) => sum + row.count, 0));
      },
    });
    new Gauge({
      name: 'agent_hooks_operations_completed',
      help: 'Completed operations in the database by terminal reason (done, error, interrupted, max_steps, cost_limit, token_limit, tool_limit, blocked).',
      labelNames: ['reason'],
      registers: [registry],
      async collect() {
        const counts = await read();
        this.reset();
        // A reason may come in several rows (one per limit): summed.
        const byReason = new Map<string, number>();
        for (const row of counts ?? []) if (row.status === 'completed' && row.reason) byReason.set(row.reason, (byReason.get(row.reason) ?? 0) + row.count);
        for (const [reason, count] of byReason) this.set({ reason }, count);
      },
    });
    new Gauge({
      name: 'agent_hooks_operations_limited',
      help: 'Completed operations ended by a tool or token budget (SPEC F4, F5), by the limit reached (maxTokens, maxToolCalls, perTool, maxRepeatedFailures).',
      labelNames: ['limit'],
      registers: [registry],
      async collect() {
        const counts = await read();
        this.reset();
        for (const row of counts ?? []) if (row.status === 'completed' && row.limit) this.inc({ limit: row.limit }, row.count);
      },
    });
  }

  /** Undefined when the database is not open, or the query failed (logged): the gauges are then left empty. */
  private counts(): Promise<OperationCount[] | undefined> {
    this.pending ??= this.query().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async query(): Promise<OperationCount[] | undefined> {
    // The port never opens the database for a scrape: a hooks-only app has none, and shutdown must not reopen it.
    try {
      return await this.reads.operationCounts();
    } catch (error) {
      this.logger.warn(`could not count operations (${error instanceof Error ? error.name : typeof error})`);
      return undefined;
    }
  }
}
