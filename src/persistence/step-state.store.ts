/**
 * What a step begins with — the operation and its conversation — without reloading what this process
 * just committed (issue 14). Every commit of this process hands its result to `committed`, which moves the
 * operation's cached state on with it; a step then asks `read`, which checks with one indexed read of two
 * columns that nobody changed the operation since: its `version` (every state change bumps it) and its
 * `message_seq` (every message appended bumps it, including those written without a version bump, like a
 * deferred result published while the step runs). Both as cached: the cached state is what a full read
 * would return. Otherwise — another process or writer moved it, or nothing is cached — it is read in full
 * and cached again. Leases never bump either, and a step does not use the lease fields of the operation.
 *
 * Not even that read when the step runs under the lease this process's last commit of the operation was
 * fenced by: lease owner ids are unique per acquisition (`LeaseHolder.hold`), so the lease was held since
 * and no other step ran. What else could write meanwhile is caught without it — a cancel (completion)
 * bumps the version, so the step's first commit is refused; deferred results and decisions only arrive
 * for a step that paused, and a pause forgets the operation (`forget`).
 *
 * Bounded: a completed or paused operation is forgotten, and at most `CACHED_OPERATIONS` are kept (the
 * least recently used goes first). Plain SQL throughout: these are the statements of every step.
 */
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { plainQuery } from './plain-query.js';
import { toMessageRecord, toOperationRecord } from './record-mappers.js';
import type { MessageRecord, OperationRecord } from './records.js';
import type { StoreDatabase } from './store-database.js';

/** Operations whose state is kept between steps (each with its conversation). */
export const CACHED_OPERATIONS = 256;
/**
 * And at most this many characters of conversation in all (message contents and tool-call arguments,
 * about 2 bytes each): long conversations with large tool results must not make a worker's memory grow
 * with the operations it happened to run. An operation over the budget on its own is not kept.
 */
export const CACHED_CHARACTERS = 16 * 1024 * 1024;

export interface StepState {
  operation: OperationRecord;
  /** The conversation in `seq` order; the caller's own copy. */
  messages: MessageRecord[];
}

interface Cached {
  operation: OperationRecord;
  messageSeq: number;
  messages: MessageRecord[];
  /** The lease the last commit was fenced by (none: checked before use). */
  leaseOwner?: string;
  /** Characters of `messages` counted against `CACHED_CHARACTERS`. */
  characters: number;
}

/** What a commit of this process returned (`StepCommitStore.commit`). */
export interface CommittedState {
  operation: OperationRecord;
  messages: readonly MessageRecord[];
  messageSeq: number;
}

export class StepStateStore {
  private readonly db: StoreDatabase;
  private readonly cached = new Map<string, Cached>();
  /** Characters of every cached conversation. */
  private characters = 0;
  private sql: { probe: string; operation: string; messages: string } | undefined;
  private columns: { operations: EntityColumns<OperationEntity>; messages: EntityColumns<MessageEntity> } | undefined;

  constructor(
    database: StoreDatabase,
    private readonly limits: { characters: number } = { characters: CACHED_CHARACTERS },
  ) {
    this.db = database;
  }

  /** How many operations are kept now, and their characters (for tests of the bounds). */
  get size(): { operations: number; characters: number } {
    return { operations: this.cached.size, characters: this.characters };
  }

  /** The operation and its conversation as committed now; null when there is no such operation. `leaseOwner`: the step's lease. */
  async read(operationId: string, leaseOwner?: string): Promise<StepState | null> {
    const cached = this.cached.get(operationId);
    if (cached && leaseOwner !== undefined && cached.leaseOwner === leaseOwner) {
      this.keep(operationId, cached);
      return { operation: { ...cached.operation }, messages: [...cached.messages] };
    }
    if (cached) {
      const [row] = await this.rows(this.statements().probe, operationId);
      if (!row) {
        this.forget(operationId);
        return null;
      }
      if (Number(row['version']) === cached.operation.version && Number(row['message_seq']) === cached.messageSeq) {
        this.keep(operationId, cached); // most recently used
        return { operation: { ...cached.operation }, messages: [...cached.messages] };
      }
    }
    return this.load(operationId);
  }

  /** A commit of this process: the cached state moves on with it when it was the state committed on, else it goes. */
  committed(operationId: string, expectedVersion: number, result: CommittedState, leaseOwner?: string): void {
    const cached = this.cached.get(operationId);
    if (!cached || cached.operation.version !== expectedVersion || cached.messageSeq !== result.messageSeq - result.messages.length) {
      this.forget(operationId);
      return;
    }
    cached.operation = { ...result.operation };
    cached.messageSeq = result.messageSeq;
    if (leaseOwner !== undefined) cached.leaseOwner = leaseOwner;
    else delete cached.leaseOwner;
    const added = charactersOf(result.messages);
    for (const message of result.messages) cached.messages.push(asStored(message));
    cached.characters += added;
    this.characters += added;
    this.trim();
  }

