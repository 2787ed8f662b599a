/**
 * The statements of a step commit as plain parameterized SQL: this is the hot path, and TypeORM's query
 * builder and entity manager do more work per call than the statement itself. Each returns what it changed, so
 * nothing is read back:
 * - the operation's conditional UPDATE … RETURNING * — version + 1, the message counter moved past the
 *   step's messages (their seqs), guarded by the expected version, `status <> 'completed'` and, in queue
 *   mode, the lease owner;
 * - the messages' INSERT;
 * - the commit's timeline rows (SQLite: `HookOutcomeStore.sqliteStatements`);
 * - on PostgreSQL, all of it and the commit's `pg_notify` as ONE statement (data-modifying CTEs): a single
 *   statement is its own transaction, so the update, the messages and the NOTIFY commit together or not at
 *   all, and NOTIFY is delivered only on commit — the same guarantees as BEGIN … COMMIT, in one round trip.
 *   The INSERT and the NOTIFY read the UPDATE's row: when the guard fails there is no row, so nothing is
 *   inserted or notified.
 */
import type { ObjectLiteral } from 'typeorm';
import type { OperationEvent } from '../runtime/operation-events.port.js';
import { SqlParams, type SqlStatement } from './sql-session.js';
import { EVENTS_PER_NOTIFY } from './store-database.js';
import type { StepCommit } from './step-commit.store.js';
import { toStoredRunContext } from './run-context-snapshot.js';
import type { EntityColumns } from './entity-columns.js';
import type { MessageEntity } from './entities/message.entity.js';

export interface CommitTables {
  operations: string;
  messages: string;
}

/**
 * What the UPDATE returns when the caller knows the row it commits on (`StepCommit.base`): only what the
 * commit or another writer may have moved without a version bump; the rest is `base` with the patch.
 */
export const CHANGED_COLUMNS = '"id", "version", "message_seq", "status", "lease_owner", "lease_until"';

/** The operation's guarded UPDATE … RETURNING the row after the commit (`*`, or `CHANGED_COLUMNS` given a base). */
export function updateOperationSql(params: SqlParams, table: string, input: StepCommit, now: string): string {
  const { patch = {} } = input;
  const sets = [`"updated_at" = ${params.bind(now)}`];
  if (patch.stepIndex !== undefined) sets.push(`"step_index" = ${params.bind(patch.stepIndex)}`);
  if (patch.status !== undefined) sets.push(`"status" = ${params.bind(patch.status)}`);
  // simple-json, as TypeORM stores it.
  if (patch.runContext !== undefined) sets.push(`"run_context" = ${params.bind(JSON.stringify(toStoredRunContext(patch.runContext)))}`);
  if (patch.compaction !== undefined) {
    sets.push(`"compaction_group_id" = ${params.bind(patch.compaction.groupId)}`);
    sets.push(`"compaction_summary" = ${params.bind(patch.compaction.summary)}`);
    sets.push(`"compacted_through_seq" = ${params.bind(patch.compaction.throughSeq)}`);
  }
  if (patch.usage !== undefined) {
    sets.push(`"input_tokens" = ${params.bind(patch.usage.inputTokens)}`);
    sets.push(`"output_tokens" = ${params.bind(patch.usage.outputTokens)}`);
    sets.push(`"cost_usd" = ${params.bind(patch.usage.costUsd)}`);
  }
  // The lease goes with the commit that fences it (the WHERE below still requires it held).
  if (patch.releaseLease === true) sets.push('"lease_owner" = NULL', '"lease_until" = NULL');
  sets.push('"version" = "version" + 1');
  const count = input.messages?.length ?? 0;
  if (count > 0) sets.push(`"message_seq" = "message_seq" + ${params.bind(count)}`);
  let where = `"id" = ${params.bind(input.operationId)} AND "version" = ${params.bind(input.expectedVersion)} AND "status" <> 'completed'`;
  if (input.leaseOwner !== undefined) where += ` AND "lease_owner" = ${params.bind(input.leaseOwner)}`;
  return `UPDATE ${table} SET ${sets.join(', ')} WHERE ${where} RETURNING ${input.base?.version === input.expectedVersion ? CHANGED_COLUMNS : '*'}`;
}

/** A multi-row INSERT of `rows` (messages: their seqs already reserved). */
export function insertRowsSql<T extends ObjectLiteral>(params: SqlParams, table: string, columns: EntityColumns<T>, rows: readonly T[]): string {
  const tuples = rows.map((row) => `(${columns.values(row).map((value) => params.bind(value)).join(', ')})`);
  return `INSERT INTO ${table} (${columns.names}) VALUES ${tuples.join(', ')}`;
}

/**
 * SQLite: the messages' INSERT after the UPDATE, in its transaction: each `seq` taken from the counter the
 * UPDATE moved (its last rows), as PostgreSQL's statement takes it from the updated row.
 */
