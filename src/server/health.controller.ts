import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { HookReadinessWatcher } from '../hooks/hook-readiness.watcher.js';
import { DATABASE_MAINTENANCE, type DatabaseMaintenance } from '../runtime/database-maintenance.port.js';
import { RedisReadiness } from './ops/redis-readiness.js';

/** Liveness: the process answers and every hook is bound. */
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: HookReadinessWatcher,
    @Inject(DATABASE_MAINTENANCE) private readonly database: DatabaseMaintenance,
    private readonly redis: RedisReadiness,
  ) {}

  @Get('healthz')
  async health(): Promise<{ status: 'ok' }> {
    await this.readiness.waitUntilReady();
    return { status: 'ok' };
  }

  /** Readiness: hooks bound, the database answering, and in queue mode Redis; else 503 naming which. */
  @Get('readyz')
  async ready(): Promise<{ status: 'ok' }> {
    await this.readiness.waitUntilReady();
    try {
      await this.database.ping();
    } catch (error) {
      throw new ServiceUnavailableException(`the database does not answer (${error instanceof Error ? error.name : typeof error})`);
    }
    try {
      await this.redis.check();
    } catch {
      throw new ServiceUnavailableException('redis does not answer');
    }
    return { status: 'ok' };
  }
}
