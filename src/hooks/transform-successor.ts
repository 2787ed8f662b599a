/**
 * What a transform hook's returned context means for the chain (E2, K2): the next hook and the caller see
 * the successor, which keeps what a transform may not change — an `on_run_start` context's `runId`, a model
 * request's offer (G1), a model answer's tool calls. A broken rule throws: a hook failure under its policy.
 */
import { RunContext } from './contexts.js';
import type { HookPoint } from './hook-points.js';
import { ModelRequestContext, ModelResponseContext } from './model-contexts.js';

export function transformSuccessor<T>(point: HookPoint, before: T, after: T): T {
  switch (point) {
    case 'on_run_start':
      return runContextSuccessor(before as unknown as RunContext, after as unknown as RunContext) as unknown as T;
    case 'before_model_request':
      return (before as unknown as ModelRequestContext).successor(after as unknown as ModelRequestContext) as unknown as T;
    case 'after_model_response':
      return (before as unknown as ModelResponseContext).successor(after as unknown as ModelResponseContext) as unknown as T;
    default:
      return after;
  }
}

/** `on_run_start` may replace the RunContext, never its `runId` (DESIGN §3). */
function runContextSuccessor(prev: RunContext, next: RunContext): RunContext {
  if (next.runId === prev.runId) return next;
  return prev.replace({
    userId: next.userId,
    organizationId: next.organizationId,
    authContext: next.authContext,
    metadata: { ...next.metadata },
  });
}
