/**
 * The published conversation: read in `seq` order (what `GET …/messages` and the model see), appended
 * without touching the operation's state. A message that comes with a state change (a tool result and
 * its step's progress) goes through `StepCommitStore` instead, so both land together.
 */
import { MessageEntity } from './entities/message.entity.js';
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { insertMessages } from './message-writer.js';
import { lockOperationRow } from './operation-row-lock.js';
import { OperationNotFoundError } from './persistence-errors.js';
import { toMessageRecord } from './record-mappers.js';
import type { MessageRecord, NewMessage } from './records.js';
import type { StoreDatabase } from './store-database.js';
import { nowIso, type StoreOptions } from './store-options.js';

export class MessageStore {
  private readonly db: StoreDatabase;
  private columns: EntityColumns<MessageEntity> | undefined;
  private listSql: string | undefined;

  constructor(
    database: StoreDatabase,
    private readonly options: StoreOptions = {},
  ) {
    this.db = database;
  }

  /** Plain SQL: read by whoever builds a result, and by a step whose state was not kept. */
  async list(operationId: string): Promise<MessageRecord[]> {
    const source = this.db.dataSource;
    const columns = (this.columns ??= new EntityColumns(source, MessageEntity));
    const sql = (this.listSql ??= `SELECT ${columns.names} FROM ${qualifiedTable(source, 'agent_hooks_messages')} WHERE "operation_id" = $1 ORDER BY "seq" ASC`);
    const result = await this.db.query(sql, [operationId]);
    return result.records.map((raw) => toMessageRecord(columns.hydrate(raw)));
  }

  /** Appends `messages` in order, all or none; throws `OperationNotFoundError` for an unknown operation. */
  async append(operationId: string, messages: readonly NewMessage[]): Promise<MessageRecord[]> {
    return this.db.sessionTransaction(async (tx, events) => {
      if (!(await lockOperationRow(this.db, tx, operationId))) throw new OperationNotFoundError(operationId);
      const appended = await insertMessages(this.db, tx, operationId, messages, nowIso(this.options));
      for (let index = 0; index < appended.length; index++) events.publish({ operationId, kind: 'message' });
      return appended;
    });
  }
}
