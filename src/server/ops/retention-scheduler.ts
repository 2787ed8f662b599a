/**
 * The optional periodic purge of `agentctl serve --purge-older-than 30d [--purge-every 1h]`: once at start,
 * then every interval, completed operations older than the age go with all their rows (`RetentionStore`;
 * running and waiting ones are never touched). Off unless started. One purge at a time; the timer never
 * keeps the process alive, and shutdown waits for a purge in progress before the database closes.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { DATABASE_MAINTENANCE, type DatabaseMaintenance, type PurgeCounts } from '../../runtime/database-maintenance.port.js';

export interface RetentionSchedule {
  olderThanMs: number;
  everyMs: number;
  /** Default the system clock (tests move it). */
  clock?: () => Date;
}

@Injectable()
export class RetentionScheduler implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Retention');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PurgeCounts | undefined> | undefined;
  private schedule: RetentionSchedule | undefined;
  private stopped = false;

  constructor(@Inject(DATABASE_MAINTENANCE) private readonly database: DatabaseMaintenance) {}

  /** Starts purging now and every `everyMs`. Calling it again replaces the schedule. */
  start(schedule: RetentionSchedule): void {
    if (this.stopped) return;
    this.schedule = schedule;
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.purgeNow(), schedule.everyMs);
    this.timer.unref();
    void this.purgeNow();
  }

  /** One purge with the current schedule; undefined when none is set, one is already running, or it failed (logged). */
  purgeNow(): Promise<PurgeCounts | undefined> {
    if (!this.schedule || this.stopped) return Promise.resolve(undefined);
    if (this.running) return this.running;
    const schedule = this.schedule;
    this.running = this.purge(schedule).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async purge(schedule: RetentionSchedule): Promise<PurgeCounts | undefined> {
    const cutoff = new Date((schedule.clock?.() ?? new Date()).getTime() - schedule.olderThanMs);
    try {
      const counts = await this.database.purgeCompletedBefore(cutoff);
      if (counts.operations > 0) {
        this.logger.log(
          `purged ${counts.operations} operations completed before ${cutoff.toISOString()} (${counts.messages} messages, ${counts.hookOutcomes} timeline rows, ` +
            `${counts.callerHooks} caller hooks, ${counts.interventions} interventions, ${counts.placeholders} placeholders)`,
        );
      }
      return counts;
    } catch (error) {
      this.logger.error(`purge failed (${error instanceof Error ? error.name : typeof error})`);
      return undefined;
    }
  }
}
