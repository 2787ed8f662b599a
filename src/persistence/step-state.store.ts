/**
 * What a step begins with — the operation and its conversation — without reloading what this process
 * just committed. Every commit of this process hands its result to `committed`, which moves the
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
 * Nor when the step's lease was just taken by this process (`leased`, queue mode: every step takes one):
 * the lease's UPDATE is the probe — it compares the operation's version, status and message counter with
 * the cached state (`knownState`) as they stood when the lease was taken, and the lease was held since; it
 * returns the row only when they differ (`leasedAsCached` otherwise). Then — the step before ran elsewhere —
 * that row stands in for the operation's read, and on PostgreSQL the same statement returns the conversation
 * too (used when it is the one at the row's counter); elsewhere only that is read. Of the conversation only
 * what follows the cached one, if any: messages are append-only with contiguous seqs, so a stale cached
 * conversation is still its beginning (the steps of one operation move between workers in queue mode,
 * and parsing the whole conversation again at every move costs with its length).
 *
 * A completed operation's terminal sequence begins from the row its transition returned and the cached
 * conversation, when that is the conversation it completed with (`completed`, `takeCompleted`): neither
 * changes after the transition (G5). Kept only until the sequence takes it.
 *
 * Bounded: a completed or paused operation is forgotten, and at most `CACHED_OPERATIONS` are kept (the
 * least recently used goes first). Plain SQL throughout: these are the statements of every step.
 */
import { qualifiedTable } from './dialect.js';
import { EntityColumns } from './entity-columns.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
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

/** The operation as a lease this process just took found it (`OperationLeaseStore.acquire`). */
interface LeasedRow {
  operation: OperationRecord;
  messageSeq: number;
  leaseOwner: string;
  /** The conversation as far as this process had it (a stale cached state): only what follows is read. */
  prefix?: Conversation;
}

/** The first messages of a conversation, in `seq` order, up to `messageSeq` (its last one's). */
interface Conversation {
  messageSeq: number;
  messages: MessageRecord[];
  characters: number;
}

/** A completed operation as its transition returned it, and its conversation when the cache had exactly that one. */
export interface CompletedState {
  operation: OperationRecord;
  messages?: MessageRecord[];
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
  /** Rows of leases just taken with nothing cached, until the step under the lease reads them (bounded like the cache). */
  private readonly leasedRows = new Map<string, LeasedRow>();
  /** Operations this process just completed, until their terminal sequence takes them (bounded like the cache). */
  private readonly completedStates = new Map<string, CompletedState>();
  /** Characters of every cached conversation. */
  private characters = 0;
  private sql: Statements | undefined;
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
    const leased = this.leasedRows.get(operationId);
    if (leased) this.leasedRows.delete(operationId);
    if (!cached && leased && leaseOwner !== undefined && leased.leaseOwner === leaseOwner) return this.loadMessages(operationId, leased);
    if (cached && leaseOwner !== undefined && cached.leaseOwner === leaseOwner) {
      this.keep(operationId, cached);
      return { operation: { ...cached.operation }, messages: [...cached.messages] };
    }
    if (cached) {
      const [row] = await this.rows(this.statements().probe, [operationId]);
      if (!row) {
        this.forget(operationId);
        return null;
      }
      if (Number(row['version']) === cached.operation.version && Number(row['message_seq']) === cached.messageSeq) {
        this.keep(operationId, cached); // most recently used
        return { operation: { ...cached.operation }, messages: [...cached.messages] };
      }
    }
    // What is cached as it stands now (a commit of this process may move the entry on while this reads).
    return this.load(operationId, cached && { messageSeq: cached.messageSeq, messages: cached.messages.slice(), characters: cached.characters });
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

