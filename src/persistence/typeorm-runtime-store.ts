/** The runtime's `RuntimeStore` port over the TypeORM stores. */
import { Injectable } from '@nestjs/common';
import type { TerminalReason } from '../hooks/agent-events.js';
import type { NewMessage, NewOperation, RuntimeStore, StoredCallerHook, StoredMessage, StoredOperation } from '../runtime/runtime-store.port.js';
import { RuntimeDatabase } from './runtime-database.js';

@Injectable()
export class TypeOrmRuntimeStore implements RuntimeStore {
  constructor(private readonly database: RuntimeDatabase) {}

  async createOperation(input: NewOperation): Promise<StoredOperation> {
    const { operations } = await this.database.stores();
    return (await operations.create(input)).operation;
  }

  async getOperation(id: string): Promise<StoredOperation | null> {
    return (await this.database.stores()).operations.get(id);
  }

  async callerHooks(operationId: string): Promise<StoredCallerHook[]> {
    return (await this.database.stores()).callerHooks.list(operationId);
  }

  async messages(operationId: string): Promise<StoredMessage[]> {
    return (await this.database.stores()).messages.list(operationId);
  }

  async commit(
    operationId: string,
    expectedVersion: number,
    message: NewMessage | undefined,
    patch: Partial<Pick<StoredOperation, 'stepIndex' | 'usage' | 'status' | 'runContext'>>,
  ): Promise<{ operation: StoredOperation; message?: StoredMessage }> {
    const { commits } = await this.database.stores();
    const status = patch.status === 'completed' ? undefined : patch.status;
    const result = await commits.commit({
      operationId,
      expectedVersion,
      messages: message ? [message] : [],
      patch: { ...patch, ...(status ? { status } : {}) } as never,
    });
    return { operation: result.operation, ...(result.messages[0] ? { message: result.messages[0] } : {}) };
  }

  async complete(operationId: string, reason: TerminalReason, error?: { type: string; message: string }): Promise<boolean> {
    return (await this.database.stores()).operations.complete(operationId, reason, error);
  }
}
