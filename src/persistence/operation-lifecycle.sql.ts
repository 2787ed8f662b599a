/**
 * An operation's creation and its terminal transition. On PostgreSQL one statement each, NOTIFY included
 * (DESIGN §5): a single statement is its own transaction, so its rows and its `pg_notify` commit together or
 * not at all — what BEGIN … COMMIT gave, in one round trip instead of four or five. Data-modifying CTEs
 * always run to completion; the terminal one notifies only when its guarded UPDATE matched. On SQLite the
 * creation's INSERTs (run in one transaction) and the guarded UPDATE; its events stay in-process.
 */
import type { ObjectLiteral } from 'typeorm';
import type { TerminalReason } from '../hooks/agent-events.js';
import type { EntityColumns } from './entity-columns.js';
import type { MessageEntity } from './entities/message.entity.js';
import type { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import type { OperationEntity } from './entities/operation.entity.js';
import { insertRowsSql } from './step-commit.sql.js';
import { SqlParams, type SqlStatement } from './sql-session.js';
import type { SqlDialect } from './dialect.js';

export interface LifecycleTables {
  operations: string;
  callerHooks: string;
  messages: string;
}

export interface LifecycleColumns {
  operations: EntityColumns<OperationEntity>;
  callerHooks: EntityColumns<OperationCallerHookEntity>;
  messages: EntityColumns<MessageEntity>;
}

export interface LifecycleNotify {
  channel: string;
  payload: string;
}

type CreatedRows = { operation: OperationEntity; hooks: readonly OperationCallerHookEntity[]; messages: readonly MessageEntity[] };

/** The statements of a creation (all or none): the operation's row, its caller hooks, its prompt; on PostgreSQL with the NOTIFY, as one. */
export function createStatements(dialect: SqlDialect, tables: LifecycleTables, columns: LifecycleColumns, rows: CreatedRows, notify: LifecycleNotify): SqlStatement[] {
  if (dialect === 'postgres') {
    const { sql, params } = createSql(tables, columns, rows, notify);
    return [{ sql, params }];
  }
  const insert = <T extends ObjectLiteral>(table: string, entityColumns: EntityColumns<T>, values: readonly T[]): SqlStatement => {
    const params = new SqlParams(false);
    return { sql: insertRowsSql(params, table, entityColumns, values), params: params.values };
  };
  return [
    insert(tables.operations, columns.operations, [rows.operation]),
    ...(rows.hooks.length > 0 ? [insert(tables.callerHooks, columns.callerHooks, rows.hooks)] : []),
    insert(tables.messages, columns.messages, rows.messages),
  ];
}

/** The terminal transition's one statement, returning the completed row (none when it was completed already); on PostgreSQL with its NOTIFY. */
export function completeStatement(dialect: SqlDialect, table: string, values: TerminalValues, notify: LifecycleNotify): SqlStatement {
  if (dialect === 'postgres') return completeSql(table, values, notify);
  const params = new SqlParams(false);
  return { sql: completeUpdateSql(params, table, values), params: params.values };
}

/** The operation's row, its caller hooks and its prompt, then `pg_notify(channel, payload)`. */
export function createSql(
  tables: LifecycleTables,
  columns: LifecycleColumns,
  rows: { operation: OperationEntity; hooks: readonly OperationCallerHookEntity[]; messages: readonly MessageEntity[] },
  notify: { channel: string; payload: string },
): { sql: string; params: unknown[] } {
  const params = new SqlParams(true);
  const parts = [`WITH op AS (${insertRowsSql(params, tables.operations, columns.operations, [rows.operation])})`];
  if (rows.hooks.length > 0) parts.push(`, hooks AS (${insertRowsSql(params, tables.callerHooks, columns.callerHooks, rows.hooks)})`);
  parts.push(`, msg AS (${insertRowsSql(params, tables.messages, columns.messages, rows.messages)})`);
  parts.push(` SELECT pg_notify(${params.bind(notify.channel, 'text')}, ${params.bind(notify.payload, 'text')})`);
  return { sql: parts.join(''), params: params.values };
}

export interface TerminalValues {
  operationId: string;
  reason: TerminalReason;
  errorType: string | null;
  errorMessage: string | null;
  errorSummary: string | null;
  leaseOwner: string;
  leaseUntil: string;
  now: string;
  /** Only while this lease holds the operation. */
  fencedBy?: string;
  /** `TerminalHold.nothingOwed`: without a parent, the terminal sequence is recorded done and nothing is held. */
  nothingOwed?: boolean;
}

/**
 * The terminal transition (`status <> 'completed'`, version + 1) returning the completed row, or no row
 * when it was completed already: on SQLite the statement itself (atomic on its own).
 */
export function completeUpdateSql(params: SqlParams, table: string, values: TerminalValues): string {
  const b = (value: unknown) => params.bind(value);
  // Nothing owed: held only when a parent still waits for the sub-agent's answer (the bridge may fail).
  const held = (value: string) => (values.nothingOwed ? `CASE WHEN "parent_operation_id" IS NULL THEN NULL ELSE ${params.bind(value, 'varchar')} END` : b(value));
  const sets = [
    `"status" = 'completed'`,
    `"reason" = ${b(values.reason)}`,
    `"error_type" = ${b(values.errorType)}`,
    `"error_message" = ${b(values.errorMessage)}`,
    `"error_summary" = ${b(values.errorSummary)}`,
    `"lease_owner" = ${held(values.leaseOwner)}`,
    `"lease_until" = ${held(values.leaseUntil)}`,
    `"completed_at" = ${b(values.now)}`,
    `"updated_at" = ${b(values.now)}`,
    '"version" = "version" + 1',
  ];
  if (values.nothingOwed) sets.push(`"terminal_hooks_at" = CASE WHEN "parent_operation_id" IS NULL THEN ${params.bind(values.now, 'varchar')} END`);
  let where = `"id" = ${b(values.operationId)} AND "status" <> 'completed'`;
  if (values.fencedBy !== undefined) where += ` AND "lease_owner" = ${b(values.fencedBy)}`;
  return `UPDATE ${table} SET ${sets.join(', ')} WHERE ${where} RETURNING *`;
}

/**
 * PostgreSQL: the terminal transition, notifying only when it happened: one row then — the completed
 * operation's row (`op.*`), so that whoever runs the terminal sequence next need not read it.
 */
export function completeSql(table: string, values: TerminalValues, notify: { channel: string; payload: string }): { sql: string; params: unknown[] } {
  const params = new SqlParams(true);
  const update = completeUpdateSql(params, table, values);
  const sql = `WITH op AS (${update}) SELECT op.*, pg_notify(${params.bind(notify.channel, 'text')}, ${params.bind(notify.payload, 'text')}) AS "notified" FROM op`;
  return { sql, params: params.values };
}
