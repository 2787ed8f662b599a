/**
 * Appends messages inside a caller's session transaction (one body on both drivers). `seq` continues the operation's conversation from the
 * counter on its row (`message_seq`, the seq of its last message), bumped by the same statement that
 * reserves the new seqs — an UPDATE, so on PostgreSQL it also holds the row and two writers never pick the
 * same `seq` (on SQLite the session's gate serializes them); if one ever did, the unique (operation_id, seq)
 * index refuses the second. Every writer of messages goes through here or through the step commit, which
 * bumps the counter in its own UPDATE (step-commit.sql.ts): the counter always names the last message.
 */
import { randomUUID } from 'node:crypto';
import { MessageEntity } from './entities/message.entity.js';
import { OperationNotFoundError } from './persistence-errors.js';
import { toMessageRecord } from './record-mappers.js';
import type { MessageRecord, NewMessage } from './records.js';
import { SqlParams, type SqlExecutor } from './sql-session.js';
import type { StoreDatabase } from './store-database.js';

/** Reserves `count` seqs for `operationId`: the first of them. */
async function reserveSeqs(db: StoreDatabase, tx: SqlExecutor, operationId: string, count: number): Promise<number> {
  const { records } = await tx.query(
    `UPDATE ${db.table('agent_hooks_operations')} SET "message_seq" = "message_seq" + $1 WHERE "id" = $2 RETURNING "message_seq"`,
    [count, operationId],
  );
  const row = records[0];
  if (!row) throw new OperationNotFoundError(operationId);
  return Number(row['message_seq']) - count + 1;
}

/** Appends `messages` inside the caller's session transaction (`tx`), after the operation's last message. */
export async function insertMessages(
  db: StoreDatabase,
  tx: SqlExecutor,
  operationId: string,
  messages: readonly NewMessage[],
  createdAt: string,
): Promise<MessageRecord[]> {
  if (messages.length === 0) return [];
  const first = await reserveSeqs(db, tx, operationId, messages.length);
  const rows = messages.map((message, index) => toMessageRow(operationId, first + index, message, createdAt));
  const params = new SqlParams(tx.dialect === 'postgres');
  await tx.query(db.columns(MessageEntity).insert(rows, params), params.values);
  return rows.map(toMessageRecord);
}

export function toMessageRow(operationId: string, seq: number, message: NewMessage, createdAt: string): MessageEntity {
  return {
    id: message.id ?? randomUUID(),
    operationId,
    seq,
    role: message.role,
    content: message.content,
    toolCalls: message.toolCalls ?? null,
    toolCallId: message.toolCallId ?? null,
    identifier: message.identifier ?? null,
    apiName: message.apiName ?? null,
    error: message.error ?? null,
    state: message.state ?? null,
    success: message.success ?? null,
    createdAt,
  };
}
