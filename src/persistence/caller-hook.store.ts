/** Reads an operation's caller hooks, restored in registration order on every step (W3, L3). They are
 *  written with the operation (`OperationStore.create`) and never change afterwards. */
import { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import { toCallerHookRecord } from './record-mappers.js';
import type { CallerHookRecord } from './records.js';
import type { StoreDatabase } from './store-database.js';

export class CallerHookStore {
  private readonly db: StoreDatabase;

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  async list(operationId: string): Promise<CallerHookRecord[]> {
    const rows = await this.db.run((manager) =>
      manager.find(OperationCallerHookEntity, { where: { operationId }, order: { position: 'ASC' } }),
    );
    return rows.map(toCallerHookRecord);
  }
}
