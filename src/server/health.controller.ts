import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HookReadinessWatcher } from '../hooks/hook-readiness.watcher.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';
import { RedisReadiness } from './ops/redis-readiness.js';

/** Liveness: the process answers and every hook is bound. */
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: HookReadinessWatcher,
    private readonly database: RuntimeDatabase,
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
      const { dataSource } = await this.database.stores();
      await dataSource.query('SELECT 1');
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
