/** Errors the persistence room throws; each has a stable `code` callers (and HTTP mappers) can switch on. */

/** The stores' refusals are the runtime's error vocabulary (the HTTP API maps them without knowing the stores). */
export { OperationNotFoundError, StaleOperationError } from '../runtime/runtime-errors.js';

/** A `database` option that cannot be used. The message never repeats a URL: it may carry a password. */
export class DatabaseConfigError extends Error {
  override readonly name = 'DatabaseConfigError';
  readonly code = 'invalid_database';
}
