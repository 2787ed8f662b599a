import { Controller, Get } from '@nestjs/common';
import { HookReadinessWatcher } from '../hooks/hook-readiness.watcher.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';

/** Liveness: the process answers and every hook is bound. */
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: HookReadinessWatcher,
    private readonly database: RuntimeDatabase,
  ) {}

  @Get('healthz')
  async health(): Promise<{ status: 'ok' }> {
    await this.readiness.waitUntilReady();
    return { status: 'ok' };
  }

  /** Readiness: hooks bound and the database answering. */
  @Get('readyz')
  async ready(): Promise<{ status: 'ok' }> {
    await this.readiness.waitUntilReady();
    const { dataSource } = await this.database.stores();
    await dataSource.query('SELECT 1');
    return { status: 'ok' };
  }
}
