/**
 * SPEC K5: the text a model writes, on its way to whoever watches the operation (the read API's `events()`,
 * the SSE route over it, `agentctl run`, the console). Deltas are live only: nothing stores them, a watcher
 * that was not there misses them, and a lost one loses nothing — the committed message holds the whole text.
 * Local mode keeps them in the process (`local-operation-deltas.ts`); queue mode carries them from the
 * worker to every API process over Redis pub/sub (`queue/redis-operation-deltas.ts`).
 */
import type { Observable } from 'rxjs';

/** A piece of the answer of step `stepIndex`. */
export interface OperationDelta {
  stepIndex: number;
  text: string;
}

export interface OperationDeltas {
  /**
   * Hands a delta to the operation's watchers. Never waits, never throws: a watcher is never allowed to slow
   * the step (a slow one is cut by its own bounded buffer). Costs a lookup when nobody watches (K6).
   */
  publish(operationId: string, delta: OperationDelta): void;
  /** The operation's deltas from now on; hot, never completes by itself. */
  of(operationId: string): Observable<OperationDelta>;
}

export const OPERATION_DELTAS = Symbol('nest-agent-hooks:OperationDeltas');
