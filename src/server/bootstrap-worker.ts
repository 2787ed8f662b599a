/**
 * Boots a queue worker (DESIGN §4, §9 `agentctl worker`): opens (and migrates) the shared database, starts
 * taking step jobs, prints `worker ready` as one log line. SIGTERM/SIGINT stop taking jobs, hand running
 * steps back to the queue, run `on_engine_stop`, close the database, and exit 0.
 */
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { assertNoSettingProblems } from '../config/environment/environment-setting.js';
import { moduleSettingProblems } from '../config/environment/module-settings.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';
import { WorkerModule } from './worker.module.js';

export async function bootstrapWorker(options: AgentHooksModuleOptions): Promise<INestApplicationContext> {
  // Before Nest or the database: a malformed setting stops the start (exit 2, G7).
  assertNoSettingProblems(moduleSettingProblems(options));
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(options), { logger: ['log', 'warn', 'error'] });
  await app.get(RuntimeDatabase).stores();
  await app.init();
  new Logger('Worker').log(`worker ready (pid ${process.pid})`);
  return app;
}

export function closeWorkerOnSignals(app: INestApplicationContext): void {
  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    new Logger('Worker').log(`${signal} received; handing running steps back and shutting down`);
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
