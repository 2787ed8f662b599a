/**
 * The Prometheus registry of one app instance. Never prom-client's global registry: two apps in one process
 * (tests, a host app mounting the module twice) would share counters and clash on metric names.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

export const METRICS_REGISTRY = Symbol('AgentHooksMetricsRegistry');

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  // Process metrics (CPU, memory, event-loop lag, GC) on this registry only.
  collectDefaultMetrics({ register: registry });
  return registry;
}
