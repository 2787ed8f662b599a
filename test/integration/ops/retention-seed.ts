/**
 * Seeds operations for the retention tests through the real stores, with an injected clock for the
 * created and completed times: one row in every child table (a caller hook, the prompt and an answer,
 * a timeline row, an intervention, a placeholder).
 */
import type { StoreDatabase } from '../../../src/persistence/store-database.js';
import { CallerHookStore } from '../../../src/persistence/caller-hook.store.js';
import { HookOutcomeStore } from '../../../src/persistence/hook-outcome.store.js';
import { InterventionStore } from '../../../src/persistence/intervention.store.js';
import { MessageStore } from '../../../src/persistence/message.store.js';
import { OperationStore } from '../../../src/persistence/operation.store.js';
import type { OperationRecord } from '../../../src/persistence/records.js';
import { StepCommitStore } from '../../../src/persistence/step-commit.store.js';
import { ToolResultPlaceholderStore } from '../../../src/persistence/tool-result-placeholder.store.js';

export interface SeedOptions {
  createdAt: Date;
  /** Completed (reason done) at this time; running when absent (unless `waiting`). */
  completedAt?: Date;
  /** Left waiting (for an approval) instead of running. */
  waiting?: boolean;
}

export async function seedOperation(database: StoreDatabase, options: SeedOptions): Promise<string> {
  let now = options.createdAt;
  const clock = () => now;
  const operations = new OperationStore(database, { clock });
  const { operation } = await operations.create({
    agentId: 'assistant',
    prompt: 'go',
    callerHooks: [{ hookId: 'h', type: 'afterStep', webhook: { url: 'https://hooks.example.com/h' } }],
  });
  await new MessageStore(database, { clock }).append(operation.id, [{ role: 'assistant', content: 'answer' }]);
  await new HookOutcomeStore(database).append([
    { operationId: operation.id, at: now.toISOString(), point: 'afterStep', hookId: 'h', source: 'caller', outcome: 'ok', latencyMs: 1 },
  ]);
  await new InterventionStore(database, { clock }).add(operation.id, [
    { toolCallId: 'c1', stepIndex: 0, callIndex: 0, identifier: 'clock', apiName: 'now', args: {}, kind: 'approval' },
  ]);
  await new ToolResultPlaceholderStore(database, { clock }).createEmpty(operation.id, 'd1');
  if (options.waiting) {
    const current = (await operations.get(operation.id))!;
    await new StepCommitStore(database, { clock }).commit({ operationId: operation.id, expectedVersion: current.version, patch: { status: 'waiting' } });
  }
  if (options.completedAt) {
    now = options.completedAt;
    await operations.complete(operation.id, 'done');
  }
  return operation.id;
}

export interface OperationRows {
  operation: OperationRecord | null;
  messages: number;
  callerHooks: number;
  timeline: number;
  intervention: boolean;
  placeholders: number;
}

export const NO_ROWS: OperationRows = { operation: null, messages: 0, callerHooks: 0, timeline: 0, intervention: false, placeholders: 0 };

export async function rowsOf(database: StoreDatabase, operationId: string): Promise<OperationRows> {
  return {
    operation: await new OperationStore(database).get(operationId),
    messages: (await new MessageStore(database).list(operationId)).length,
    callerHooks: (await new CallerHookStore(database).list(operationId)).length,
    timeline: (await new HookOutcomeStore(database).listByOperation(operationId)).length,
    intervention: (await new InterventionStore(database).get(operationId, 'c1')) !== null,
    placeholders: (await new ToolResultPlaceholderStore(database).list(operationId)).length,
  };
}