  /**
   * This process just took `leaseOwner`'s lease on the operation, and its UPDATE returned `operation` with
   * the message counter at `messageSeq`: the cached state, when it is that one, is the state under this lease
   * (what the probe would have found); otherwise the row waits for the step's read, which then reads only
   * the conversation — only what follows the cached (stale) one, if any. `messages`: what the lease's own
   * statement read of the conversation, those after `messagesAfter`.
   */
  leased(operation: OperationRecord, messageSeq: number, leaseOwner: string, messages?: readonly MessageRecord[], messagesAfter = 0): void {
    const cached = this.cached.get(operation.id);
    if (cached && cached.operation.version === operation.version && cached.messageSeq === messageSeq) {
      cached.leaseOwner = leaseOwner;
      return;
    }
    // No longer in the cache once forgotten, so nothing appends to its messages any more.
    const prefix = cached ? { messageSeq: cached.messageSeq, messages: cached.messages, characters: cached.characters } : undefined;
    this.forget(operation.id);
    // The conversation read by the lease's own statement, when with what is cached it is the one at `messageSeq`: cached as is.
    const known = messagesAfter === 0 ? EMPTY : prefix?.messageSeq === messagesAfter ? prefix : undefined;
    const conversation = messages && known ? extended(known, messages, messageSeq) : undefined;
    if (conversation) {
      this.keep(operation.id, { operation, ...conversation, leaseOwner });
      return;
    }
    this.leasedRows.set(operation.id, { operation, messageSeq, leaseOwner, ...(prefix ? { prefix } : {}) });
    // A lease whose step never read (a stale job let go at once) must not keep its row for ever.
    if (this.leasedRows.size > CACHED_OPERATIONS) this.leasedRows.delete(this.leasedRows.keys().next().value!);
  }

  /**
   * This process completed the operation and its transition returned `operation` (message counter at
   * `messageSeq`): no step follows, so the step state goes; what the terminal sequence begins from is kept —
   * with the cached conversation when no message was appended since it was cached.
   */
  completed(operation: OperationRecord, messageSeq: number): void {
    const cached = this.cached.get(operation.id);
    this.forget(operation.id);
    this.completedStates.set(operation.id, { operation, ...(cached && cached.messageSeq === messageSeq ? { messages: cached.messages } : {}) });
    // A transition whose terminal sequence never asks (its process lost the database meanwhile) must not stay.
    if (this.completedStates.size > CACHED_OPERATIONS) this.completedStates.delete(this.completedStates.keys().next().value!);
  }

  /** What `completed` kept of the operation, once: the caller's own copy. */
  takeCompleted(operationId: string): CompletedState | undefined {
    const kept = this.completedStates.get(operationId);
    if (!kept) return undefined;
    this.completedStates.delete(operationId);
    return { operation: { ...kept.operation }, ...(kept.messages ? { messages: [...kept.messages] } : {}) };
  }

  /** The cached state's version, status and message counter (what a lease's UPDATE compares with), if any. */
  knownState(operationId: string): { version: number; status: OperationRecord['status']; messageSeq: number } | undefined {
    const cached = this.cached.get(operationId);
    return cached ? { version: cached.operation.version, status: cached.operation.status, messageSeq: cached.messageSeq } : undefined;
  }

  /**
   * `leased` when the lease's UPDATE found the operation in the cached state (`knownState`) and so returned
   * no row: the cached operation with the new lease, or undefined when the cache no longer has that state.
   */
  leasedAsCached(
    operationId: string,
    state: { version: number; status: OperationRecord['status']; messageSeq: number; until: string },
    leaseOwner: string,
  ): OperationRecord | undefined {
    const cached = this.cached.get(operationId);
    if (!cached || cached.operation.version !== state.version || cached.operation.status !== state.status || cached.messageSeq !== state.messageSeq) {
      this.forget(operationId);
      return undefined;
    }
    cached.leaseOwner = leaseOwner;
    cached.operation = { ...cached.operation, leaseOwner, leaseUntil: state.until };
    return { ...cached.operation };
  }

  /** The operation as this process last committed it, if that was at `version` (a commit's `base`). */
  known(operationId: string, version: number): OperationRecord | undefined {
    const cached = this.cached.get(operationId);
    return cached?.operation.version === version ? cached.operation : undefined;
  }

  /** A new operation, as this process created it (with `leaseOwner`: under this process's lease, `NewOperation.lease`). */
  created(operation: OperationRecord, messages: readonly MessageRecord[], leaseOwner?: string): void {
    this.keep(operation.id, { operation, messageSeq: messages.at(-1)?.seq ?? 0, messages: messages.map(asStored), characters: charactersOf(messages), ...(leaseOwner !== undefined ? { leaseOwner } : {}) });
  }

  forget(operationId: string): void {
    this.leasedRows.delete(operationId);
    const cached = this.cached.get(operationId);
    if (!cached) return;
    this.characters -= cached.characters;
    this.cached.delete(operationId);
  }

