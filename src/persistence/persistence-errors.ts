/** Errors the persistence room throws; each has a stable `code` callers (and HTTP mappers) can switch on. */

/** Another writer changed the operation first (optimistic versioning), or it is completed, or the lease moved on. */
export class StaleOperationError extends Error {
  override readonly name = 'StaleOperationError';
  readonly code = 'stale_operation';

  constructor(
    readonly operationId: string,
    readonly expectedVersion: number,
  ) {
    super(`operation ${operationId} is no longer at version ${expectedVersion} (changed by another writer, completed, or its lease is held by another worker)`);
  }
}

export class OperationNotFoundError extends Error {
  override readonly name = 'OperationNotFoundError';
  readonly code = 'operation_not_found';

  constructor(readonly operationId: string) {
    super(`operation ${operationId} does not exist`);
  }
}

/** A `database` option that cannot be used. The message never repeats a URL: it may carry a password. */
export class DatabaseConfigError extends Error {
  override readonly name = 'DatabaseConfigError';
  readonly code = 'invalid_database';
}
