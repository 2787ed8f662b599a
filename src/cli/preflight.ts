/**
 * Checks agentctl makes before it boots Nest, so a missing or invalid config file, or an impossible queue
 * setup, is one clear line and exit 2 — not a framework stack trace. Hooks and plugins are still checked at
 * boot (their errors carry the same `configuration` code).
 */
import { loadAgentsConfig } from '../config/agents-config.loader.js';
import { redisProblem } from '../config/environment/module-settings.js';
import { UsageError } from './cli-options.js';

/** The config loads (schema, references, secret scan); throws `AgentsConfigError` naming file, line and key. */
export async function checkConfig(file: string): Promise<void> {
  await loadAgentsConfig(file);
}

/** Queue mode needs a database every process shares (PostgreSQL) and a valid Redis URL. */
export function checkQueueSettings(database: string, redis: string): void {
  if (!/^postgres(ql)?:\/\//i.test(database)) {
    throw new UsageError('queue mode needs the shared PostgreSQL database of every server and worker: --database postgres://…');
  }
  // The URL comes from --redis or REDIS_URL: name both, never the URL (G7).
  const problem = redisProblem(redis);
  if (problem !== undefined) throw new UsageError(`REDIS_URL or --redis: ${problem}`);
}
