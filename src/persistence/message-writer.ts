/**
 * Appends messages inside a caller's transaction. `seq` continues the operation's conversation from the
 * counter on its row (`message_seq`, the seq of its last message), bumped by the same statement that
 * reserves the new seqs — an UPDATE, so on PostgreSQL it also holds the row and two writers never pick the
 * same `seq` (on SQLite the store gate serializes them); if one ever did, the unique (operation_id, seq)
 * index refuses the second. Every writer of messages goes through here or through the step commit, which
 * bumps the counter in its own UPDATE (step-commit.sql.ts): the counter always names the last message.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { qualifiedTable } from './dialect.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationNotFoundError } from './persistence-errors.js';
import { toMessageRecord } from './record-mappers.js';
import type { MessageRecord, NewMessage } from './records.js';
import { insertValues } from './entity-values.js';

/** Reserves `count` seqs for `operationId`: the first of them. */
async function reserveSeqs(manager: EntityManager, operationId: string, count: number): Promise<number> {
  const postgres = manager.connection.options.type === 'postgres';
  const operations = qualifiedTable(manager.connection, 'agent_hooks_operations');
  if (!manager.queryRunner) throw new TypeError('messages are appended inside a transaction');
  const result = await manager.queryRunner.query(
    `UPDATE ${operations} SET "message_seq" = "message_seq" + ${postgres ? '$1' : '?'} WHERE "id" = ${postgres ? '$2' : '?'} RETURNING "message_seq"`,
    [count, operationId],
    true,
  );
  const row = (result.records as { message_seq: number }[])[0];
  if (!row) throw new OperationNotFoundError(operationId);
  return Number(row.message_seq) - count + 1;
}

export async function insertMessages(
  manager: EntityManager,
  operationId: string,
  messages: readonly NewMessage[],
  createdAt: string,
): Promise<MessageRecord[]> {
  if (messages.length === 0) return [];
  return insertMessagesFrom(manager, operationId, await reserveSeqs(manager, operationId, messages.length), messages, createdAt);
}

/** Inserts `messages` as seqs `first`, `first + 1`, …, already reserved on the operation's row. */
async function insertMessagesFrom(
  manager: EntityManager,
  operationId: string,
  first: number,
  messages: readonly NewMessage[],
  createdAt: string,
): Promise<MessageRecord[]> {
  if (messages.length === 0) return [];
  const rows = messages.map((message, index) => toMessageRow(operationId, first + index, message, createdAt));
  await manager
    .createQueryBuilder()
    .insert()
    .into(MessageEntity)
    .values(rows.map((row) => insertValues<MessageEntity>(row)))
    .updateEntity(false)
    .execute();
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