  /** The operation and its conversation read now; of the conversation only what follows `prefix` (what this process has of it). */
  private async load(operationId: string, prefix?: Conversation): Promise<StepState | null> {
    const columns = this.entityColumns();
    const [row] = await this.rows(this.statements().operation, [operationId]);
    if (!row) {
      this.forget(operationId);
      return null;
    }
    const entity = columns.operations.hydrate(row);
    const operation = toOperationRecord(entity);
    const { messages, conversation } = await this.conversation(operationId, prefix, entity.messageSeq);
    // Kept only when the two reads agree (no message appended in between).
    if (conversation) this.keep(operationId, { operation, ...conversation });
    else this.forget(operationId);
    return { operation: { ...operation }, messages };
  }

  /**
   * The operation from the lease's own row, the conversation read now: kept (under that lease) when the
   * two agree — no message appended since the lease was taken — else both are read again.
   */
  private async loadMessages(operationId: string, leased: LeasedRow): Promise<StepState | null> {
    const { messages, conversation } = await this.conversation(operationId, leased.prefix, leased.messageSeq);
    if (!conversation) return this.load(operationId);
    this.keep(operationId, { operation: leased.operation, ...conversation, leaseOwner: leased.leaseOwner });
    return { operation: { ...leased.operation }, messages };
  }

  /**
   * The conversation as committed now — what follows `prefix` read and appended to it (messages are
   * append-only, their seqs contiguous), all of it without one — and, when it ends at `messageSeq`, the
   * same to keep. A tail that does not continue `prefix` (never expected) is read again in full.
   */
  private async conversation(operationId: string, prefix: Conversation | undefined, messageSeq: number): Promise<{ messages: MessageRecord[]; conversation?: Conversation }> {
    const columns = this.entityColumns();
    const statements = this.statements();
    const rows = prefix ? await this.rows(statements.messagesAfter, [operationId, prefix.messageSeq]) : await this.rows(statements.messages, [operationId]);
    const read = rows.map((raw) => toMessageRecord(columns.messages.hydrate(raw)));
    const start = prefix ?? EMPTY;
    if (read.length > 0 && read[0]!.seq !== start.messageSeq + 1) return this.conversation(operationId, undefined, messageSeq);
    const messages = start.messages.length > 0 ? [...start.messages, ...read] : read;
    const last = read.at(-1)?.seq ?? start.messageSeq;
    if (last !== messageSeq) return { messages };
    return { messages, conversation: { messageSeq, messages: [...messages], characters: start.characters + charactersOf(read) } };
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

  private async rows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    const result = await this.db.query(sql, params);
    return result.records as Record<string, unknown>[];
  }

  private statements(): Statements {
    if (!this.sql) {
      const source = this.db.dataSource;
      const param = '$1';
      const operations = qualifiedTable(source, 'agent_hooks_operations');
      const columns = this.entityColumns();
      const messages = `SELECT ${columns.messages.names} FROM ${qualifiedTable(source, 'agent_hooks_messages')} WHERE "operation_id" = ${param}`;
      this.sql = {
        probe: `SELECT "version", "message_seq" FROM ${operations} WHERE "id" = ${param}`,
        operation: `SELECT ${columns.operations.names} FROM ${operations} WHERE "id" = ${param}`,
        messages: `${messages} ORDER BY "seq" ASC`,
        messagesAfter: `${messages} AND "seq" > $2 ORDER BY "seq" ASC`,
      };
    }
    return this.sql;
  }

  private entityColumns(): { operations: EntityColumns<OperationEntity>; messages: EntityColumns<MessageEntity> } {
    const source = this.db.dataSource;
    return (this.columns ??= { operations: new EntityColumns(source, OperationEntity), messages: new EntityColumns(source, MessageEntity) });
  }
}

/** Nothing of a conversation yet (a lease's statement without a known state reads all of it). */
const EMPTY: Conversation = Object.freeze({ messageSeq: 0, messages: [], characters: 0 });

interface Statements {
  probe: string;
  operation: string;
  messages: string;
  messagesAfter: string;
}

/**
 * `known` and then `tail` (the messages after it, in `seq` order), when that is the whole conversation up to
 * `messageSeq`: `tail` continues `known` without a gap and ends there. Else undefined.
 */
function extended(known: Conversation, tail: readonly MessageRecord[], messageSeq: number): Conversation | undefined {
  if (tail.length !== messageSeq - known.messageSeq) return undefined;
  if (tail.length > 0 && (tail[0]!.seq !== known.messageSeq + 1 || tail.at(-1)!.seq !== messageSeq)) return undefined;
  return { messageSeq, messages: [...known.messages, ...tail], characters: known.characters + charactersOf(tail) };
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
