/** Reads driver errors portably: TypeORM wraps them in `QueryFailedError` with the driver's as `driverError`. */
import { QueryFailedError } from 'typeorm';

interface DriverError {
  code?: unknown;
  driverError?: { code?: unknown };
}

/** A unique index or primary key refused the row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY). */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, driverError } = error as DriverError;
  const driverCode = driverError?.code ?? code;
  return (
    driverCode === '23505' || driverCode === 'SQLITE_CONSTRAINT_UNIQUE' || driverCode === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * A driver error as TypeORM's query runners hand it on (`QueryFailedError`, the driver's as `driverError`;
 * `isUniqueViolation` reads either), so callers see one error type whichever path ran the statement — and
 * a real `Error` of this realm: the native addon keeps the error class of whoever loaded it first. The
 * parameters are left out (they hold message content).
 */
export function asQueryFailed(sql: string, error: unknown): unknown {
  if (typeof error !== 'object' || error === null || error instanceof QueryFailedError) return error;
  return new QueryFailedError(sql, undefined, error as Error);
}
