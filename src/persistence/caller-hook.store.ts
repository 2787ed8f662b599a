/** Reads an operation's caller hooks, restored in registration order on every step (W3, L3). They are
 *  written with the operation (`OperationStore.create`) and never change afterwards, so "this operation has
 *  none" is remembered (bounded) once known — from a read, the creation, or a lease's statement — instead of
 *  asked every step. Plain SQL: a worker asks once for every operation whose step it runs, and TypeORM's
 *  `find` does more work than the read itself. */
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import { toCallerHookRecord } from './record-mappers.js';
import type { CallerHookRecord } from './records.js';
import type { StoreDatabase } from './store-database.js';

/** Operations remembered to have no caller hooks. */
const REMEMBERED_WITHOUT_HOOKS = 10_000;

export class CallerHookStore {
  private readonly db: StoreDatabase;
  private statement: { sql: string; columns: EntityColumns<OperationCallerHookEntity> } | undefined;
  /** Insertion-ordered, so the oldest goes first once full. */
  private readonly withoutHooks = new Set<string>();

  constructor(database: StoreDatabase) {
    this.db = database;
  }

  async list(operationId: string): Promise<CallerHookRecord[]> {
    if (this.withoutHooks.has(operationId)) return [];
    const { sql, columns } = this.listStatement();
    const { records } = await this.db.query(sql, [operationId]);
    if (records.length === 0) this.rememberNone(operationId);
    return records.map((raw) => toCallerHookRecord(columns.hydrate(raw)));
  }

  /** The operation has no caller hooks (it was created without, or a statement said so): `list` reads nothing for it. */
  rememberNone(operationId: string): void {
    this.withoutHooks.add(operationId);
    if (this.withoutHooks.size > REMEMBERED_WITHOUT_HOOKS) this.withoutHooks.delete(this.withoutHooks.values().next().value!);
  }

  /** Built on first use: the DataSource's metadata exists once it is initialized. */
  private listStatement(): { sql: string; columns: EntityColumns<OperationCallerHookEntity> } {
    if (!this.statement) {
      const source = this.db.dataSource;
      const columns = new EntityColumns(source, OperationCallerHookEntity);
      const table = qualifiedTable(source, 'agent_hooks_operation_hooks');
      this.statement = { sql: `SELECT ${columns.names} FROM ${table} WHERE "operation_id" = $1 ORDER BY "position" ASC`, columns };
    }
    return this.statement;
  }
}
