import { Controller, Get } from '@nestjs/common';
import { HookReadinessWatcher } from '../hooks/hook-readiness.watcher.js';

/** Liveness: the process answers and every hook is bound. */
@Controller()
export class HealthController {
  constructor(private readonly readiness: HookReadinessWatcher) {}

  @Get('healthz')
  async health(): Promise<{ status: 'ok' }> {
    await this.readiness.waitUntilReady();
    return { status: 'ok' };
  }
}
