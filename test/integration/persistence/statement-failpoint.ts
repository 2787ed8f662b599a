/**
 * The test-only failpoint of the stores' SQL: a wrapper around the production `SqlSession`
 * (`SQL_SESSION_WRAPPER`). A test's `afterStatement` looks at each statement of a unit (a batch, a
 * transaction, a lone statement) in order; where it throws, the wrapper runs the production unit up to and
 * including that statement followed by a statement that fails in the database (`FAILING`), through the
 * production session — its own BEGIN … ROLLBACK on better-sqlite3, its transaction on PostgreSQL (a unit of
 * one statement becomes two, so it runs in one) — and then throws the test's error. What a crash right
 * after that statement, before the commit, would leave: a commit path whose writes are not one unit leaves
 * the earlier ones behind, and the atomicity suites see them.
 */
import type { SqlExecutor, SqlSession, SqlSessionWrapper, SqlStatement } from '../../../src/persistence/sql-session.js';

/** Fails on both drivers: PostgreSQL at execution, SQLite at prepare. */
export const FAILING: SqlStatement = { sql: 'SELECT "injected" FROM "agent_hooks_injected_failure"', params: [] };

export type AfterStatement = (statement: SqlStatement, unit: readonly SqlStatement[]) => void | Promise<void>;

export class StatementFailpoint {
  /** Set by a test; cleared by `clear()`. */
  afterStatement: AfterStatement | undefined;
  /** How many units were failed in the database (the injected statement rejected as expected). */
  injected = 0;

  clear(): void {
    this.afterStatement = undefined;
  }

  readonly wrap: SqlSessionWrapper = (inner: SqlSession): SqlSession => {
    const batch = async (statements: readonly SqlStatement[], options: { guarded?: boolean } = {}) => {
      const failure = await this.firstFailure(statements);
      if (!failure) return inner.batch(statements, options);
      let result: Record<string, unknown> | undefined;
      try {
        result = await inner.batch([...statements.slice(0, failure.index + 1), FAILING], options);
      } catch {
        this.injected++;
        throw failure.error;
      }
      return result; // a guard that matched no row: the unit stopped before the failure point
    };
    const observed = (tx: SqlExecutor): SqlExecutor => {
      const unit: SqlStatement[] = [];
      return {
        dialect: tx.dialect,
        query: async (sql, params) => {
          const result = await tx.query(sql, params);
          unit.push({ sql, params });
          try {
            await this.afterStatement?.({ sql, params }, unit);
          } catch (error) {
            await tx.query(FAILING.sql, FAILING.params).catch(() => void this.injected++);
            throw error;
          }
          return result;
        },
      };
    };
    return {
      dialect: inner.dialect,
      query: async (sql, params) => {
        if (!this.afterStatement) return inner.query(sql, params);
        const failure = await this.firstFailure([{ sql, params }]);
        if (!failure) return inner.query(sql, params);
        await batch([{ sql, params }]);
        throw failure.error; // not reached: batch threw
      },
      batch,
      transaction: (work) => inner.transaction((tx) => work(observed(tx))),
      exclusive: (work) => inner.exclusive(work),
    };
  };

  private async firstFailure(statements: readonly SqlStatement[]): Promise<{ index: number; error: unknown } | undefined> {
    if (!this.afterStatement) return undefined;
    for (let index = 0; index < statements.length; index++) {
      try {
        await this.afterStatement(statements[index]!, statements.slice(0, index + 1));
      } catch (error) {
        return { index, error };
      }
    }
    return undefined;
  }
}

/** The statement that updates an operation's row (a step commit's guard, alone or in PostgreSQL's one statement). */
export function updatesOperation(statement: SqlStatement, operationId?: string): boolean {
  return /UPDATE \S*"agent_hooks_operations"/.test(statement.sql) && (operationId === undefined || statement.params.includes(operationId));
}

/** An UPDATE that sets an operation's status (a pause, a resume, a terminal transition); not a step commit's guarded UPDATE. */
export function updatesOperationStatus(statement: SqlStatement): boolean {
  return /UPDATE \S*"agent_hooks_operations" SET .*"status" = \$/.test(statement.sql);
}

/** The statement that inserts a message with `role` (on PostgreSQL: the step commit's one statement). */
export function insertsMessage(statement: SqlStatement, role: 'user' | 'assistant' | 'tool'): boolean {
  return /INSERT INTO \S*"agent_hooks_messages"/.test(statement.sql) && statement.params.includes(role);
}

/** The operation id and expected version of the step commit among `unit` (its guarded UPDATE's `"id" = $i AND "version" = $j`). */
export function stepCommitOf(unit: readonly SqlStatement[]): { operationId: string; expectedVersion: number } | undefined {
  for (const statement of unit) {
    const match = /"id" = \$(\d+) AND "version" = \$(\d+)/.exec(statement.sql);
    if (match) return { operationId: statement.params[Number(match[1]) - 1] as string, expectedVersion: Number(statement.params[Number(match[2]) - 1]) };
  }
  return undefined;
}