function insertCommittedMessagesSql(params: SqlParams, operationId: string, plan: StepCommitPlan): string {
  const { rows, messageColumns, tables } = plan;
  const id = params.bind(operationId);
  const tuples = rows.map((row, index) => {
    const values = messageColumns.values(row);
    const expressions = messageColumns.typesAndNames.map(({ name }, column) =>
      name === 'seq' ? `(SELECT "message_seq" FROM ${tables.operations} WHERE "id" = ${id}) - ${rows.length - 1 - index}` : params.bind(values[column]),
    );
    return `(${expressions.join(', ')})`;
  });
  return `INSERT INTO ${tables.messages} (${messageColumns.names}) VALUES ${tuples.join(', ')}`;
}

/** PostgreSQL's cast of a parameter in a SELECT list (where no column gives it a type). */
function castOf(type: string): string {
  if (type === 'boolean') return 'boolean';
  if (type === 'integer') return 'integer';
  if (type === 'double precision') return 'float8';
  return 'text'; // varchar, text, simple-json: text assigns to each
}

export interface OneStatementCommit {
  tables: CommitTables;
  messageColumns: EntityColumns<MessageEntity>;
  /** The message rows, their `seq` a placeholder: taken from the updated row (the counter after the update). */
  rows: readonly MessageEntity[];
  channel: string;
  origin: string;
  /** How many `message` events its own `pg_notify` carries (default: one per row). */
  notifiedMessages?: number;
}

export interface StepCommitPlan extends OneStatementCommit {
  /** SQLite: the timeline rows written in the commit's transaction (`StepCommit.timeline`). */
  timeline: readonly SqlStatement[];
  /** A `pg_notify` payload of this handle (`StoreDatabase.notifyPayload`). */
  payload(events: readonly OperationEvent[]): string;
}

/**
 * The statements of a step commit, the guarded UPDATE first (a guarded `SqlSession.batch`: when it matches no row
 * nothing else is written). PostgreSQL: one statement, NOTIFY included — plus one `pg_notify` per further
 * `EVENTS_PER_NOTIFY` message events of a commit too big for one payload (their version is the expected one
 * + 1: the guard held). SQLite: the UPDATE, the messages' INSERT and the timeline rows.
 */
export function stepCommitStatements(dialect: 'sqlite' | 'postgres', input: StepCommit, now: string, plan: StepCommitPlan): SqlStatement[] {
  const { rows } = plan;
  if (dialect === 'postgres') {
    const params = new SqlParams(true);
    const notifiedMessages = Math.min(rows.length, EVENTS_PER_NOTIFY - 1);
    const statements: SqlStatement[] = [{ sql: oneStatementCommitSql(params, input, now, { ...plan, notifiedMessages }), params: params.values }];
    const version = input.expectedVersion + 1;
    for (let start = notifiedMessages; start < rows.length; start += EVENTS_PER_NOTIFY) {
      const count = Math.min(EVENTS_PER_NOTIFY, rows.length - start);
      const events: OperationEvent[] = Array.from({ length: count }, () => ({ operationId: input.operationId, kind: 'message', version }));
      statements.push({ sql: 'SELECT pg_notify($1, $2)', params: [plan.channel, plan.payload(events)] });
    }
    return statements;
  }
  const update = new SqlParams(false);
  const statements: SqlStatement[] = [{ sql: updateOperationSql(update, plan.tables.operations, input, now), params: update.values }];
  if (rows.length > 0) {
    const insert = new SqlParams(false);
    statements.push({ sql: insertCommittedMessagesSql(insert, input.operationId, plan), params: insert.values });
  }
  statements.push(...plan.timeline);
  return statements;
}

/**
 * PostgreSQL: the whole commit as one statement — UPDATE … RETURNING, the messages inserted from the
 * updated row (seq = the new counter − how many follow), and `pg_notify` of the commit's events (the
 * operation's status and version after it, one `message` event per message), built from that row.
 */
export function oneStatementCommitSql(params: SqlParams, input: StepCommit, now: string, commit: OneStatementCommit): string {
  const update = updateOperationSql(params, commit.tables.operations, input, now);
  const parts = [`WITH op AS (${update})`];
  const { rows, messageColumns } = commit;
  if (rows.length > 0) {
    const selects = rows.map((row, index) => {
      const values = messageColumns.values(row);
      const expressions = messageColumns.typesAndNames.map(({ name, type }, column) =>
        name === 'seq' ? `op."message_seq" - ${rows.length - 1 - index}` : params.bind(values[column], castOf(type)),
      );
      return `SELECT ${expressions.join(', ')} FROM op`;
    });
    parts.push(`, ins AS (INSERT INTO ${commit.tables.messages} (${messageColumns.names}) ${selects.join(' UNION ALL ')})`);
  }
  const events = [`json_build_object('operationId', op."id", 'kind', 'status', 'status', op."status", 'version', op."version")`];
  const notified = commit.notifiedMessages ?? rows.length;
  for (let index = 0; index < notified; index++) events.push(`json_build_object('operationId', op."id", 'kind', 'message', 'version', op."version")`);
  const payload = `json_build_object('origin', ${params.bind(commit.origin, 'text')}, 'events', json_build_array(${events.join(', ')}))::text`;
  parts.push(` SELECT op.*, pg_notify(${params.bind(commit.channel, 'text')}, ${payload}) AS "notified" FROM op`);
  return parts.join('');
}
