/**
 * The public runtime API (DESIGN §6): `execAgent` and `run`, delegating to `OperationStart`
 * (operation-start.ts); `cancel`, `approve`, `reject` and `completeDeferred`, delegating to `HumanDecisions`
 * (human-decisions.ts); `result`, the `done` of any operation (`LiveOperations`); and the read API
 * (DESIGN §12): `get`, `list`, `messages`, `timeline`, `events`, `changes`, delegating to the reading
 * services (reading/), which build the HTTP API's own shapes.
 */
import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { AgentHook } from '../hooks/agent-hook.js';
import type { RunContext } from '../hooks/contexts.js';
import type { ExecAgentInput } from './exec-agent-input.js';
import { HumanDecisions } from './human-decisions.js';
import { LiveOperations } from './live-operations.js';
import type { OperationResult } from './operation-result.js';
import { OperationStart } from './operation-start.js';
import { parseListOptions } from './reading/list-options.js';
import { OperationChanges } from './reading/operation-changes.js';
import { OperationFollower } from './reading/operation-follower.js';
import { OperationReadService } from './reading/operation-read.service.js';
import type { MessageView, OperationListView, OperationView, TimelineItemView } from './reading/operation-views.js';
import type { OperationChange, OperationChangesOptions, OperationEvent, OperationListOptions, OperationMessagesOptions } from './reading/read-api.types.js';

export type { ExecAgentInput } from './exec-agent-input.js';
export type { OperationResult } from './operation-result.js';

/**
 * What a host gets from `app.get(AgentRuntime)` (DESIGN §6): a thin facade, so the runtime's internal entry
 * points (sub-agent start, queued steps, owed terminal sequences) are not part of the public surface.
 */
@Injectable()
export class AgentRuntime {
  constructor(
    private readonly starts: OperationStart,
    private readonly decisions: HumanDecisions,
    private readonly live: LiveOperations,
    private readonly reader: OperationReadService,
    private readonly follower: OperationFollower,
    private readonly changeFeed: OperationChanges,
  ) {}

  /** Starts an operation; `done` resolves with `{ status: 'completed', reason }` whatever the reason. */
  execAgent(input: ExecAgentInput): Promise<{ operationId: string; done: Promise<OperationResult> }> {
    return this.starts.execAgent(input);
  }

  /** Runs to the end; resolves on reason `done`, else rejects with the original error or a typed one. */
  run(message: string, options: { agentId: string; context?: RunContext; hooks?: AgentHook[] }): Promise<OperationResult> {
    return this.starts.run(message, options);
  }

  /** Cancels an operation; its terminal sequence runs once, reason `interrupted`. */
  cancel(operationId: string): Promise<void> {
    return this.decisions.cancel(operationId);
  }

  /**
   * Approves a pending call (SPEC A3). With `args` (F6) the call runs with them instead of the model's: they
   * are checked against the tool's JSON Schema first (`InvalidEditedArgumentsError`, nothing stored).
   */
  approve(operationId: string, toolCallId: string, options: { decidedBy?: string; args?: Record<string, unknown> } = {}): Promise<void> {
    return this.decisions.approve(operationId, toolCallId, options);
  }

  /** Rejects a pending call: stops the operation (default) or continues with the rejection as the result. */
  reject(operationId: string, toolCallId: string, options: { reason?: string; continue?: boolean; decidedBy?: string } = {}): Promise<void> {
    return this.decisions.reject(operationId, toolCallId, options);
  }

  /** Supplies a deferred call's result; the first final write wins (L4). */
  completeDeferred(operationId: string, toolCallId: string, result: { content: string; success?: boolean }): Promise<{ published: true }> {
    return this.decisions.completeDeferred(operationId, toolCallId, result);
  }

  /** Resolves with the operation's result once it is completed, here or in another process. */
  result(operationId: string): Promise<OperationResult> {
    return this.live.result(operationId);
  }

  /** The operation as `GET /v1/operations/:id` shows it, or null when there is none (DESIGN §12). */
  async get(operationId: string): Promise<OperationView | null> {
    this.reader.assertReady();
    return this.reader.get(operationId);
  }

  /**
   * One page of operations, newest first, as `GET /v1/operations` lists them: the owner's only when
   * `ownerId` is given. A bad option (a cursor this runtime did not issue) is an `InvalidListQueryError`.
   */
  async list(options: OperationListOptions = {}): Promise<OperationListView> {
    this.reader.assertReady();
    return this.reader.page(parseListOptions(options));
  }

  /**
   * The published messages (`GET …/messages`' `messages`), only those after `afterSeq` (a `message`
   * event's `seq`) when given; `UnknownOperationError` when there is no such operation.
   */
  async messages(operationId: string, options: OperationMessagesOptions = {}): Promise<MessageView[]> {
    this.reader.assertReady();
    const afterSeq = options.afterSeq ?? 0;
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError('afterSeq must be a non-negative integer');
    await this.reader.existing(operationId);
    return this.reader.messages(operationId, afterSeq);
  }

  /** The hook timeline (`GET …/timeline`'s `items`), oldest first; `UnknownOperationError` when there is no such operation. */
  async timeline(operationId: string): Promise<TimelineItemView[]> {
    this.reader.assertReady();
    await this.reader.existing(operationId);
    return this.reader.timeline(operationId);
  }

  /**
   * The operation's events as they happen (`GET …/events`): its messages and status changes, from the
   * start; completes after its `completed` status (or at the app's shutdown); errors with
   * `UnknownOperationError` when there is no such operation.
   */
  events(operationId: string): Observable<OperationEvent> {
    this.reader.assertReady();
    return this.follower.follow(operationId);
  }

  /**
   * Every change of the owner's operations (every owner's without `ownerId`), made in any process sharing
   * the database (`GET /v1/events`); never completes on its own (it does at the app's shutdown).
   */
  changes(options: OperationChangesOptions = {}): Observable<OperationChange> {
    this.reader.assertReady();
    return this.changeFeed.changes(options.ownerId !== undefined ? { ownerId: options.ownerId } : {});
  }
}
