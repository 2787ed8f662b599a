/**
 * Queue-mode settings, resolved once from the module options. BullMQ notices a stalled job after `lockMs`,
 * so a killed worker's job is retried within seconds; leases and the reconciler are the runtime's, in every
 * mode (`recovery-settings.ts`, which still reads `queue.leaseMs` / `queue.reconcileEveryMs`).
 */
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { DEFAULT_REDIS_URL, QueueConfigurationError } from './queue-connection.js';

export interface QueueSettings {
  enabled: boolean;
  redis: string;
  /** BullMQ key prefix: one per deployment (tests use one per test). */
  prefix: string;
  /** Whether this process runs step jobs (workers); an API-only process sets false. */
  worker: boolean;
  concurrency: number;
  lockMs: number;
}

export const STEP_QUEUE_NAME = 'agent-hooks-steps';

export function queueSettings(options: AgentHooksModuleOptions): QueueSettings {
  const queue = options.queue ?? {};
  if (options.mode === 'queue' && usesSqlite(options.database)) {
    // Workers in other processes must see the same operations: SQLite is one process's file.
    throw new QueueConfigurationError("mode 'queue' needs a shared database: set database to a postgres:// URL (or 'host' on PostgreSQL)");
  }
  return {
    enabled: options.mode === 'queue',
    redis: options.redis ?? DEFAULT_REDIS_URL,
    prefix: queue.prefix ?? 'agent-hooks',
    worker: queue.worker ?? true,
    concurrency: queue.concurrency ?? 4,
    lockMs: queue.lockMs ?? 10_000,
  };
}

export const QUEUE_SETTINGS = Symbol('nest-agent-hooks:QueueSettings');

function usesSqlite(database: AgentHooksModuleOptions['database']): boolean {
  if (database === undefined) return true; // the embedded default
  if (typeof database === 'string') return database.startsWith('sqlite');
  return database['type'] === 'better-sqlite3' || database['type'] === 'sqlite';
}
