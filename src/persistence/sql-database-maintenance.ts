/** The runtime's `DatabaseMaintenance` port over the runtime's database (`RuntimeDatabase.stores()`). */
import { Injectable } from '@nestjs/common';
import type { DatabaseMaintenance, PurgeCounts } from '../runtime/database-maintenance.port.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class SqlDatabaseMaintenance implements DatabaseMaintenance {
  constructor(private readonly database: RuntimeDatabase) {}

  async ping(): Promise<void> {
    await (await this.database.stores()).database.query('SELECT 1', []);
  }

  async purgeCompletedBefore(cutoff: Date): Promise<PurgeCounts> {
    return (await this.database.stores()).retention.purgeCompletedBefore(cutoff);
  }
}