  /** The operation as this process last committed it, if that was at `version` (a commit's `base`). */
  known(operationId: string, version: number): OperationRecord | undefined {
    const cached = this.cached.get(operationId);
    return cached?.operation.version === version ? cached.operation : undefined;
  }

  /** A new operation, as this process created it. */
  created(operation: OperationRecord, messages: readonly MessageRecord[]): void {
    this.keep(operation.id, { operation, messageSeq: messages.at(-1)?.seq ?? 0, messages: messages.map(asStored), characters: charactersOf(messages) });
  }

  forget(operationId: string): void {
    const cached = this.cached.get(operationId);
    if (!cached) return;
    this.characters -= cached.characters;
    this.cached.delete(operationId);
  }

  private async load(operationId: string): Promise<StepState | null> {
    const { operation: operationSql, messages: messagesSql } = this.statements();
    const columns = this.entityColumns();
    const [row] = await this.rows(operationSql, operationId);
    if (!row) {
      this.forget(operationId);
      return null;
    }
    const entity = columns.operations.hydrate(row);
    const messages = (await this.rows(messagesSql, operationId)).map((raw) => toMessageRecord(columns.messages.hydrate(raw)));
    const operation = toOperationRecord(entity);
    // Kept only when the two reads agree (no message appended in between).
    if ((messages.at(-1)?.seq ?? 0) === entity.messageSeq) this.keep(operationId, { operation, messageSeq: entity.messageSeq, messages: [...messages], characters: charactersOf(messages) });
    else this.forget(operationId);
    return { operation: { ...operation }, messages };
  }

  /** Kept as the most recently used; the least recently used go while over either bound. */
  private keep(operationId: string, state: Cached): void {
    this.forget(operationId);
    this.cached.set(operationId, state);
    this.characters += state.characters;
    this.trim();
  }

  private trim(): void {
    while (this.cached.size > CACHED_OPERATIONS || (this.characters > this.limits.characters && this.cached.size > 0)) this.forget(this.cached.keys().next().value!);
  }

  private async rows(sql: string, operationId: string): Promise<Record<string, unknown>[]> {
    const result = await this.db.run((manager) => plainQuery(manager, sql, [operationId]));
    return result.records as Record<string, unknown>[];
  }

  private statements(): { probe: string; operation: string; messages: string } {
    if (!this.sql) {
      const source = this.db.dataSource;
      const param = this.db.dialect === 'postgres' ? '$1' : '?';
      const operations = qualifiedTable(source, 'agent_hooks_operations');
      const columns = this.entityColumns();
      this.sql = {
        probe: `SELECT "version", "message_seq" FROM ${operations} WHERE "id" = ${param}`,
        operation: `SELECT ${columns.operations.names} FROM ${operations} WHERE "id" = ${param}`,
        messages: `SELECT ${columns.messages.names} FROM ${qualifiedTable(source, 'agent_hooks_messages')} WHERE "operation_id" = ${param} ORDER BY "seq" ASC`,
      };
    }
    return this.sql;
  }

  private entityColumns(): { operations: EntityColumns<OperationEntity>; messages: EntityColumns<MessageEntity> } {
    const source = this.db.dataSource;
    return (this.columns ??= { operations: new EntityColumns(source, OperationEntity), messages: new EntityColumns(source, MessageEntity) });
  }
}

/**
 * A message as a later read returns it: its JSON columns as stored (a copy through JSON, so the cache shares
 * no object with whoever built the message, and holds what a reload would have parsed).
 */
function asStored(message: MessageRecord): MessageRecord {
  const stored = { ...message };
  if (message.toolCalls !== undefined) stored.toolCalls = JSON.parse(JSON.stringify(message.toolCalls)) as MessageRecord['toolCalls'];
  if (message.state !== undefined) stored.state = JSON.parse(JSON.stringify(message.state)) as MessageRecord['state'];
  return stored;
}

/** What a conversation costs the cache: its contents and tool-call arguments, in characters. */
function charactersOf(messages: readonly MessageRecord[]): number {
  let characters = 0;
  for (const message of messages) {
    characters += message.content.length;
    for (const call of message.toolCalls ?? []) characters += call.identifier.length + call.apiName.length + JSON.stringify(call.args ?? {}).length;
  }
  return characters;
}
