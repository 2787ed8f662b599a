/**
 * Appends messages inside a caller's transaction. `seq` continues the operation's conversation; the caller
 * must hold the operation row (`lockOperationRow`, or a conditional UPDATE of it earlier in the same
 * transaction) so two writers never pick the same `seq` — and if one ever did, the unique
 * (operation_id, seq) index refuses the second.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { MessageEntity } from './entities/message.entity.js';
import { toMessageRecord } from './record-mappers.js';
import type { MessageRecord, NewMessage } from './records.js';
import { insertValues } from './entity-values.js';

export async function nextMessageSeq(manager: EntityManager, operationId: string): Promise<number> {
  const row = await manager
    .createQueryBuilder(MessageEntity, 'message')
    .select('MAX(message.seq)', 'max')
    .where('message.operationId = :operationId', { operationId })
    .getRawOne<{ max: number | string | null }>();
  return Number(row?.max ?? 0) + 1;
}

export async function insertMessages(
  manager: EntityManager,
  operationId: string,
  messages: readonly NewMessage[],
  createdAt: string,
): Promise<MessageRecord[]> {
  if (messages.length === 0) return [];
  const first = await nextMessageSeq(manager, operationId);
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

function toMessageRow(operationId: string, seq: number, message: NewMessage, createdAt: string): MessageEntity {
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
