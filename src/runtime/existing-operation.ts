/** An operation that must exist: a command on an unknown id is an `UnknownOperationError`. */
import { UnknownOperationError } from './runtime-errors.js';
import type { RuntimeStore, StoredOperation } from './runtime-store.port.js';

export async function existingOperation(store: RuntimeStore, operationId: string): Promise<StoredOperation> {
  const operation = await store.getOperation(operationId);
  if (!operation) throw new UnknownOperationError(operationId);
  return operation;
}
