/**
 * What the runtime needs from persistence (the `persistence/` room implements it). Every step reads the
 * operation from here and commits its effects here, so any process can run the next step (DESIGN §4).
 */
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import type { TerminalReason, UsageTotals } from '../hooks/agent-events.js';
import type { ModelToolCall } from './models/chat-model.js';

export type OperationStatus = 'running' | 'waiting' | 'completed';

/** The run context as stored: never a secret (DESIGN §5). */
export interface StoredRunContext {
  userId?: string;
  organizationId?: string;
  scopes?: string[];
  metadata?: Record<string, unknown>;
}

export interface StoredOperation {
  id: string;
  parentOperationId?: string;
  agentId: string;
  ownerId?: string;
  status: OperationStatus;
  reason?: TerminalReason;
  stepIndex: number;
  runContext: StoredRunContext;
  usage: UsageTotals;
  errorType?: string;
  errorMessage?: string;
  version: number;
}

/** A caller hook as persisted: the webhook part only, templates kept (W3, L2). */
export interface StoredCallerHook {
  position: number;
  hookId: string;
  type: string;
  matcher?: string;
  webhook: AgentHookWebhook;
}

export interface StoredMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  identifier?: string;
  apiName?: string;
  error?: 'hook_denied' | 'hook_control_error';
  state?: Record<string, unknown>;
}

export type NewMessage = Omit<StoredMessage, 'id' | 'seq'>;

export interface NewOperation {
  id: string;
  agentId: string;
  ownerId?: string;
  parentOperationId?: string;
  prompt: string;
  runContext: StoredRunContext;
  callerHooks: StoredCallerHook[];
  idempotencyKey?: string;
}

export interface RuntimeStore {
  /** Operation, caller hooks and the user's prompt, in one transaction; an idempotency key returns the existing one. */
  createOperation(input: NewOperation): Promise<StoredOperation>;
  getOperation(id: string): Promise<StoredOperation | null>;
  callerHooks(operationId: string): Promise<StoredCallerHook[]>;
  messages(operationId: string): Promise<StoredMessage[]>;
  /** Appends a message and applies `patch` to the operation in one transaction, if its version still matches. */
  commit(
    operationId: string,
    expectedVersion: number,
    message: NewMessage | undefined,
    patch: Partial<Pick<StoredOperation, 'stepIndex' | 'usage' | 'status' | 'runContext'>>,
  ): Promise<{ operation: StoredOperation; message?: StoredMessage }>;
  /** The terminal transition, exactly once: false when the operation was already completed. */
  complete(operationId: string, reason: TerminalReason, error?: { type: string; message: string }): Promise<boolean>;
}
export const RUNTIME_STORE = Symbol('nest-agent-hooks:RuntimeStore');
