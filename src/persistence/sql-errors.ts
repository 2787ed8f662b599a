/** Reads driver errors portably: TypeORM wraps them in `QueryFailedError` with the driver's as `driverError`. */

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
